// Fixture: the field ids are fields/'s own.
#include "fields/field_ids.h"
