// The process's own metrics (--enable-exporter-metrics, dcgm-exporter 4.8.4's): CPU time, memory,
// descriptors and start time, named as Prometheus client libraries' process collector names them
// (process_cpu_seconds_total, process_resident_memory_bytes, process_virtual_memory_bytes,
// process_open_fds, process_max_fds, process_start_time_seconds), so that dashboards and alerts
// written for dcgm-exporter or node_exporter read ours unchanged.
//
// Read from /proc once per collection by the daemon's publishing thread (never in a request) and
// added to the page as own families (Prometheus only). dcgm-exporter's flag also exposes Go's
// runtime metrics (go_*) and its HTTP handler's (promhttp_*): there is no Go runtime here, and
// our HTTP counters (nvml_exporter_http_*, app/own_families.h) are always on, as before.
//
// Thread-safety: pure functions, and ReadProcessStats reads files only; call from any thread.
#ifndef NVML_EXPORTER_APP_PROCESS_METRICS_H_
#define NVML_EXPORTER_APP_PROCESS_METRICS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "render/series_model.h"
#include "util/status.h"

namespace nvmlx::app {

struct ProcessStats {
  int64_t cpu_ms = 0;          // user + system CPU time
  int64_t resident_bytes = 0;  // RSS
  int64_t virtual_bytes = 0;   // address space size
  int64_t open_fds = 0;
  int64_t max_fds = 0;        // the soft RLIMIT_NOFILE
  int64_t start_time_ms = 0;  // since the Unix epoch
};

// What /proc/<pid>/stat and /proc/stat say, for ParseProcStat: the clock tick and page size of
// the machine (sysconf), and the boot time (/proc/stat's btime, seconds since the epoch).
struct ProcUnits {
  int64_t ticks_per_second = 100;
  int64_t page_bytes = 4096;
  int64_t boot_time_s = 0;
};

// Fills the CPU, memory and start-time fields of *out from the text of /proc/<pid>/stat (the
// command name may hold spaces and parentheses: fields are counted after its last ')').
// INVALID_ARGUMENT naming the field that is missing or not a number.
Status ParseProcStat(std::string_view stat, const ProcUnits& units, ProcessStats* out);
// btime from the text of /proc/stat; INVALID_ARGUMENT when it has none.
Result<int64_t> ParseBootTime(std::string_view proc_stat);

// This process's figures: `proc` is the /proc mount (a test may point elsewhere; the
// descriptor limit is always getrlimit's). Errors name the file.
Result<ProcessStats> ReadProcessStats(const std::string& proc = "/proc");

// The six process_* families, one unlabelled point each.
void AddProcessFamilies(const ProcessStats& s, render::SeriesModel* model);

}  // namespace nvmlx::app

#endif  // NVML_EXPORTER_APP_PROCESS_METRICS_H_
