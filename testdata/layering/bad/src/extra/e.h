// Fixture: a folder the order does not declare.
#include "util/a.h"
