// Attributes resident memory: prints VmRSS before loading NVML, after dlopen + nvmlInit_v2, and
// after one read of every GPU's identity. Run where the real driver is (the H200 host) to see how
// much of the daemon's RSS is libnvidia-ml's own, and in bench/rss.sh as the baseline of the
// daemon's RSS on simulated GPUs.
// Usage: nvml_init_rss [libnvidia-ml.so.1] [--hold]
//   --hold: after printing, wait until stdin closes (so that /proc/<pid>/smaps can be read).
#include <cstdio>
#include <fstream>
#include <string>

#include "nvml/nvml.h"

namespace {

long RssKib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "libnvidia-ml.so.1";
  std::printf("before_load_kib %ld\n", RssKib());
  auto lib = nvmlx::nvml::Library::Load(path);
  if (!lib.ok()) {
    std::fprintf(stderr, "%s\n", lib.status().ToString().c_str());
    return 1;
  }
  std::printf("after_init_kib %ld\n", RssKib());
  auto n = (*lib)->DeviceCount();
  for (unsigned i = 0; n.ok() && i < *n; ++i) {
    auto d = (*lib)->DeviceByIndex(i);
    if (d.ok()) (void)(*lib)->Uuid(*d);
  }
  std::printf("after_devices_kib %ld\n", RssKib());
  std::fflush(stdout);
  if (argc > 2 && std::string(argv[2]) == "--hold") {
    char c;
    while (std::fread(&c, 1, 1, stdin) == 1) {
    }
  }
  return 0;
}
