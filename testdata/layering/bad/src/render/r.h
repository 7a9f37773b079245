// Fixture: render may include util, must not include attribute.
#include "util/b.h"
#include "attribute/x.h"
