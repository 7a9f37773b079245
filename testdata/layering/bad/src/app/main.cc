// Fixture: app includes anything; a test fixture outside src/ is not checked.
#include "render/r.h"
#include "fake_kubelet.h"
