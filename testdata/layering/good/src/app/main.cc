#include "serve/s.h"
#include "attribute/a.h"
