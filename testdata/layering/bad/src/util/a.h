// Fixture: self-includes and a bare name next to the file are fine.
#include "util/b.h"
#include "b.h"
