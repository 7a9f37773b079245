#include "render/r.h"
#include "s.h"
