#include "collect/process_reader.h"

#include <algorithm>
#include <map>

namespace nvmlx::collect {

ProcessReader::ProcessReader(const nvml::Library& lib, nvml::Device device, Mode mode)
    : lib_(lib), device_(device), mode_(mode) {
  if (mode_ == Mode::kMemoryOnly) return;
  // Priming: learn the newest timestamp; the samples themselves are the stale whole-buffer view.
  if (auto r = lib_.ProcessUtilizations(device_, 0); r.ok()) {
    for (const auto& u : *r) last_seen_us_ = std::max(last_seen_us_, u.timestamp_us);
  }
}

Status ProcessReader::Read(std::vector<model::ProcessSample>* out) {
  out->clear();
  Result<std::vector<nvml::ProcessInfo>> procs = lib_.ComputeProcesses(device_);
  if (!procs.ok()) return procs.status();
  Result<std::vector<nvml::ProcessUtilization>> util =
      mode_ == Mode::kMemoryOnly
          ? Result<std::vector<nvml::ProcessUtilization>>(std::vector<nvml::ProcessUtilization>{})
          : lib_.ProcessUtilizations(device_, last_seen_us_);
  struct Mean {
    uint64_t sm = 0, mem = 0;
    unsigned n = 0;
  };
  std::map<unsigned, Mean> by_pid;
  if (util.ok()) {
    for (const auto& u : *util) {
      last_seen_us_ = std::max(last_seen_us_, u.timestamp_us);
      Mean& m = by_pid[u.pid];
      m.sm += u.sm;
      m.mem += u.memory;
      ++m.n;
    }
  }
  out->reserve(procs->size());
  for (const nvml::ProcessInfo& p : *procs) {
    model::ProcessSample s;
    s.pid = p.pid;
    s.used_memory_bytes = p.used_memory_bytes;
    if (auto it = by_pid.find(p.pid); it != by_pid.end()) {
      s.has_utilization = true;
      s.sm_util_percent =
          static_cast<unsigned>(std::min<uint64_t>(it->second.sm / it->second.n, 100));
      s.mem_util_percent =
          static_cast<unsigned>(std::min<uint64_t>(it->second.mem / it->second.n, 100));
    }
    out->push_back(s);
  }
  // NVML lists a process once per context; keep the pids unique (memory summed).
  std::vector<model::ProcessSample> merged;
  for (model::ProcessSample& s : *out) {
    if (!merged.empty() && merged.back().pid == s.pid) {
      merged.back().used_memory_bytes += s.used_memory_bytes;
      continue;
    }
    merged.push_back(s);
  }
  *out = std::move(merged);
  return util.ok() ? Status::Ok() : util.status();
}

}  // namespace nvmlx::collect
