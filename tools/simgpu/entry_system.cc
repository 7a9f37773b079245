// Exported NVML entry points that name no device: init, error strings, system queries, event
// sets and GPM. Every function catches all exceptions (see call.h).
#include <cstring>

#include "call.h"
#include "events.h"

using nvmlx::simgpu::Ctx;
using nvmlx::simgpu::OnSystem;
using nvmlx::simgpu::Simulator;

// The library is built with -fvisibility=hidden; these definitions, and nothing else, are
// exported (exports.map then keeps anything else that is not hidden out of the dynamic table).
#pragma GCC visibility push(default)
extern "C" {

const char* nvmlErrorString(nvmlReturn_t result) {
  // The driver's own texts (pynvml and DCGM copy the same table).
  switch (result) {
    case NVML_SUCCESS:
      return "Success";
    case NVML_ERROR_UNINITIALIZED:
      return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
      return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported";
    case NVML_ERROR_NO_PERMISSION:
      return "Insufficient Permissions";
    case NVML_ERROR_ALREADY_INITIALIZED:
      return "Already Initialized";
    case NVML_ERROR_NOT_FOUND:
      return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE:
      return "Insufficient Size";
    case NVML_ERROR_INSUFFICIENT_POWER:
      return "Insufficient External Power";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "Driver Not Loaded";
    case NVML_ERROR_TIMEOUT:
      return "Timeout";
    case NVML_ERROR_IRQ_ISSUE:
      return "Interrupt Request Issue";
    case NVML_ERROR_LIBRARY_NOT_FOUND:
      return "NVML Shared Library Not Found";
    case NVML_ERROR_FUNCTION_NOT_FOUND:
      return "Function Not Found";
    case NVML_ERROR_CORRUPTED_INFOROM:
      return "Corrupted infoROM";
    case NVML_ERROR_GPU_IS_LOST:
      return "GPU is lost";
    case NVML_ERROR_RESET_REQUIRED:
      return "GPU requires restart";
    case NVML_ERROR_OPERATING_SYSTEM:
      return "The operating system has blocked the request.";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
      return "RM has detected an NVML/RM version mismatch.";
    case NVML_ERROR_IN_USE:
      return "In use by another client";
    case NVML_ERROR_MEMORY:
      return "Insufficient Memory";
    case NVML_ERROR_NO_DATA:
      return "No data";
    case NVML_ERROR_VGPU_ECC_NOT_SUPPORTED:
      return "The requested vgpu operation is not available on target device, becasue ECC is "
             "enabled";
    case NVML_ERROR_INSUFFICIENT_RESOURCES:
      return "Ran out of critical resources, other than memory";
    case NVML_ERROR_FREQ_NOT_SUPPORTED:
      return "Frequency not supported";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH:
      return "The provided version is invalid/unsupported";
    case NVML_ERROR_DEPRECATED:
      return "The requested functionality has been deprecated";
    case NVML_ERROR_NOT_READY:
      return "The system is not ready for the request";
    case NVML_ERROR_GPU_NOT_FOUND:
      return "No GPUs were found";
    case NVML_ERROR_INVALID_STATE:
      return "Resource not in correct state to perform requested operation";
    default:
      return "Unknown Error";
  }
}

nvmlReturn_t nvmlInit_v2(void) {
  try {
    return Simulator::Get().Init();
  } catch (...) {
    return NVML_ERROR_UNKNOWN;
  }
}

nvmlReturn_t nvmlShutdown(void) {
  try {
    return Simulator::Get().Shutdown();
  } catch (...) {
    return NVML_ERROR_UNKNOWN;
  }
}

nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned length) {
  return OnSystem(__func__, [&](const Ctx& c) -> nvmlReturn_t {
    return nvmlx::simgpu::CopyString(c.world->scenario().driver_version, version, length);
  });
}

nvmlReturn_t nvmlSystemGetNVMLVersion(char* version, unsigned length) {
  return OnSystem(__func__, [&](const Ctx& c) -> nvmlReturn_t {
    return nvmlx::simgpu::CopyString(c.world->scenario().nvml_version, version, length);
  });
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* cudaDriverVersion) {
  return OnSystem(__func__, [&](const Ctx& c) -> nvmlReturn_t {
    if (cudaDriverVersion == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *cudaDriverVersion = c.world->scenario().cuda_driver_version;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned* deviceCount) {
  // Counts lost GPUs too, as the real driver does.
  return OnSystem(__func__, [&](const Ctx& c) -> nvmlReturn_t {
    if (deviceCount == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *deviceCount = static_cast<unsigned>(c.world->device_count());
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t* device) {
  try {
    Ctx c;
    if (nvmlReturn_t rc = nvmlx::simgpu::EnterIndex(__func__, index, &c); rc != NVML_SUCCESS) {
      return rc;
    }
    if (device == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *device = c.world->handle(index);
    return NVML_SUCCESS;
  } catch (...) {
    return NVML_ERROR_UNKNOWN;
  }
}

nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set) {
  return OnSystem(__func__,
                  [&](const Ctx&) -> nvmlReturn_t { return Simulator::Get().CreateEventSet(set); });
}

nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long eventTypes,
                                      nvmlEventSet_t set) {
  return nvmlx::simgpu::OnDevice(__func__, device, [&](const Ctx& c) -> nvmlReturn_t {
    auto s = Simulator::Get().FindEventSet(set);
    if (!s) return NVML_ERROR_INVALID_ARGUMENT;
    return s->Register(*c.dev, eventTypes);
  });
}

nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t* data, unsigned timeoutms) {
  return OnSystem(__func__, [&](const Ctx&) -> nvmlReturn_t {
    auto s = Simulator::Get().FindEventSet(set);
    if (!s || data == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    return s->Wait(data, timeoutms);
  });
}

nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
  return OnSystem(__func__,
                  [&](const Ctx&) -> nvmlReturn_t { return Simulator::Get().FreeEventSet(set); });
}

// GPM: the GPU reports no GPM support until GPM simulation exists; the rest is NOT_SUPPORTED.
nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t device, nvmlGpmSupport_t* gpmSupport) {
  return nvmlx::simgpu::OnDevice(__func__, device, [&](const Ctx&) -> nvmlReturn_t {
    if (gpmSupport == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    // GPM takes the raw version 1, not NVML_STRUCT_VERSION (go-nvml#168).
    if (gpmSupport->version != NVML_GPM_SUPPORT_VERSION) {
      return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    }
    gpmSupport->isSupportedDevice = 0;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t* gpmSample) {
  return OnSystem(__func__, [&](const Ctx&) -> nvmlReturn_t {
    if (gpmSample != nullptr) *gpmSample = nullptr;
    return NVML_ERROR_NOT_SUPPORTED;
  });
}

nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t) {
  return OnSystem(__func__, [&](const Ctx&) -> nvmlReturn_t { return NVML_ERROR_NOT_SUPPORTED; });
}

nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t device, nvmlGpmSample_t) {
  return nvmlx::simgpu::OnDevice(
      __func__, device, [&](const Ctx&) -> nvmlReturn_t { return NVML_ERROR_NOT_SUPPORTED; });
}

nvmlReturn_t nvmlGpmMigSampleGet(nvmlDevice_t device, unsigned, nvmlGpmSample_t) {
  return nvmlx::simgpu::OnDevice(
      __func__, device, [&](const Ctx&) -> nvmlReturn_t { return NVML_ERROR_NOT_SUPPORTED; });
}

nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t*) {
  return OnSystem(__func__, [&](const Ctx&) -> nvmlReturn_t { return NVML_ERROR_NOT_SUPPORTED; });
}

}  // extern "C"
#pragma GCC visibility pop
