#include "model/m.h"
