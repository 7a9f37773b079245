// Exported per-device NVML entry points. Each runs the common prologue (init, handle, lost GPU,
// faults; call.h), then answers from the scenario's value functions at the call's time.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "call.h"

using nvmlx::simgpu::CopyString;
using nvmlx::simgpu::Ctx;
using nvmlx::simgpu::OnDevice;
using nvmlx::simgpu::ToU32;
using nvmlx::simgpu::ToU64;
using nvmlx::simgpu::ValueKey;

namespace {

constexpr unsigned long long kMiB = 1024ULL * 1024ULL;

// The common shape "one unsigned from one value key".
nvmlReturn_t ReadU32(const char* fn, nvmlDevice_t d, unsigned* out, ValueKey key,
                     double scale = 1) {
  return OnDevice(fn, d, [&](const Ctx& c) -> nvmlReturn_t {
    if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *out = ToU32(c.V(key) * scale);
    return NVML_SUCCESS;
  });
}

nvmlReturn_t ReadString(const char* fn, nvmlDevice_t d, char* buf, unsigned length,
                        std::string nvmlx::simgpu::GpuSpec::*field) {
  return OnDevice(fn, d, [&](const Ctx& c) -> nvmlReturn_t {
    return CopyString(c.spec().*field, buf, length);
  });
}

// Utilization (GPU, memory, encoder, decoder) is not available on a MIG-enabled GPU nor on a MIG
// device (docs/nvml.md §5).
bool NoUtilization(const Ctx& c) { return c.spec().mig_enabled || c.dev->mig != nullptr; }

nvmlReturn_t Utilization(const char* fn, nvmlDevice_t d, unsigned* util, unsigned* period,
                         ValueKey key) {
  return OnDevice(fn, d, [&](const Ctx& c) -> nvmlReturn_t {
    if (util == nullptr || period == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (NoUtilization(c)) return NVML_ERROR_NOT_SUPPORTED;
    *util = c.U32(key);
    *period = 167000;  // µs: the 1/6 s sample period the H200 reports
    return NVML_SUCCESS;
  });
}

nvmlReturn_t ClocksReasons(const char* fn, nvmlDevice_t d, unsigned long long* out) {
  return OnDevice(fn, d, [&](const Ctx& c) -> nvmlReturn_t {
    if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *out = c.U64(ValueKey::kClocksEventReasons);
    return NVML_SUCCESS;
  });
}

// The scenario key for a clock type: current (max=false) or maximum clocks.
bool ClockKey(nvmlClockType_t type, bool max, ValueKey* key) {
  switch (type) {
    case NVML_CLOCK_GRAPHICS:
      *key = max ? ValueKey::kMaxGraphicsClock : ValueKey::kGraphicsClock;
      return true;
    case NVML_CLOCK_SM:
      *key = max ? ValueKey::kMaxSmClock : ValueKey::kSmClock;
      return true;
    case NVML_CLOCK_MEM:
      *key = max ? ValueKey::kMaxMemClock : ValueKey::kMemClock;
      return true;
    case NVML_CLOCK_VIDEO:
      *key = max ? ValueKey::kMaxVideoClock : ValueKey::kVideoClock;
      return true;
  }
  return false;
}

nvmlReturn_t ReadClock(const char* fn, nvmlDevice_t device, nvmlClockType_t type, bool max,
                       unsigned* clock) {
  return OnDevice(fn, device, [&](const Ctx& c) -> nvmlReturn_t {
    ValueKey key;
    if (clock == nullptr || !ClockKey(type, max, &key)) return NVML_ERROR_INVALID_ARGUMENT;
    *clock = c.U32(key);
    return NVML_SUCCESS;
  });
}

}  // namespace

// The library is built with -fvisibility=hidden; these definitions, and nothing else, are
// exported (exports.map then keeps anything else that is not hidden out of the dynamic table).
#pragma GCC visibility push(default)
extern "C" {

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned length) {
  return ReadString(__func__, device, uuid, length, &nvmlx::simgpu::GpuSpec::uuid);
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned length) {
  return ReadString(__func__, device, name, length, &nvmlx::simgpu::GpuSpec::name);
}

nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t device, char* serial, unsigned length) {
  return ReadString(__func__, device, serial, length, &nvmlx::simgpu::GpuSpec::serial);
}

nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t device, char* version, unsigned length) {
  return ReadString(__func__, device, version, length, &nvmlx::simgpu::GpuSpec::vbios);
}

nvmlReturn_t nvmlDeviceGetInforomImageVersion(nvmlDevice_t device, char* version, unsigned length) {
  return ReadString(__func__, device, version, length, &nvmlx::simgpu::GpuSpec::inforom_image);
}

nvmlReturn_t nvmlDeviceGetInforomVersion(nvmlDevice_t device, nvmlInforomObject_t object,
                                         char* version, unsigned length) {
  return OnDevice(__func__, device, [&](const Ctx& c) -> nvmlReturn_t {
    switch (object) {
      case NVML_INFOROM_OEM:
        return CopyString(c.spec().inforom_oem, version, length);
      case NVML_INFOROM_ECC:
        return CopyString(c.spec().inforom_ecc, version, length);
      case NVML_INFOROM_POWER:
        return CopyString(c.spec().inforom_power, version, length);
    }
    return NVML_ERROR_INVALID_ARGUMENT;
  });
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return OnDevice(__func__, device, [&](const Ctx& c) -> nvmlReturn_t {
    if (pci == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    const auto& s = c.spec();
    *pci = nvmlPciInfo_t{};
    std::snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "%04X:%02X:%02X.0",
                  s.pci_domain & 0xFFFF, s.pci_bus, s.pci_device);
    pci->domain = s.pci_domain;
    pci->bus = s.pci_bus;
    pci->device = s.pci_device;
    pci->pciDeviceId = s.pci_device_id;
    pci->pciSubSystemId = s.pci_subsystem_id;
    std::snprintf(pci->busId, sizeof(pci->busId), "%s", s.pci_bus_id.c_str());
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned* minorNumber) {
  return OnDevice(__func__, device, [&](const Ctx& c) -> nvmlReturn_t {
    if (minorNumber == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *minorNumber = c.spec().minor_number;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned* index) {
  return OnDevice(__func__, device, [&](const Ctx& c) -> nvmlReturn_t {
    if (index == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *index = c.dev->index;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetBrand(nvmlDevice_t device, nvmlBrandType_t* type) {
  return OnDevice(__func__, device, [&](const Ctx& c) -> nvmlReturn_t {
    if (type == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *type = c.spec().brand;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned* clock) {
  return ReadClock(__func__, device, type, /*max=*/false, clock);
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned* clock) {
  return ReadClock(__func__, device, type, /*max=*/true, clock);
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensorType,
                                      unsigned* temp) {
  if (sensorType != NVML_TEMPERATURE_GPU) {
    return OnDevice(__func__, device,
                    [](const Ctx&) -> nvmlReturn_t { return NVML_ERROR_INVALID_ARGUMENT; });
  }
  return ReadU32(__func__, device, temp, ValueKey::kGpuTemp);
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned* power) {
  return ReadU32(__func__, device, power, ValueKey::kPowerW, 1000);
}

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long* energy) {
  return OnDevice(__func__, device, [&](const Ctx& c) -> nvmlReturn_t {
    if (energy == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *energy = ToU64(nvmlx::simgpu::EnergyMj(c));
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned* limit) {
  return ReadU32(__func__, device, limit, ValueKey::kPowerLimitW, 1000);
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t device, unsigned* minLimit,
                                                          unsigned* maxLimit) {
  return OnDevice(__func__, device, [&](const Ctx& c) -> nvmlReturn_t {
    if (minLimit == nullptr || maxLimit == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *minLimit = ToU32(c.V(ValueKey::kPowerLimitMinW) * 1000);
    *maxLimit = ToU32(c.V(ValueKey::kPowerLimitMaxW) * 1000);
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t device, unsigned* defaultLimit) {
  return ReadU32(__func__, device, defaultLimit, ValueKey::kPowerLimitDefaultW, 1000);
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned* limit) {
  return ReadU32(__func__, device, limit, ValueKey::kPowerLimitW, 1000);
}

nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t device, nvmlPstates_t* pState) {
  return OnDevice(__func__, device, [&](const Ctx& c) -> nvmlReturn_t {
    if (pState == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *pState = static_cast<nvmlPstates_t>(c.U32(ValueKey::kPstate));
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t device, unsigned* speed) {
  return ReadU32(__func__, device, speed, ValueKey::kFanSpeed);
}

nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t device, nvmlPcieUtilCounter_t counter,
                                         unsigned* value) {
  // The real call samples for 20 ms; the simulation answers at once (add block_ms to mimic it).
  return OnDevice(__func__, device, [&](const Ctx& c) -> nvmlReturn_t {
    if (value == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    switch (counter) {
      case NVML_PCIE_UTIL_TX_BYTES:
        *value = c.U32(ValueKey::kPcieTxKbs);
        break;
      case NVML_PCIE_UTIL_RX_BYTES:
        *value = c.U32(ValueKey::kPcieRxKbs);
        break;
      default:
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t device1, nvmlDevice_t device2,
                                    nvmlGpuP2PCapsIndex_t p2pIndex, nvmlGpuP2PStatus_t* p2pStatus) {
  // device2 is validated through its own OnDevice call (an invalid handle answers its error).
  nvmlReturn_t peer = OnDevice(__func__, device2, [](const Ctx&) { return NVML_SUCCESS; });
  if (peer != NVML_SUCCESS) return peer;
  return OnDevice(__func__, device1, [&](const Ctx& c) -> nvmlReturn_t {
    if (p2pStatus == nullptr || p2pIndex < 0 || p2pIndex >= NVML_P2P_CAPS_INDEX_UNKNOWN) {
      return NVML_ERROR_INVALID_ARGUMENT;
    }
    *p2pStatus = static_cast<nvmlGpuP2PStatus_t>(c.U32(ValueKey::kP2pStatus));
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t device, unsigned* value) {
  return ReadU32(__func__, device, value, ValueKey::kPcieReplay);
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device, unsigned* currLinkGen) {
  return ReadU32(__func__, device, currLinkGen, ValueKey::kPcieLinkGen);
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t device, unsigned* currLinkWidth) {
  return ReadU32(__func__, device, currLinkWidth, ValueKey::kPcieLinkWidth);
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t device, unsigned* maxLinkGen) {
  return ReadU32(__func__, device, maxLinkGen, ValueKey::kPcieMaxLinkGen);
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t device, unsigned* maxLinkWidth) {
  return ReadU32(__func__, device, maxLinkWidth, ValueKey::kPcieMaxLinkWidth);
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* utilization) {
  return OnDevice(__func__, device, [&](const Ctx& c) -> nvmlReturn_t {
    if (utilization == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (NoUtilization(c)) return NVML_ERROR_NOT_SUPPORTED;
    utilization->gpu = c.U32(ValueKey::kGpuUtil);
    utilization->memory = c.U32(ValueKey::kMemUtil);
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t device, unsigned* utilization,
                                             unsigned* samplingPeriodUs) {
  return Utilization(__func__, device, utilization, samplingPeriodUs, ValueKey::kEncUtil);
}

nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t device, unsigned* utilization,
                                             unsigned* samplingPeriodUs) {
  return Utilization(__func__, device, utilization, samplingPeriodUs, ValueKey::kDecUtil);
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  return OnDevice(__func__, device, [&](const Ctx& c) -> nvmlReturn_t {
    if (memory == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    const unsigned long long total = ToU64(c.spec().memory_total_mib * kMiB);
    // v1 counts the reserved memory as used.
    const unsigned long long used =
        std::min(total, ToU64((c.V(ValueKey::kFbUsedMib) + c.V(ValueKey::kFbReservedMib)) * kMiB));
    memory->total = total;
    memory->used = used;
    memory->free = total - used;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t* memory) {
  return OnDevice(__func__, device, [&](const Ctx& c) -> nvmlReturn_t {
    if (memory == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (memory->version != nvmlMemory_v2) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    const unsigned long long total = ToU64(c.spec().memory_total_mib * kMiB);
    const unsigned long long reserved =
        std::min(total, ToU64(c.V(ValueKey::kFbReservedMib) * kMiB));
    const unsigned long long used =
        std::min(total - reserved, ToU64(c.V(ValueKey::kFbUsedMib) * kMiB));
    memory->total = total;
    memory->reserved = reserved;
    memory->used = used;
    memory->free = total - reserved - used;  // total = reserved + free + used exactly
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t device, nvmlBAR1Memory_t* bar1Memory) {
  return OnDevice(__func__, device, [&](const Ctx& c) -> nvmlReturn_t {
    if (bar1Memory == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    const unsigned long long total = ToU64(c.V(ValueKey::kBar1TotalMib) * kMiB);
    const unsigned long long used = std::min(total, ToU64(c.V(ValueKey::kBar1UsedMib) * kMiB));
    bar1Memory->bar1Total = total;
    bar1Memory->bar1Used = used;
    bar1Memory->bar1Free = total - used;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int valuesCount,
                                      nvmlFieldValue_t* values) {
  return OnDevice(__func__, device, [&](const Ctx& c) -> nvmlReturn_t {
    if (valuesCount < 0 || (valuesCount > 0 && values == nullptr)) {
      return NVML_ERROR_INVALID_ARGUMENT;
    }
    for (int i = 0; i < valuesCount; ++i) {
      nvmlFieldValue_t* v = &values[i];
      nvmlx::simgpu::FillFieldValue(c, v);
      // Per-element faults ("nvmlDeviceGetFieldValues:<fi>") fail the element, not the call.
      auto action = c.world->faults().ForField(c.dev->index, v->fieldId, c.t);
      if (nvmlReturn_t rc = nvmlx::simgpu::Apply(action); rc != NVML_SUCCESS) {
        v->nvmlReturn = rc;
        v->value.ullVal = 0;
      }
    }
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, nvmlMemoryErrorType_t errorType,
                                         nvmlEccCounterType_t counterType,
                                         unsigned long long* eccCounts) {
  return OnDevice(__func__, device, [&](const Ctx& c) -> nvmlReturn_t {
    if (eccCounts == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    const bool corrected = errorType == NVML_MEMORY_ERROR_TYPE_CORRECTED;
    if (!corrected && errorType != NVML_MEMORY_ERROR_TYPE_UNCORRECTED) {
      return NVML_ERROR_INVALID_ARGUMENT;
    }
    switch (counterType) {
      case NVML_VOLATILE_ECC:
        *eccCounts = c.U64(corrected ? ValueKey::kEccSbeVol : ValueKey::kEccDbeVol);
        return NVML_SUCCESS;
      case NVML_AGGREGATE_ECC:
        *eccCounts = c.U64(corrected ? ValueKey::kEccSbeAgg : ValueKey::kEccDbeAgg);
        return NVML_SUCCESS;
    }
    return NVML_ERROR_INVALID_ARGUMENT;
  });
}

nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t device, nvmlPageRetirementCause_t cause,
                                       unsigned* pageCount, unsigned long long* addresses) {
  return OnDevice(__func__, device, [&](const Ctx& c) -> nvmlReturn_t {
    if (pageCount == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    unsigned count = 0;
    switch (cause) {
      case NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS:
        count = c.U32(ValueKey::kRetiredSbe);
        break;
      case NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR:
        count = c.U32(ValueKey::kRetiredDbe);
        break;
      default:
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    // As the driver: a buffer too small (or none) answers INSUFFICIENT_SIZE with the count.
    const unsigned capacity = addresses == nullptr ? 0 : *pageCount;
    *pageCount = count;
    if (capacity < count) return NVML_ERROR_INSUFFICIENT_SIZE;
    for (unsigned i = 0; i < count; ++i) addresses[i] = 0x1000ULL * (i + 1);  // made-up pages
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned* corrRows, unsigned* uncRows,
                                       unsigned* isPending, unsigned* failureOccurred) {
  return OnDevice(__func__, device, [&](const Ctx& c) -> nvmlReturn_t {
    if (!corrRows || !uncRows || !isPending || !failureOccurred) {
      return NVML_ERROR_INVALID_ARGUMENT;
    }
    *corrRows = c.U32(ValueKey::kRemappedCor);
    *uncRows = c.U32(ValueKey::kRemappedUnc);
    *isPending = c.U32(ValueKey::kRemappedPending);
    *failureOccurred = c.U32(ValueKey::kRemappedFailure);
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetViolationStatus(nvmlDevice_t device, nvmlPerfPolicyType_t perfPolicyType,
                                          nvmlViolationTime_t* violTime) {
  return OnDevice(__func__, device, [&](const Ctx& c) -> nvmlReturn_t {
    if (violTime == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    ValueKey key;
    switch (perfPolicyType) {
      case NVML_PERF_POLICY_POWER:
        key = ValueKey::kViolationPowerNs;
        break;
      case NVML_PERF_POLICY_THERMAL:
        key = ValueKey::kViolationThermalNs;
        break;
      case NVML_PERF_POLICY_SYNC_BOOST:
        key = ValueKey::kViolationSyncBoostNs;
        break;
      case NVML_PERF_POLICY_BOARD_LIMIT:
        key = ValueKey::kViolationBoardLimitNs;
        break;
      case NVML_PERF_POLICY_LOW_UTILIZATION:
        key = ValueKey::kViolationLowUtilNs;
        break;
      case NVML_PERF_POLICY_RELIABILITY:
        key = ValueKey::kViolationReliabilityNs;
        break;
      case NVML_PERF_POLICY_TOTAL_APP_CLOCKS:
        key = ValueKey::kViolationAppClocksNs;
        break;
      case NVML_PERF_POLICY_TOTAL_BASE_CLOCKS:
        key = ValueKey::kViolationBaseClocksNs;
        break;
      default:
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    violTime->referenceTime = static_cast<unsigned long long>(c.world->EpochMicros(c.t));
    violTime->violationTime = c.U64(key);
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                                    unsigned long long* clocksEventReasons) {
  return ClocksReasons(__func__, device, clocksEventReasons);
}

nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
                                                       unsigned long long* clocksThrottleReasons) {
  return ClocksReasons(__func__, device, clocksThrottleReasons);
}

nvmlReturn_t nvmlDeviceGetGridLicensableFeatures_v4(nvmlDevice_t device,
                                                    nvmlGridLicensableFeatures_t* features) {
  return OnDevice(__func__, device, [&](const Ctx& c) -> nvmlReturn_t {
    if (features == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *features = nvmlGridLicensableFeatures_t{};
    // vgpu_license 0: a bare-metal GPU without vGPU licensing, as the real H200 reports.
    if (c.V(ValueKey::kVgpuLicense) <= 0) return NVML_SUCCESS;
    features->isGridLicenseSupported = 1;
    features->licensableFeaturesCount = 1;
    auto& f = features->gridLicensableFeatures[0];
    f.featureCode = NVML_GRID_LICENSE_FEATURE_CODE_VGPU;
    f.featureState = 1;
    f.featureEnabled = 1;
    std::snprintf(f.licenseInfo, sizeof(f.licenseInfo), "%s", "simgpu licence");
    std::snprintf(f.productName, sizeof(f.productName), "%s", "NVIDIA Virtual Compute Server");
    return NVML_SUCCESS;
  });
}

// The fabric info of an NVSwitch-connected GPU (SCENARIO.md "fabric_*"): the caller's version
// field picks the layout, as in the driver; a version newer than fabric_info_version answers
// ARGUMENT_VERSION_MISMATCH.
nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t device, nvmlGpuFabricInfoV_t* gpuFabricInfo) {
  return OnDevice(__func__, device, [&](const Ctx& c) -> nvmlReturn_t {
    if (gpuFabricInfo == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    const unsigned have = c.U32(ValueKey::kFabricInfoVersion);
    if (have == 0) return NVML_ERROR_NOT_SUPPORTED;
    const unsigned version = gpuFabricInfo->version;
    if (version != nvmlGpuFabricInfo_v2 && version != nvmlGpuFabricInfo_v3) {
      return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    }
    if (version == nvmlGpuFabricInfo_v3 && have < 3) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    // The v2 layout is the first 36 bytes of v3: write only those for a v2 caller.
    std::memset(gpuFabricInfo->clusterUuid, 0, sizeof(gpuFabricInfo->clusterUuid));
    gpuFabricInfo->status = NVML_SUCCESS;
    gpuFabricInfo->cliqueId = 0;
    gpuFabricInfo->state = 3;  // NVML_GPU_FABRIC_STATE_COMPLETED
    gpuFabricInfo->healthMask = c.U32(ValueKey::kFabricHealthMask);
    if (version == nvmlGpuFabricInfo_v3) {
      gpuFabricInfo->healthSummary =
          static_cast<unsigned char>(c.U32(ValueKey::kFabricHealthSummary));
    }
    return NVML_SUCCESS;
  });
}

}  // extern "C"
#pragma GCC visibility pop
