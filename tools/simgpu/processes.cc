// Simulated per-process NVML calls (SCENARIO.md "Processes"): the compute process list, with the
// entry stride of the scenario, and per-process utilization from a simulated sample buffer that
// honours lastSeenTimeStamp as the driver does (only newer samples; NOT_FOUND when none).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "call.h"

using nvmlx::simgpu::Ctx;
using nvmlx::simgpu::OnDevice;
using nvmlx::simgpu::ProcessSpec;
using nvmlx::simgpu::ToU32;
using nvmlx::simgpu::ToU64;

namespace {

constexpr double kBytesPerMib = 1024.0 * 1024.0;
// The driver samples per-process utilization every 1/6 s and keeps about 20 s of samples.
constexpr double kSamplePeriodS = 1.0 / 6.0;
constexpr double kBufferS = 20.0;
// R580 answers the size query with room for 72 entries whatever runs (docs/nvml.md §4).
constexpr unsigned kSizeHint = 72;

std::vector<const ProcessSpec*> Running(const Ctx& c) {
  std::vector<const ProcessSpec*> out;
  for (const ProcessSpec& p : c.spec().processes) {
    if (p.RunningAt(c.t)) out.push_back(&p);
  }
  return out;
}

// Writes the running processes as `stride`-byte entries (16: v1; 24: v2; 32: 535.43-535.86).
nvmlReturn_t ListProcesses(const Ctx& c, unsigned* count, void* infos, size_t stride) {
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const std::vector<const ProcessSpec*> running = Running(c);
  if (*count < running.size()) {
    *count = static_cast<unsigned>(running.size());
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  if (!running.empty() && infos == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  auto* out = static_cast<unsigned char*>(infos);
  for (size_t i = 0; i < running.size(); ++i) {
    unsigned char* e = out + i * stride;
    std::memset(e, 0, stride);
    const unsigned pid = running[i]->pid;
    const unsigned long long mem = ToU64(running[i]->memory_mib.At(c.t) * kBytesPerMib);
    std::memcpy(e, &pid, sizeof(pid));
    std::memcpy(e + 8, &mem, sizeof(mem));
    if (stride >= 24) {
      // A MIG handle's processes carry its GPU and compute instance ids; 0xFFFFFFFF without MIG.
      const unsigned gi = c.dev->mig != nullptr ? c.dev->mig->gpu_instance_id : 0xFFFFFFFF;
      const unsigned ci = c.dev->mig != nullptr ? c.dev->mig->compute_instance_id : 0xFFFFFFFF;
      std::memcpy(e + 16, &gi, sizeof(gi));
      std::memcpy(e + 20, &ci, sizeof(ci));
    }
  }
  *count = static_cast<unsigned>(running.size());
  return NVML_SUCCESS;
}

// Per-process utilization is off on a MIG-enabled GPU and its MIG handles (docs/nvml.md §5).
bool UnderMig(const Ctx& c) { return c.spec().mig_enabled || c.dev->mig != nullptr; }

struct Window {
  unsigned pid;
  unsigned long long last_ts;
  unsigned sm, mem;
};

// One entry per process with a non-zero average over the samples newer than last_seen: the
// sample instants are k/6 s of simulation time, stamped in epoch µs.
std::vector<Window> SamplesSince(const Ctx& c, unsigned long long last_seen) {
  std::vector<Window> out;
  const long long k_hi = static_cast<long long>(std::floor(c.t / kSamplePeriodS));
  const long long k_lo =
      std::max<long long>(0, static_cast<long long>(std::ceil((c.t - kBufferS) / kSamplePeriodS)));
  for (const ProcessSpec& p : c.spec().processes) {
    double sm = 0, mem = 0;
    int n = 0;
    unsigned long long last_ts = 0;
    for (long long k = k_lo; k <= k_hi; ++k) {
      const double tk = static_cast<double>(k) * kSamplePeriodS;
      const auto ts = static_cast<unsigned long long>(c.world->EpochMicros(tk));
      if (ts <= last_seen || !p.RunningAt(tk)) continue;
      sm += p.sm_util.At(tk);
      mem += p.mem_util.At(tk);
      ++n;
      last_ts = ts;
    }
    if (n == 0) continue;
    const unsigned sm_avg = ToU32(sm / n), mem_avg = ToU32(mem / n);
    if (sm_avg == 0 && mem_avg == 0) continue;  // NVML lists only processes that did something
    out.push_back({p.pid, last_ts, sm_avg, mem_avg});
  }
  return out;
}

}  // namespace

#pragma GCC visibility push(default)
extern "C" {

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned* infoCount,
                                                     nvmlProcessInfo_t* infos) {
  return OnDevice(__func__, device, [&](const Ctx& c) {
    return ListProcesses(c, infoCount, infos, c.spec().process_info_stride);
  });
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned* infoCount,
                                                     nvmlProcessInfo_t* infos) {
  return OnDevice(__func__, device,
                  [&](const Ctx& c) { return ListProcesses(c, infoCount, infos, 24); });
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned* infoCount,
                                                  nvmlProcessInfo_v1_t* infos) {
  return OnDevice(__func__, device,
                  [&](const Ctx& c) { return ListProcesses(c, infoCount, infos, 16); });
}

nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device,
                                             nvmlProcessUtilizationSample_t* utilization,
                                             unsigned* processSamplesCount,
                                             unsigned long long lastSeenTimeStamp) {
  return OnDevice(__func__, device, [&](const Ctx& c) -> nvmlReturn_t {
    if (processSamplesCount == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (UnderMig(c)) return NVML_ERROR_NOT_SUPPORTED;
    const std::vector<Window> w = SamplesSince(c, lastSeenTimeStamp);
    if (w.empty()) {
      *processSamplesCount = 0;
      return NVML_ERROR_NOT_FOUND;
    }
    if (utilization == nullptr || *processSamplesCount < w.size()) {
      *processSamplesCount = std::max<unsigned>(kSizeHint, static_cast<unsigned>(w.size()));
      return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    for (size_t i = 0; i < w.size(); ++i) {
      utilization[i] = {w[i].pid, w[i].last_ts, w[i].sm, w[i].mem, 0, 0};
    }
    *processSamplesCount = static_cast<unsigned>(w.size());
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetProcessesUtilizationInfo(nvmlDevice_t device,
                                                   nvmlProcessesUtilizationInfo_t* info) {
  return OnDevice(__func__, device, [&](const Ctx& c) -> nvmlReturn_t {
    if (info == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (info->version != nvmlProcessesUtilizationInfo_v1) {
      return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    }
    if (UnderMig(c)) return NVML_ERROR_NOT_SUPPORTED;
    const std::vector<Window> w = SamplesSince(c, info->lastSeenTimeStamp);
    if (w.empty()) {
      info->processSamplesCount = 0;
      return NVML_ERROR_NOT_FOUND;
    }
    if (info->procUtilArray == nullptr || info->processSamplesCount < w.size()) {
      info->processSamplesCount = std::max<unsigned>(kSizeHint, static_cast<unsigned>(w.size()));
      return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    for (size_t i = 0; i < w.size(); ++i) {
      info->procUtilArray[i] = {w[i].last_ts, w[i].pid, w[i].sm, w[i].mem, 0, 0, 0, 0};
    }
    info->processSamplesCount = static_cast<unsigned>(w.size());
    return NVML_SUCCESS;
  });
}

}  // extern "C"
#pragma GCC visibility pop
