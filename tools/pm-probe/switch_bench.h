// pm-probe --switch N: what one switch between two PM-sampling configurations costs on a real GPU,
// step by step, and whether the session measures right after it (docs/pm-sampling.md §6). The
// two configurations alternate N times, each live for --dwell-ms, one of two ways:
//   restart (default): the session is destroyed (stop, disable) and a new one started (enable,
//     set the configuration, counter-data image, start), as the exporter switched until 2026-12;
//   --keep: the session stays enabled and is reconfigured (stop, set the configuration, image,
//     start: cupti::PmSampler::Reconfigure).
// One line per switch on stdout (CSV): this thread's CPU time of each step, the wall time of the
// whole switch, and the decode at the end of the dwell (samples and each metric's mean), so that
// a run under load shows the values are still right.
#ifndef NVML_EXPORTER_TOOLS_PM_PROBE_SWITCH_BENCH_H_
#define NVML_EXPORTER_TOOLS_PM_PROBE_SWITCH_BENCH_H_

#include <cstddef>
#include <string>
#include <vector>

#include "cupti/cupti.h"

namespace nvmlx::pmprobe {

struct SwitchBench {
  size_t switches = 20;
  bool keep_enabled = false;
  cupti::PmSampler::ReconfigureSteps steps;  // --keep's variant (--keep-drain, --keep-no-config)
  size_t alternate_buffer_bytes = 0;         // --hw-buffer-alt-kib: the second's buffer size
  long dwell_ms = 2000;
  size_t hardware_buffer_bytes = 4u << 20;
  cupti::PmSampler::Options base;  // device, chip, availability, interval, trigger, image size
  std::vector<std::string> first, second;  // the two configurations' metrics
};

// Returns the process exit status: 0, or 1 when a configuration cannot be built or started.
int RunSwitchBench(const cupti::Library& lib, const SwitchBench& bench);

}  // namespace nvmlx::pmprobe

#endif  // NVML_EXPORTER_TOOLS_PM_PROBE_SWITCH_BENCH_H_
