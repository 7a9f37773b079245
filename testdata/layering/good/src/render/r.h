#include "collect/c.h"
