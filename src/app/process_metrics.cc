#include "app/process_metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include "render/series.h"

namespace nvmlx::app {
namespace {

std::optional<int64_t> Number(std::string_view s) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

// /proc files report a size of 0: read until the end rather than by size.
Result<std::string> ReadProcFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound(path + ": cannot open");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Entries of a directory but "." and ".." (the descriptor opendir holds counts too, as it does
// for the client libraries that read /proc/self/fd the same way).
Result<int64_t> CountEntries(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return NotFound(dir + ": cannot open");
  int64_t n = 0;
  while (const dirent* e = ::readdir(d)) {
    const std::string_view name = e->d_name;
    if (name != "." && name != "..") ++n;
  }
  ::closedir(d);
  return n;
}

}  // namespace

Status ParseProcStat(std::string_view stat, const ProcUnits& units, ProcessStats* out) {
  const size_t close = stat.rfind(')');
  if (close == std::string_view::npos) {
    return InvalidArgument("/proc stat: no ')' closing the command name");
  }
  // Fields after the command name, from field 3 (state) on, split at spaces.
  std::vector<std::string_view> f;
  std::string_view rest = stat.substr(close + 1);
  while (!rest.empty()) {
    const size_t b = rest.find_first_not_of(" \n");
    if (b == std::string_view::npos) break;
    rest.remove_prefix(b);
    const size_t e = std::min(rest.find_first_of(" \n"), rest.size());
    f.push_back(rest.substr(0, e));
    rest.remove_prefix(e);
  }
  // proc(5) numbers the fields from 1: utime 14, stime 15, starttime 22, vsize 23, rss 24.
  auto field = [&f](int number, const char* name) -> Result<int64_t> {
    const size_t i = static_cast<size_t>(number - 3);
    if (i >= f.size()) return InvalidArgument(std::string("/proc stat: no ") + name + " field");
    std::optional<int64_t> v = Number(f[i]);
    if (!v) {
      return InvalidArgument(std::string("/proc stat: ") + name + " is not a number: \"" +
                             std::string(f[i]) + "\"");
    }
    return *v;
  };
  Result<int64_t> utime = field(14, "utime");
  Result<int64_t> stime = field(15, "stime");
  Result<int64_t> start = field(22, "starttime");
  Result<int64_t> vsize = field(23, "vsize");
  Result<int64_t> rss = field(24, "rss");
  for (const Result<int64_t>* r : {&utime, &stime, &start, &vsize, &rss}) {
    if (!r->ok()) return r->status();
  }
  const int64_t tick = units.ticks_per_second > 0 ? units.ticks_per_second : 100;
  out->cpu_ms = (*utime + *stime) * 1000 / tick;
  out->start_time_ms = units.boot_time_s * 1000 + *start * 1000 / tick;
  out->virtual_bytes = *vsize;
  out->resident_bytes = *rss * units.page_bytes;
  return Status::Ok();
}

Result<int64_t> ParseBootTime(std::string_view proc_stat) {
  size_t at = 0;
  while (at < proc_stat.size()) {
    size_t eol = proc_stat.find('\n', at);
    if (eol == std::string_view::npos) eol = proc_stat.size();
    const std::string_view line = proc_stat.substr(at, eol - at);
    at = eol + 1;
    if (line.rfind("btime ", 0) != 0) continue;
    if (std::optional<int64_t> v = Number(line.substr(6))) return *v;
    return InvalidArgument("/proc/stat: btime is not a number");
  }
  return InvalidArgument("/proc/stat: no btime line");
}

Result<ProcessStats> ReadProcessStats(const std::string& proc) {
  ProcUnits units;
  units.ticks_per_second = ::sysconf(_SC_CLK_TCK);
  units.page_bytes = ::sysconf(_SC_PAGESIZE);
  Result<std::string> system = ReadProcFile(proc + "/stat");
  if (!system.ok()) return system.status();
  Result<int64_t> boot = ParseBootTime(*system);
  if (!boot.ok()) return boot.status();
  units.boot_time_s = *boot;
  Result<std::string> stat = ReadProcFile(proc + "/self/stat");
  if (!stat.ok()) return stat.status();
  ProcessStats s;
  NVMLX_RETURN_IF_ERROR(ParseProcStat(*stat, units, &s));
  Result<int64_t> fds = CountEntries(proc + "/self/fd");
  if (!fds.ok()) return fds.status();
  s.open_fds = *fds;
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) == 0) {
    s.max_fds = rl.rlim_cur == RLIM_INFINITY ? INT64_MAX : static_cast<int64_t>(rl.rlim_cur);
  }
  return s;
}

void AddProcessFamilies(const ProcessStats& s, render::SeriesModel* model) {
  // Our own help text; the names and types are the client libraries' (see the header).
  render::SeriesFamily& cpu = render::AddOwnFamily(model, "process_cpu_seconds_total", "counter",
                                                   "CPU time (user and system) used, seconds.");
  render::AddOwnSecondsPoint(model, &cpu, {}, s.cpu_ms);
  struct Gauge {
    std::string_view name, help;
    int64_t value;
  };
  const Gauge gauges[] = {
      {"process_resident_memory_bytes", "Resident set size, bytes.", s.resident_bytes},
      {"process_virtual_memory_bytes", "Size of the virtual address space, bytes.",
       s.virtual_bytes},
      {"process_open_fds", "File descriptors open.", s.open_fds},
      {"process_max_fds", "File descriptors the process may open (soft limit).", s.max_fds},
  };
  for (const Gauge& g : gauges) {
    render::SeriesFamily& f = render::AddOwnFamily(model, g.name, "gauge", g.help);
    render::AddOwnPoint(model, &f, {}, g.value);
  }
  render::SeriesFamily& start =
      render::AddOwnFamily(model, "process_start_time_seconds", "gauge",
                           "When the process started, seconds since the Unix epoch.");
  render::AddOwnSecondsPoint(model, &start, {}, s.start_time_ms);
}

}  // namespace nvmlx::app
