// Exported NVML entry points that name no device: init, error strings, system queries, event
// sets and GPM. Every function catches all exceptions (see call.h).
#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>

#include "call.h"
#include "events.h"

using nvmlx::simgpu::Ctx;
using nvmlx::simgpu::OnSystem;
using nvmlx::simgpu::Simulator;

namespace {

// What nvmlGpmSample_t points at. `magic` tells our buffers from foreign or freed pointers.
struct GpmSample {
  static constexpr unsigned kMagic = 0x47504D53;  // "GPMS"
  unsigned magic = kMagic;
  std::shared_ptr<const nvmlx::simgpu::World> world;  // null until nvmlGpmSampleGet filled it
  unsigned gpu = 0;                                   // for the GPU's fault rules
  const nvmlx::simgpu::GpuSpec* spec = nullptr;       // whose values: the GPU's or a MIG device's
  double t = 0;
};

GpmSample* FromHandle(nvmlGpmSample_t handle) {
  auto* s = reinterpret_cast<GpmSample*>(handle);
  return s != nullptr && s->magic == GpmSample::kMagic ? s : nullptr;
}

// nvmlGpmMetricId_t -> the scenario key that drives it (ids: docs/nvml.md §3).
std::optional<nvmlx::simgpu::ValueKey> GpmKey(unsigned metric_id) {
  using nvmlx::simgpu::ValueKey;
  switch (metric_id) {
    case 1:
      return ValueKey::kGpmGraphicsUtil;
    case 2:
      return ValueKey::kGpmSmUtil;
    case 3:
      return ValueKey::kGpmSmOccupancy;
    case 4:
      return ValueKey::kGpmIntegerUtil;
    case 5:
      return ValueKey::kGpmAnyTensorUtil;
    case 6:
      return ValueKey::kGpmDfmaTensorUtil;
    case 7:
      return ValueKey::kGpmHmmaTensorUtil;
    case 9:
      return ValueKey::kGpmImmaTensorUtil;
    case 10:
      return ValueKey::kGpmDramBwUtil;
    case 11:
      return ValueKey::kGpmFp64Util;
    case 12:
      return ValueKey::kGpmFp32Util;
    case 13:
      return ValueKey::kGpmFp16Util;
    case 20:
      return ValueKey::kGpmPcieTxMibs;
    case 21:
      return ValueKey::kGpmPcieRxMibs;
    case 60:
      return ValueKey::kGpmNvlinkRxMibs;  // RX comes first in the header
    case 61:
      return ValueKey::kGpmNvlinkTxMibs;
    default:
      return std::nullopt;
  }
}

}  // namespace

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

// Not NVML: the simulator's test control (SCENARIO.md "Time"). Moves the clock frozen by
// NVMLX_SIMGPU_FROZEN_TIME_S to `seconds`; Xids falling due are delivered at once.
nvmlReturn_t nvmlxSimSetFrozenTime(double seconds) {
  try {
    return Simulator::Get().SetFrozenTime(seconds);
  } catch (...) {
    return NVML_ERROR_UNKNOWN;
  }
}

// Not NVML: ends every `hang: true` call in progress and makes hang rules answer at once until
// the next init (SCENARIO.md "Faults"). Tests call it through tools/simgpu/sim_control.h.
nvmlReturn_t nvmlxSimReleaseHangs() {
  nvmlx::simgpu::HangGate::Get().Release();
  return NVML_SUCCESS;
}

// Not NVML: how many `hang: true` calls are blocked now, so that a test can wait until a read
// is inside its hung call before it moves a deadline (SCENARIO.md "Faults").
int nvmlxSimHungCalls() { return nvmlx::simgpu::HangGate::Get().waiting(); }

// Not NVML: how many times `key` (a per-device NVML function's name, or "field:<NVML field id>"
// of nvmlDeviceGetFieldValues) was called since load; -1 for a null key.
long long nvmlxSimCallCount(const char* key) {
  try {
    return key == nullptr ? -1 : nvmlx::simgpu::CallCount(key);
  } catch (...) {
    return -1;
  }
}

nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
  return OnSystem(__func__,
                  [&](const Ctx&) -> nvmlReturn_t { return Simulator::Get().FreeEventSet(set); });
}

// GPM (SCENARIO.md "GPM"): a GPU with `gpm: true` supports it. A sample records its device and
// simulation time; nvmlGpmMetricsGet averages each metric's value function over [t1, t2] with
// the closed-form integral, so a square wave reads as its duty-cycle average, as real counters do.
nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t device, nvmlGpmSupport_t* gpmSupport) {
  return nvmlx::simgpu::OnDevice(__func__, device, [&](const Ctx& c) -> nvmlReturn_t {
    if (gpmSupport == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    // GPM takes the raw version 1, not NVML_STRUCT_VERSION (go-nvml#168).
    if (gpmSupport->version != NVML_GPM_SUPPORT_VERSION) {
      return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    }
    gpmSupport->isSupportedDevice = c.spec().gpm ? 1 : 0;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t* gpmSample) {
  return OnSystem(__func__, [&](const Ctx&) -> nvmlReturn_t {
    if (gpmSample == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *gpmSample = reinterpret_cast<nvmlGpmSample_t>(new GpmSample());
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t gpmSample) {
  return OnSystem(__func__, [&](const Ctx&) -> nvmlReturn_t {
    GpmSample* s = FromHandle(gpmSample);
    if (s == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    s->magic = 0;  // a double free is then caught instead of corrupting the heap
    delete s;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t device, nvmlGpmSample_t gpmSample) {
  return nvmlx::simgpu::OnDevice(__func__, device, [&](const Ctx& c) -> nvmlReturn_t {
    GpmSample* s = FromHandle(gpmSample);
    if (s == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (!c.spec().gpm) return NVML_ERROR_NOT_SUPPORTED;
    s->world = c.world;
    s->gpu = c.dev->index;
    s->spec = &c.spec();  // on a MIG handle: that compute instance's values
    s->t = c.t;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlGpmMigSampleGet(nvmlDevice_t device, unsigned gpuInstanceId,
                                 nvmlGpmSample_t gpmSample) {
  // A GPU-instance-level sample through the parent GPU: the values of the GI's (first) MIG
  // device.
  return nvmlx::simgpu::OnDevice(__func__, device, [&](const Ctx& c) -> nvmlReturn_t {
    GpmSample* s = FromHandle(gpmSample);
    if (s == nullptr || c.dev->mig != nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (!c.spec().gpm || !c.spec().mig_enabled) return NVML_ERROR_NOT_SUPPORTED;
    const nvmlx::simgpu::Device* mig = c.world->MigByGpuInstance(c.dev->index, gpuInstanceId);
    if (mig == nullptr) return NVML_ERROR_NOT_FOUND;
    s->world = c.world;
    s->gpu = c.dev->index;
    s->spec = mig->spec;
    s->t = c.t;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t* metricsGet) {
  try {
    if (metricsGet == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (metricsGet->version != NVML_GPM_METRICS_GET_VERSION) {
      return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    }
    const GpmSample* s1 = FromHandle(metricsGet->sample1);
    const GpmSample* s2 = FromHandle(metricsGet->sample2);
    if (s1 == nullptr || s2 == nullptr || !s1->world || s1->world != s2->world ||
        s1->gpu != s2->gpu || s1->spec != s2->spec ||
        metricsGet->numMetrics > NVMLX_GPM_METRIC_MAX) {
      return NVML_ERROR_INVALID_ARGUMENT;
    }
    // The samples name the GPU: its fault rules (and lost_after_s) apply to this call too.
    Ctx ctx;
    if (nvmlReturn_t rc = nvmlx::simgpu::EnterDevice(__func__, s1->world->handle(s1->gpu), &ctx);
        rc != NVML_SUCCESS) {
      return rc;
    }
    const nvmlx::simgpu::GpuSpec& spec = *s1->spec;
    const double t1 = std::min(s1->t, s2->t), t2 = std::max(s1->t, s2->t);
    for (unsigned i = 0; i < metricsGet->numMetrics; ++i) {
      nvmlGpmMetric_t& m = metricsGet->metrics[i];
      m.metricInfo = {nullptr, nullptr, nullptr};
      m.value = 0;
      if (m.metricId == 0 || m.metricId >= NVMLX_GPM_METRIC_MAX) {
        m.nvmlReturn = NVML_ERROR_INVALID_ARGUMENT;
        continue;
      }
      // Metrics without a scenario key (NVDEC, C2C, cumulative counters, …) read 0, as idle
      // engines do on a real H200.
      m.nvmlReturn = NVML_SUCCESS;
      if (auto key = GpmKey(m.metricId)) m.value = spec.value(*key).Average(t1, t2);
    }
    return NVML_SUCCESS;
  } catch (...) {
    return NVML_ERROR_UNKNOWN;
  }
}

}  // extern "C"
#pragma GCC visibility pop
