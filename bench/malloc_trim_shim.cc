// An LD_PRELOAD experiment for the RSS rows of docs/benchmarks.md "Performance round": how much
// of a process's resident heap is memory malloc holds free (freed by the process, not returned to
// the kernel). A thread calls malloc_trim(0) every NVMLX_TRIM_EVERY_MS (default 2000) ms, which
// gives back the free pages of every arena, not only the top of the main heap. Run the daemon
// with and without it, same flags, and compare VmRSS; no code of the daemon changes.
// Build: g++ -O2 -shared -fPIC -o malloc_trim_shim.so bench/malloc_trim_shim.cc -lpthread
#include <malloc.h>
#include <pthread.h>
#include <unistd.h>

#include <cstdlib>

namespace {

void* TrimLoop(void*) {
  const char* every = std::getenv("NVMLX_TRIM_EVERY_MS");
  const long ms = every != nullptr ? std::atol(every) : 2000;
  for (;;) {
    usleep(static_cast<useconds_t>((ms > 0 ? ms : 2000) * 1000));
    malloc_trim(0);
  }
  return nullptr;
}

__attribute__((constructor)) void StartTrimLoop() {
  pthread_t t;
  if (pthread_create(&t, nullptr, TrimLoop, nullptr) == 0) pthread_detach(t);
}

}  // namespace
