#include "collect/mig.h"

#include <string>

#include "util/log.h"

namespace nvmlx::collect {

std::string MigProfileName(unsigned slice_count, uint64_t memory_mb) {
  const uint64_t gb = (memory_mb + 1023) / 1024;  // ceil, as DCGM's ceil(memorySizeMB / 1024.0)
  return std::to_string(slice_count) + "g." + std::to_string(gb) + "gb";
}

uint64_t ProfileMemoryMb(unsigned slice_count, uint64_t instance_memory_mb,
                         const std::vector<nvmlGpuInstanceProfileInfo_t>& profiles) {
  const nvmlGpuInstanceProfileInfo_t* best = nullptr;
  uint64_t best_distance = 0;
  for (const auto& p : profiles) {
    if (p.sliceCount != slice_count) continue;
    const uint64_t distance = p.memorySizeMB > instance_memory_mb
                                  ? p.memorySizeMB - instance_memory_mb
                                  : instance_memory_mb - p.memorySizeMB;
    if (best == nullptr || distance < best_distance) {
      best = &p;
      best_distance = distance;
    }
  }
  return best != nullptr ? best->memorySizeMB : instance_memory_mb;
}

namespace {

// Profile indexes are small (0x00-0x11 in the 13.x header); walk until INVALID_ARGUMENT, skipping
// NOT_SUPPORTED, as DCGM does. The bound only guards against a driver that never says stop.
constexpr unsigned kMaxProfileIndex = 64;

std::vector<nvmlGpuInstanceProfileInfo_t> Profiles(const nvml::Library& lib, nvml::Device parent) {
  std::vector<nvmlGpuInstanceProfileInfo_t> out;
  for (unsigned index = 0; index < kMaxProfileIndex; ++index) {
    Result<nvmlGpuInstanceProfileInfo_t> info = lib.GpuInstanceProfileInfo(parent, index);
    if (info.ok()) {
      out.push_back(*info);
      continue;
    }
    if (info.status().code() == StatusCode::kNotSupported) continue;
    break;  // INVALID_ARGUMENT: past the last profile (or a failure: use what we have)
  }
  return out;
}

}  // namespace

std::vector<MigInstance> DiscoverMig(const nvml::Library& lib, nvml::Device parent, unsigned gpu) {
  std::vector<MigInstance> out;
  const std::string gpu_text = std::to_string(gpu);
  Result<unsigned> max = lib.MaxMigDeviceCount(parent);
  if (!max.ok()) {
    log::Warn("MIG is on but its devices cannot be counted; no MIG instance collected",
              {{"gpu", gpu_text}, {"err", max.status().ToString()}});
    return out;
  }
  std::vector<nvmlGpuInstanceProfileInfo_t> profiles;
  bool profiles_read = false;
  for (unsigned slot = 0; slot < *max; ++slot) {
    Result<std::optional<nvml::Device>> handle = lib.MigDeviceByIndex(parent, slot);
    if (!handle.ok()) {
      log::Warn(
          "cannot open MIG device; it will not be collected",
          {{"gpu", gpu_text}, {"slot", std::to_string(slot)}, {"err", handle.status().ToString()}});
      continue;
    }
    if (!handle->has_value()) continue;  // empty slot
    MigInstance inst;
    inst.handle = **handle;
    Result<unsigned> gi = lib.GpuInstanceId(inst.handle);
    Result<unsigned> ci = lib.ComputeInstanceId(inst.handle);
    Result<std::string> uuid = lib.Uuid(inst.handle);
    if (!gi.ok() || !ci.ok() || !uuid.ok()) {
      const Status& why = !gi.ok() ? gi.status() : !ci.ok() ? ci.status() : uuid.status();
      log::Warn("cannot identify MIG device; it will not be collected",
                {{"gpu", gpu_text}, {"slot", std::to_string(slot)}, {"err", why.ToString()}});
      continue;
    }
    inst.mig.gpu_instance_id = *gi;
    inst.mig.compute_instance_id = *ci;
    inst.mig.uuid = *uuid;
    Result<nvmlDeviceAttributes_t> attrs = lib.Attributes(inst.handle);
    if (attrs.ok()) {
      if (!profiles_read) {
        profiles = Profiles(lib, parent);
        profiles_read = true;
      }
      inst.mig.profile = MigProfileName(
          attrs->gpuInstanceSliceCount,
          ProfileMemoryMb(attrs->gpuInstanceSliceCount, attrs->memorySizeMB, profiles));
    } else {
      log::Warn("cannot read MIG device attributes; GPU_I_PROFILE label empty",
                {{"gpu", gpu_text},
                 {"GPU_I_ID", std::to_string(*gi)},
                 {"err", attrs.status().ToString()}});
    }
    out.push_back(std::move(inst));
  }
  return out;
}

}  // namespace nvmlx::collect
