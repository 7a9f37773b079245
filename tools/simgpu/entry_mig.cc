// Exported MIG entry points (SCENARIO.md "MIG"): mode, MIG device enumeration, instance ids,
// attributes and the GPU-instance profile table. Read-only, as the exporter is: nothing here can
// change a simulated GPU's MIG configuration.
#include "call.h"

using nvmlx::simgpu::Ctx;
using nvmlx::simgpu::OnDevice;

namespace {

// Profile indexes of the 13.x header run 0x00-0x11; beyond that NVML answers INVALID_ARGUMENT.
constexpr unsigned kMaxProfileIndex = 0x11;

unsigned long long MiB(double v) { return nvmlx::simgpu::ToU64(v); }

}  // namespace

#pragma GCC visibility push(default)
extern "C" {

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned* currentMode,
                                  unsigned* pendingMode) {
  return OnDevice(__func__, device, [&](const Ctx& c) -> nvmlReturn_t {
    if (currentMode == nullptr || pendingMode == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (c.dev->mig != nullptr) return NVML_ERROR_NOT_SUPPORTED;  // asked of a MIG device
    *currentMode = *pendingMode =
        c.spec().mig_enabled ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned* count) {
  return OnDevice(__func__, device, [&](const Ctx& c) -> nvmlReturn_t {
    if (count == nullptr || c.dev->mig != nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *count = c.spec().mig_enabled ? nvmlx::simgpu::kMaxMigDevices : 0;  // 0 with MIG off (M: 0)
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned index,
                                                 nvmlDevice_t* migDevice) {
  return OnDevice(__func__, device, [&](const Ctx& c) -> nvmlReturn_t {
    if (migDevice == nullptr || c.dev->mig != nullptr || !c.spec().mig_enabled ||
        index >= nvmlx::simgpu::kMaxMigDevices) {
      return NVML_ERROR_INVALID_ARGUMENT;
    }
    const nvmlx::simgpu::Device* mig = c.world->MigBySlot(c.dev->index, index);
    if (mig == nullptr) return NVML_ERROR_NOT_FOUND;  // an empty slot
    *migDevice = reinterpret_cast<nvmlDevice_t>(const_cast<nvmlx::simgpu::Device*>(mig));
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned* id) {
  return OnDevice(__func__, device, [&](const Ctx& c) -> nvmlReturn_t {
    if (id == nullptr || c.dev->mig == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *id = c.dev->mig->gpu_instance_id;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned* id) {
  return OnDevice(__func__, device, [&](const Ctx& c) -> nvmlReturn_t {
    if (id == nullptr || c.dev->mig == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *id = c.dev->mig->compute_instance_id;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetAttributes_v2(nvmlDevice_t device, nvmlDeviceAttributes_t* attributes) {
  return OnDevice(__func__, device, [&](const Ctx& c) -> nvmlReturn_t {
    if (attributes == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *attributes = nvmlDeviceAttributes_t{};
    // H200: 132 SMs over 7 slices (a slice has 16 of them in a MIG device).
    if (c.dev->mig != nullptr) {
      attributes->gpuInstanceSliceCount = c.dev->mig->slices;
      attributes->computeInstanceSliceCount = c.dev->mig->slices;
      attributes->multiprocessorCount = 16 * c.dev->mig->slices;
      attributes->memorySizeMB = MiB(c.dev->mig->memory_mib);
    } else {
      attributes->gpuInstanceSliceCount = 7;
      attributes->computeInstanceSliceCount = 7;
      attributes->multiprocessorCount = 132;
      attributes->memorySizeMB = MiB(c.spec().memory_total_mib);
    }
    attributes->sharedCopyEngineCount = attributes->gpuInstanceSliceCount;
    attributes->sharedDecoderCount = attributes->gpuInstanceSliceCount;
    attributes->sharedJpegCount = attributes->gpuInstanceSliceCount;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfo(nvmlDevice_t device, unsigned profile,
                                                 nvmlGpuInstanceProfileInfo_t* info) {
  return OnDevice(__func__, device, [&](const Ctx& c) -> nvmlReturn_t {
    if (info == nullptr || c.dev->mig != nullptr || profile > kMaxProfileIndex) {
      return NVML_ERROR_INVALID_ARGUMENT;
    }
    for (const auto& p : c.spec().mig_profiles) {
      if (p.index != profile) continue;
      *info = nvmlGpuInstanceProfileInfo_t{};
      info->id = p.index;
      info->sliceCount = p.slices;
      info->instanceCount = p.slices == 0 ? 0 : 7 / p.slices;
      info->multiprocessorCount = 16 * p.slices;
      info->copyEngineCount = p.slices;
      info->memorySizeMB = MiB(p.memory_mib);
      return NVML_SUCCESS;
    }
    return NVML_ERROR_NOT_SUPPORTED;  // a profile this GPU does not have
  });
}

}  // extern "C"
#pragma GCC visibility pop
