// Fixture: collect and attribute are peers.
#include "attribute/x.h"
#include "util/a.h"
