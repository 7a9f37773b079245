// Fixture: util above render: a violation and, with render/r.h, a cycle.
#include "render/r.h"
