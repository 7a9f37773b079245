// Fixture: a clean tree.
#pragma once
