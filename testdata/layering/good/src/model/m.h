#include "util/u.h"
