// Library's per-process calls (nvml.h "Processes"): running compute processes with the stride
// check, and per-process utilization with lastSeenTimeStamp. Kept apart from nvml.cc, whose
// calls are all one-value reads.
#include <algorithm>
#include <cstring>
#include <vector>

#include "nvml/nvml.h"

namespace nvmlx::nvml {
namespace {

// Room for processes that start between the size query and the read.
constexpr unsigned kProcessSlack = 8;
// Attempts when the list keeps growing between the size query and the read.
constexpr int kListAttempts = 3;
// The widest entry any driver is known to write (535.43-535.86: 32 bytes).
constexpr size_t kMaxStride = 32;
// Sentinel fill: not 0x00 (ccProtected memory, padding) nor 0xFF (GI/CI ids without MIG).
constexpr unsigned char kSentinel = 0xA5;

unsigned Clamp100(unsigned v) { return std::min(v, 100u); }

uint64_t MemoryOrZero(unsigned long long v) { return v == NVMLX_VALUE_NOT_AVAILABLE_ULL ? 0 : v; }

// The stride the driver wrote `count` entries with: the smallest of 16/24/32 whose `count`
// entries cover every byte it changed. 0 when none does (an unknown layout).
size_t MeasureStride(const std::vector<unsigned char>& buf, unsigned count) {
  size_t written = 0;
  for (size_t i = buf.size(); i > 0; --i) {
    if (buf[i - 1] != kSentinel) {
      written = i;
      break;
    }
  }
  for (size_t stride : {size_t{16}, size_t{24}, size_t{32}}) {
    if (written <= count * stride) return stride;
  }
  return 0;
}

void SortByPid(std::vector<ProcessInfo>* out) {
  std::sort(out->begin(), out->end(),
            [](const ProcessInfo& a, const ProcessInfo& b) { return a.pid < b.pid; });
}

}  // namespace

Result<std::vector<ProcessInfo>> Library::ComputeProcesses(Device d) const {
  CallScope scope("nvmlDeviceGetComputeRunningProcesses");  // whichever version it uses
  // The versioned calls share one signature; prefer _v3.
  const char* name = "nvmlDeviceGetComputeRunningProcesses_v3";
  auto* fn = api_.nvmlDeviceGetComputeRunningProcesses_v3;
  if (fn == nullptr) {
    name = "nvmlDeviceGetComputeRunningProcesses_v2";
    fn = api_.nvmlDeviceGetComputeRunningProcesses_v2;
  }
  std::vector<ProcessInfo> out;
  if (fn == nullptr) {
    // Legacy: 16-byte nvmlProcessInfo_v1_t, no MIG ids.
    auto* legacy = api_.nvmlDeviceGetComputeRunningProcesses;
    const char* legacy_name = "nvmlDeviceGetComputeRunningProcesses";
    if (legacy == nullptr) return NotSupported(std::string(legacy_name) + ": symbol not present");
    unsigned count = 0;
    nvmlReturn_t rc = legacy(d, &count, nullptr);
    for (int attempt = 0; attempt < kListAttempts && rc == NVML_ERROR_INSUFFICIENT_SIZE;
         ++attempt) {
      std::vector<nvmlProcessInfo_v1_t> infos(count + kProcessSlack);
      count = static_cast<unsigned>(infos.size());
      rc = legacy(d, &count, infos.data());
      if (rc == NVML_SUCCESS) {
        for (unsigned i = 0; i < count && i < infos.size(); ++i) {
          out.push_back({infos[i].pid, MemoryOrZero(infos[i].usedGpuMemory)});
        }
      }
    }
    if (rc != NVML_SUCCESS) return FromNvmlReturn(rc, legacy_name, api_.nvmlErrorString);
    SortByPid(&out);
    return out;
  }

  unsigned count = 0;
  nvmlReturn_t rc = fn(d, &count, nullptr);
  if (rc == NVML_SUCCESS) return out;  // nothing runs
  for (int attempt = 0; attempt < kListAttempts && rc == NVML_ERROR_INSUFFICIENT_SIZE; ++attempt) {
    const unsigned capacity = count + kProcessSlack;
    // Room for the widest stride, so a 32-byte driver cannot write past the end.
    std::vector<unsigned char> buf(capacity * kMaxStride, kSentinel);
    // Capacity in 24-byte entries as the header declares them; buf holds more than that.
    count = capacity;
    rc = fn(d, &count, reinterpret_cast<nvmlProcessInfo_t*>(buf.data()));
    if (rc != NVML_SUCCESS) continue;
    if (count > capacity) return Internal(std::string(name) + ": count beyond capacity");
    const size_t stride = MeasureStride(buf, count);
    if (stride == 0) {
      return Internal(std::string(name) + ": entries of an unknown size (" + std::to_string(count) +
                      " entries); not read");
    }
    for (unsigned i = 0; i < count; ++i) {
      const unsigned char* e = buf.data() + i * stride;
      ProcessInfo p;
      unsigned long long mem = 0;
      std::memcpy(&p.pid, e, sizeof(unsigned));
      std::memcpy(&mem, e + 8, sizeof(mem));
      p.used_memory_bytes = MemoryOrZero(mem);
      if (stride >= 24) {
        std::memcpy(&p.gpu_instance_id, e + 16, sizeof(unsigned));
        std::memcpy(&p.compute_instance_id, e + 20, sizeof(unsigned));
      }
      out.push_back(p);
    }
  }
  if (rc != NVML_SUCCESS) return FromNvmlReturn(rc, name, api_.nvmlErrorString);
  SortByPid(&out);
  return out;
}

Result<std::vector<ProcessUtilization>> Library::ProcessUtilizations(Device d,
                                                                     uint64_t last_seen_us) const {
  CallScope scope("nvmlDeviceGetProcessesUtilizationInfo");  // or its older form
  std::vector<ProcessUtilization> out;
  if (auto* fn = api_.nvmlDeviceGetProcessesUtilizationInfo; fn != nullptr) {
    const char* name = "nvmlDeviceGetProcessesUtilizationInfo";
    nvmlProcessesUtilizationInfo_t info{};
    info.version = nvmlProcessesUtilizationInfo_v1;
    info.lastSeenTimeStamp = last_seen_us;
    nvmlReturn_t rc = fn(d, &info);
    std::vector<nvmlProcessUtilizationInfo_v1_t> entries;
    // R580 answers the size query with far more than it fills (72 for one process).
    for (int attempt = 0; attempt < kListAttempts && rc == NVML_ERROR_INSUFFICIENT_SIZE;
         ++attempt) {
      entries.assign(info.processSamplesCount + kProcessSlack, {});
      info.processSamplesCount = static_cast<unsigned>(entries.size());
      info.procUtilArray = entries.data();
      info.lastSeenTimeStamp = last_seen_us;
      rc = fn(d, &info);
    }
    // An older driver may export the symbol but refuse the struct version: use the old call.
    if (rc != NVML_ERROR_ARGUMENT_VERSION_MISMATCH && rc != NVML_ERROR_FUNCTION_NOT_FOUND) {
      if (rc == NVML_ERROR_NOT_FOUND) return out;
      if (rc != NVML_SUCCESS) return FromNvmlReturn(rc, name, api_.nvmlErrorString);
      const unsigned n =
          std::min<unsigned>(info.processSamplesCount, static_cast<unsigned>(entries.size()));
      for (unsigned i = 0; i < n; ++i) {
        const auto& e = entries[i];
        out.push_back({e.pid, e.timeStamp, Clamp100(e.smUtil), Clamp100(e.memUtil),
                       Clamp100(e.encUtil), Clamp100(e.decUtil)});
      }
      return out;
    }
  }
  auto* fn = api_.nvmlDeviceGetProcessUtilization;
  const char* name = "nvmlDeviceGetProcessUtilization";
  if (fn == nullptr) return NotSupported(std::string(name) + ": symbol not present in " + path_);
  unsigned count = 0;
  nvmlReturn_t rc = fn(d, nullptr, &count, last_seen_us);
  std::vector<nvmlProcessUtilizationSample_t> samples;
  for (int attempt = 0; attempt < kListAttempts && rc == NVML_ERROR_INSUFFICIENT_SIZE; ++attempt) {
    samples.assign(count + kProcessSlack, {});
    count = static_cast<unsigned>(samples.size());
    rc = fn(d, samples.data(), &count, last_seen_us);
  }
  if (rc == NVML_ERROR_NOT_FOUND) return out;
  if (rc != NVML_SUCCESS) return FromNvmlReturn(rc, name, api_.nvmlErrorString);
  const unsigned n = std::min<unsigned>(count, static_cast<unsigned>(samples.size()));
  for (unsigned i = 0; i < n; ++i) {
    const auto& s = samples[i];
    out.push_back({s.pid, s.timeStamp, Clamp100(s.smUtil), Clamp100(s.memUtil), Clamp100(s.encUtil),
                   Clamp100(s.decUtil)});
  }
  return out;
}

}  // namespace nvmlx::nvml
