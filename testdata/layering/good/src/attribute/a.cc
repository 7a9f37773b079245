#include "model/m.h"
#include "util/u.h"
