// An LD_PRELOAD experiment for the RSS rows of docs/benchmarks.md "Performance round": how much of
// a process's RSS is pages of its binary and libraries touched once and never again. After
// DROP_AFTER_S seconds (default 10) a thread gives back (MADV_DONTNEED) every file-backed mapping
// that is not writable and holds no anonymous page (code, read-only data: what the page cache
// holds anyway), optionally only those whose path contains DROP_ONLY; what the process touches
// again comes back on its own. An experiment only: it does not guard against a library being
// unloaded meanwhile. Build: g++ -O2 -shared -fPIC -o drop_shim.so bench/drop_pages_shim.cc
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
namespace {
struct M { unsigned long lo, hi; std::string perms, name; long anon = -1; };
void* Loop(void*) {
  const char* e = std::getenv("DROP_AFTER_S");
  sleep(e ? atoi(e) : 10);
  std::vector<M> ms;
  FILE* f = fopen("/proc/self/smaps", "r");
  char line[1024];
  while (fgets(line, sizeof line, f)) {
    unsigned long lo, hi; char perms[8]; char name[512] = "";
    if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %511s", &lo, &hi, perms, name) >= 3 && strchr(line, '-') == line + strspn(line, "0123456789abcdef")) {
      ms.push_back({lo, hi, perms, name});
    } else if (!ms.empty() && strncmp(line, "Anonymous:", 10) == 0) {
      ms.back().anon = atol(line + 10);
    }
  }
  fclose(f);
  const char* only = std::getenv("DROP_ONLY");
  long dropped = 0;
  for (auto& m : ms) {
    if (m.name.empty() || m.name[0] != '/' || m.anon != 0 || m.perms[1] == 'w') continue;
    if (only && m.name.find(only) == std::string::npos) continue;
    if (madvise((void*)m.lo, m.hi - m.lo, MADV_DONTNEED) == 0) dropped += (m.hi - m.lo) / 1024;
  }
  fprintf(stderr, "drop_shim: dropped %ld KiB of mappings\n", dropped);
  return nullptr;
}
__attribute__((constructor)) void Start() { pthread_t t; if (!pthread_create(&t, nullptr, Loop, nullptr)) pthread_detach(t); }
}
