// Fixture: a test may name field ids.
#include "collect/c.h"
#include "fields/field_ids.h"
