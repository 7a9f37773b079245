#include "util/mutex.h"

#include <execinfo.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace nvmlx::util {

void DieOnRecursiveLock(const Mutex* mu) {
  // No logger, no allocation beyond snprintf's stack buffer: the logger may itself be what holds
  // the lock, and the heap may be in any state. write(2) and backtrace_symbols_fd are safe here.
  char line[160];
  const int n = std::snprintf(line, sizeof(line),
                              "nvml-exporter: FATAL: a thread locked util::Mutex %p that it "
                              "already holds (self-deadlock); stack:\n",
                              static_cast<const void*>(mu));
  if (n > 0) (void)!::write(STDERR_FILENO, line, static_cast<size_t>(n));
  void* frames[64];
  const int depth = ::backtrace(frames, 64);
  ::backtrace_symbols_fd(frames, depth, STDERR_FILENO);
  std::abort();
}

}  // namespace nvmlx::util
