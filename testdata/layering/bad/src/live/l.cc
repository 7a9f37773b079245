// Fixture: only fields/ and tests may name DCGM field ids.
#include "fields/field_ids.h"
