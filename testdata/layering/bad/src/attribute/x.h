// Fixture: the other half of the collect <-> attribute cycle.
#include "collect/c.h"
