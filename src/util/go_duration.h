// Go's time.ParseDuration ("1h2m3.5s", "500ms", "-1.5h", "0"; units ns, us/µs, ms, s, m, h),
// shared by the daemon's flags (dcgm-exporter takes Go durations) and gpu-pulse.
// Pure function: thread-safe.
#ifndef NVML_EXPORTER_UTIL_GO_DURATION_H_
#define NVML_EXPORTER_UTIL_GO_DURATION_H_

#include <chrono>
#include <string_view>

#include "util/status.h"

namespace nvmlx {

// INVALID_ARGUMENT naming the text and what was expected, e.g.
// `invalid duration "10": missing unit (ns, us, ms, s, m or h, e.g. 10s)`.
Result<std::chrono::nanoseconds> ParseGoDuration(std::string_view text);

}  // namespace nvmlx

#endif  // NVML_EXPORTER_UTIL_GO_DURATION_H_
