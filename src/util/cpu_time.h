// ThreadCpuNs: the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID), for measuring what one
// step costs: the PM-sampling decoder's per-step split, tools/pm-probe and bench/nvml_floor.
// Thread-safe (reads the calling thread's own clock).
#ifndef NVML_EXPORTER_UTIL_CPU_TIME_H_
#define NVML_EXPORTER_UTIL_CPU_TIME_H_

#include <time.h>

#include <cstdint>

namespace nvmlx::util {

inline uint64_t ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000u + uint64_t(ts.tv_nsec);
}

}  // namespace nvmlx::util

#endif  // NVML_EXPORTER_UTIL_CPU_TIME_H_
