// pm-probe --chip NAME: what PM sampling can hold on a chip, from the profiler host API alone
// (no GPU, no driver, no counter-availability image). For each metric: whether the chip knows
// it and how many passes it needs alone; then the plan the exporter's reader makes
// (collect/pm_sampling_reader.cc: all metrics at once if they fit one pass, else one by one in
// order, keeping each that leaves one pass) and the pass count of every known metric together.
// Without metrics on the command line, the exporter's own fields in its pass order
// (fields/pm_metrics.cc). Prints a markdown table on stdout; docs/pm-sampling.md's per-chip
// table is made with it.
#ifndef NVML_EXPORTER_TOOLS_PM_PROBE_CHIP_PLAN_H_
#define NVML_EXPORTER_TOOLS_PM_PROBE_CHIP_PLAN_H_

#include <string>
#include <vector>

#include "cupti/cupti.h"

namespace nvmlx::pmprobe {

// Returns the process exit status: 0, or 1 when the host API refused the chip itself.
int PrintChipPlan(const cupti::Library& lib, const std::string& chip,
                  std::vector<std::string> metrics);

}  // namespace nvmlx::pmprobe

#endif  // NVML_EXPORTER_TOOLS_PM_PROBE_CHIP_PLAN_H_
