#include "nvml/nvml.h"

#include <dlfcn.h>
#include <link.h>

#include <cstring>

namespace nvmlx::nvml {
namespace {

StatusCode CodeFor(nvmlReturn_t rc) {
  switch (rc) {
    case NVML_SUCCESS:
      return StatusCode::kOk;
    case NVML_ERROR_NOT_SUPPORTED:
    case NVML_ERROR_FUNCTION_NOT_FOUND:
    case NVML_ERROR_VGPU_ECC_NOT_SUPPORTED:
    case NVML_ERROR_DEPRECATED:
      return StatusCode::kNotSupported;
    case NVML_ERROR_NO_PERMISSION:
      return StatusCode::kNoPermission;
    case NVML_ERROR_GPU_IS_LOST:
      return StatusCode::kGpuLost;
    case NVML_ERROR_INVALID_ARGUMENT:
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH:
      return StatusCode::kInvalidArgument;
    case NVML_ERROR_NOT_FOUND:
    case NVML_ERROR_GPU_NOT_FOUND:
    case NVML_ERROR_LIBRARY_NOT_FOUND:
      return StatusCode::kNotFound;
    case NVML_ERROR_UNINITIALIZED:
    case NVML_ERROR_DRIVER_NOT_LOADED:
    case NVML_ERROR_TIMEOUT:
    case NVML_ERROR_NOT_READY:
    case NVML_ERROR_IN_USE:
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
      return StatusCode::kUnavailable;
    default:
      return StatusCode::kInternal;
  }
}

}  // namespace

Status FromNvmlReturn(nvmlReturn_t rc, std::string_view function,
                      const char* (*error_string)(nvmlReturn_t)) {
  if (rc == NVML_SUCCESS) return Status::Ok();
  const char* text = error_string != nullptr ? error_string(rc) : nullptr;
  std::string msg(function);
  msg += ": ";
  msg += (text != nullptr && *text != '\0') ? text : "NVML error";
  msg += " (" + std::to_string(rc) + ")";
  return Status(CodeFor(rc), std::move(msg));
}

Result<std::unique_ptr<Library>> Library::Load(const std::string& path) {
  std::unique_ptr<Library> lib(new Library());
  lib->path_ = path;
  // RTLD_NOW: resolve the library's own dependencies now, not in the middle of a collection.
  lib->handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib->handle_ == nullptr) {
    const char* err = dlerror();
    return NotFound("cannot load NVML library " + path + ": " + (err ? err : "dlopen failed"));
  }
#define NVMLX_RESOLVE(name) \
  lib->api_.name = reinterpret_cast<decltype(&::name)>(dlsym(lib->handle_, #name));
  NVMLX_FOR_EACH_FUNCTION(NVMLX_RESOLVE)
#undef NVMLX_RESOLVE
  struct link_map* map = nullptr;
  if (dlinfo(lib->handle_, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name) {
    lib->resolved_path_ = map->l_name;
  }
  if (lib->resolved_path_.empty()) lib->resolved_path_ = path;
  if (lib->api_.nvmlInit_v2 == nullptr) {
    return NotFound(path + " has no nvmlInit_v2: not an NVML library");
  }
  Status st = lib->Call("nvmlInit_v2", lib->api_.nvmlInit_v2);
  if (!st.ok()) return st;
  lib->initialised_ = true;
  return lib;
}

Library::~Library() {
  if (initialised_ && api_.nvmlShutdown != nullptr) api_.nvmlShutdown();
  // The library is left mapped: a driver thread may still run its exit path, and unmapping
  // the real libnvidia-ml on exit is a known source of crashes. The process owns one anyway.
}

std::vector<std::string> Library::MissingSymbols() const {
  std::vector<std::string> out;
#define NVMLX_MISSING(name) \
  if (api_.name == nullptr) out.emplace_back(#name);
  NVMLX_FOR_EACH_FUNCTION(NVMLX_MISSING)
#undef NVMLX_MISSING
  return out;
}

Result<std::string> Library::ReadString(std::string_view name, Device d,
                                        nvmlReturn_t (*fn)(nvmlDevice_t, char*, unsigned),
                                        unsigned size) const {
  std::string buf(size, '\0');
  Status st = Call(name, fn, d, buf.data(), size);
  if (!st.ok()) return st;
  buf.resize(strnlen(buf.data(), size));
  return buf;
}

template <typename T, typename Fn>
Result<T> Library::ReadScalar(std::string_view name, Fn* fn, Device d) const {
  T value{};
  Status st = Call(name, fn, d, &value);
  if (!st.ok()) return st;
  return value;
}

Result<std::string> Library::DriverVersion() const {
  char buf[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
  Status st = Call("nvmlSystemGetDriverVersion", api_.nvmlSystemGetDriverVersion, buf,
                   static_cast<unsigned>(sizeof(buf)));
  if (!st.ok()) return st;
  return std::string(buf, strnlen(buf, sizeof(buf)));
}

Result<std::string> Library::NvmlVersion() const {
  char buf[NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE] = {};
  Status st = Call("nvmlSystemGetNVMLVersion", api_.nvmlSystemGetNVMLVersion, buf,
                   static_cast<unsigned>(sizeof(buf)));
  if (!st.ok()) return st;
  return std::string(buf, strnlen(buf, sizeof(buf)));
}

Result<int> Library::CudaDriverVersion() const {
  int v = 0;
  Status st = Call("nvmlSystemGetCudaDriverVersion_v2", api_.nvmlSystemGetCudaDriverVersion_v2, &v);
  if (!st.ok()) return st;
  return v;
}

Result<unsigned> Library::DeviceCount() const {
  unsigned n = 0;
  Status st = Call("nvmlDeviceGetCount_v2", api_.nvmlDeviceGetCount_v2, &n);
  if (!st.ok()) return st;
  return n;
}

Result<Device> Library::DeviceByIndex(unsigned index) const {
  Device d = nullptr;
  Status st = Call("nvmlDeviceGetHandleByIndex_v2", api_.nvmlDeviceGetHandleByIndex_v2, index, &d);
  if (!st.ok()) return st;
  return d;
}

Result<std::string> Library::Uuid(Device d) const {
  return ReadString("nvmlDeviceGetUUID", d, api_.nvmlDeviceGetUUID,
                    NVML_DEVICE_UUID_V2_BUFFER_SIZE);
}
Result<std::string> Library::Name(Device d) const {
  return ReadString("nvmlDeviceGetName", d, api_.nvmlDeviceGetName,
                    NVML_DEVICE_NAME_V2_BUFFER_SIZE);
}
Result<std::string> Library::Serial(Device d) const {
  return ReadString("nvmlDeviceGetSerial", d, api_.nvmlDeviceGetSerial,
                    NVML_DEVICE_SERIAL_BUFFER_SIZE);
}
Result<std::string> Library::VbiosVersion(Device d) const {
  return ReadString("nvmlDeviceGetVbiosVersion", d, api_.nvmlDeviceGetVbiosVersion,
                    NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE);
}
Result<std::string> Library::InforomImageVersion(Device d) const {
  return ReadString("nvmlDeviceGetInforomImageVersion", d, api_.nvmlDeviceGetInforomImageVersion,
                    NVML_DEVICE_INFOROM_VERSION_BUFFER_SIZE);
}
Result<std::string> Library::InforomVersion(Device d, nvmlInforomObject_t object) const {
  char buf[NVML_DEVICE_INFOROM_VERSION_BUFFER_SIZE] = {};
  Status st = Call("nvmlDeviceGetInforomVersion", api_.nvmlDeviceGetInforomVersion, d, object, buf,
                   static_cast<unsigned>(sizeof(buf)));
  if (!st.ok()) return st;
  return std::string(buf, strnlen(buf, sizeof(buf)));
}

Result<PciInfo> Library::Pci(Device d) const {
  nvmlPciInfo_t raw{};
  Status st = Call("nvmlDeviceGetPciInfo_v3", api_.nvmlDeviceGetPciInfo_v3, d, &raw);
  if (!st.ok()) return st;
  PciInfo out;
  out.bus_id.assign(raw.busId, strnlen(raw.busId, sizeof(raw.busId)));
  out.pci_device_id = raw.pciDeviceId;
  out.pci_subsystem_id = raw.pciSubSystemId;
  return out;
}

Result<unsigned> Library::MinorNumber(Device d) const {
  return ReadScalar<unsigned>("nvmlDeviceGetMinorNumber", api_.nvmlDeviceGetMinorNumber, d);
}
Result<int> Library::Brand(Device d) const {
  return ReadScalar<int>("nvmlDeviceGetBrand", api_.nvmlDeviceGetBrand, d);
}

Result<unsigned> Library::ClockMhz(Device d, nvmlClockType_t type) const {
  unsigned v = 0;
  Status st = Call("nvmlDeviceGetClockInfo", api_.nvmlDeviceGetClockInfo, d, type, &v);
  if (!st.ok()) return st;
  return v;
}
Result<unsigned> Library::MaxClockMhz(Device d, nvmlClockType_t type) const {
  unsigned v = 0;
  Status st = Call("nvmlDeviceGetMaxClockInfo", api_.nvmlDeviceGetMaxClockInfo, d, type, &v);
  if (!st.ok()) return st;
  return v;
}
Result<unsigned> Library::GpuTemperatureC(Device d) const {
  unsigned v = 0;
  Status st =
      Call("nvmlDeviceGetTemperature", api_.nvmlDeviceGetTemperature, d, NVML_TEMPERATURE_GPU, &v);
  if (!st.ok()) return st;
  return v;
}
Result<unsigned> Library::PowerUsageMw(Device d) const {
  return ReadScalar<unsigned>("nvmlDeviceGetPowerUsage", api_.nvmlDeviceGetPowerUsage, d);
}
Result<uint64_t> Library::TotalEnergyMj(Device d) const {
  unsigned long long v = 0;
  Status st =
      Call("nvmlDeviceGetTotalEnergyConsumption", api_.nvmlDeviceGetTotalEnergyConsumption, d, &v);
  if (!st.ok()) return st;
  return static_cast<uint64_t>(v);
}
Result<unsigned> Library::PowerLimitMw(Device d) const {
  return ReadScalar<unsigned>("nvmlDeviceGetPowerManagementLimit",
                              api_.nvmlDeviceGetPowerManagementLimit, d);
}
Result<unsigned> Library::EnforcedPowerLimitMw(Device d) const {
  return ReadScalar<unsigned>("nvmlDeviceGetEnforcedPowerLimit",
                              api_.nvmlDeviceGetEnforcedPowerLimit, d);
}
Result<unsigned> Library::DefaultPowerLimitMw(Device d) const {
  return ReadScalar<unsigned>("nvmlDeviceGetPowerManagementDefaultLimit",
                              api_.nvmlDeviceGetPowerManagementDefaultLimit, d);
}
Result<std::pair<unsigned, unsigned>> Library::PowerLimitConstraintsMw(Device d) const {
  unsigned lo = 0, hi = 0;
  Status st = Call("nvmlDeviceGetPowerManagementLimitConstraints",
                   api_.nvmlDeviceGetPowerManagementLimitConstraints, d, &lo, &hi);
  if (!st.ok()) return st;
  return std::make_pair(lo, hi);
}
Result<int> Library::PerformanceState(Device d) const {
  return ReadScalar<int>("nvmlDeviceGetPerformanceState", api_.nvmlDeviceGetPerformanceState, d);
}
Result<unsigned> Library::FanSpeedPercent(Device d) const {
  return ReadScalar<unsigned>("nvmlDeviceGetFanSpeed", api_.nvmlDeviceGetFanSpeed, d);
}
Result<unsigned> Library::PcieThroughputKBs(Device d, nvmlPcieUtilCounter_t counter) const {
  unsigned v = 0;
  Status st = Call("nvmlDeviceGetPcieThroughput", api_.nvmlDeviceGetPcieThroughput, d, counter, &v);
  if (!st.ok()) return st;
  return v;
}
Result<unsigned> Library::PcieReplayCounter(Device d) const {
  return ReadScalar<unsigned>("nvmlDeviceGetPcieReplayCounter", api_.nvmlDeviceGetPcieReplayCounter,
                              d);
}
Result<unsigned> Library::PcieLinkGen(Device d) const {
  return ReadScalar<unsigned>("nvmlDeviceGetCurrPcieLinkGeneration",
                              api_.nvmlDeviceGetCurrPcieLinkGeneration, d);
}
Result<unsigned> Library::PcieLinkWidth(Device d) const {
  return ReadScalar<unsigned>("nvmlDeviceGetCurrPcieLinkWidth", api_.nvmlDeviceGetCurrPcieLinkWidth,
                              d);
}
Result<unsigned> Library::MaxPcieLinkGen(Device d) const {
  return ReadScalar<unsigned>("nvmlDeviceGetMaxPcieLinkGeneration",
                              api_.nvmlDeviceGetMaxPcieLinkGeneration, d);
}
Result<unsigned> Library::MaxPcieLinkWidth(Device d) const {
  return ReadScalar<unsigned>("nvmlDeviceGetMaxPcieLinkWidth", api_.nvmlDeviceGetMaxPcieLinkWidth,
                              d);
}
Result<Utilization> Library::UtilizationRates(Device d) const {
  nvmlUtilization_t raw{};
  Status st = Call("nvmlDeviceGetUtilizationRates", api_.nvmlDeviceGetUtilizationRates, d, &raw);
  if (!st.ok()) return st;
  return Utilization{raw.gpu, raw.memory};
}
Result<unsigned> Library::EncoderUtilization(Device d) const {
  unsigned util = 0, period = 0;
  Status st = Call("nvmlDeviceGetEncoderUtilization", api_.nvmlDeviceGetEncoderUtilization, d,
                   &util, &period);
  if (!st.ok()) return st;
  return util;
}
Result<unsigned> Library::DecoderUtilization(Device d) const {
  unsigned util = 0, period = 0;
  Status st = Call("nvmlDeviceGetDecoderUtilization", api_.nvmlDeviceGetDecoderUtilization, d,
                   &util, &period);
  if (!st.ok()) return st;
  return util;
}

Result<MemoryInfo> Library::Memory(Device d) const {
  MemoryInfo out;
  if (api_.nvmlDeviceGetMemoryInfo_v2 != nullptr) {
    nvmlMemory_v2_t raw{};
    raw.version = nvmlMemory_v2;
    Status st = Call("nvmlDeviceGetMemoryInfo_v2", api_.nvmlDeviceGetMemoryInfo_v2, d, &raw);
    if (st.ok()) {
      out.total = raw.total;
      out.free = raw.free;
      out.used = raw.used;
      out.reserved = raw.reserved;
      out.has_reserved = true;
      return out;
    }
    // Drivers before 510 export the symbol's name in some builds but reject the call.
    if (st.code() != StatusCode::kNotSupported && st.code() != StatusCode::kInvalidArgument) {
      return st;
    }
  }
  nvmlMemory_t raw{};
  Status st = Call("nvmlDeviceGetMemoryInfo", api_.nvmlDeviceGetMemoryInfo, d, &raw);
  if (!st.ok()) return st;
  out.total = raw.total;
  out.free = raw.free;
  out.used = raw.used;
  return out;
}

Result<nvmlBAR1Memory_t> Library::Bar1Memory(Device d) const {
  return ReadScalar<nvmlBAR1Memory_t>("nvmlDeviceGetBAR1MemoryInfo",
                                      api_.nvmlDeviceGetBAR1MemoryInfo, d);
}

Status Library::FieldValues(Device d, nvmlFieldValue_t* values, int count) const {
  return Call("nvmlDeviceGetFieldValues", api_.nvmlDeviceGetFieldValues, d, count, values);
}

Result<uint64_t> Library::TotalEccErrors(Device d, nvmlMemoryErrorType_t type,
                                         nvmlEccCounterType_t counter) const {
  unsigned long long v = 0;
  Status st =
      Call("nvmlDeviceGetTotalEccErrors", api_.nvmlDeviceGetTotalEccErrors, d, type, counter, &v);
  if (!st.ok()) return st;
  return static_cast<uint64_t>(v);
}

Result<unsigned> Library::RetiredPageCount(Device d, nvmlPageRetirementCause_t cause) const {
  if (api_.nvmlDeviceGetRetiredPages == nullptr) {
    return NotSupported("nvmlDeviceGetRetiredPages: symbol not present in " + path_);
  }
  unsigned count = 0;
  nvmlReturn_t rc;
  {
    CallScope scope("nvmlDeviceGetRetiredPages");
    rc = api_.nvmlDeviceGetRetiredPages(d, cause, &count, nullptr);
  }
  // Asking with a zero-sized buffer answers INSUFFICIENT_SIZE together with the count.
  if (rc == NVML_ERROR_INSUFFICIENT_SIZE) rc = NVML_SUCCESS;
  Status st = FromNvmlReturn(rc, "nvmlDeviceGetRetiredPages", api_.nvmlErrorString);
  if (!st.ok()) return st;
  return count;
}

Result<RemappedRows> Library::RemappedRowCounts(Device d) const {
  RemappedRows r;
  Status st = Call("nvmlDeviceGetRemappedRows", api_.nvmlDeviceGetRemappedRows, d, &r.correctable,
                   &r.uncorrectable, &r.pending, &r.failure);
  if (!st.ok()) return st;
  return r;
}

Result<nvmlGpuP2PStatus_t> Library::P2pStatus(Device a, Device b,
                                              nvmlGpuP2PCapsIndex_t caps) const {
  nvmlGpuP2PStatus_t status = NVML_P2P_STATUS_UNKNOWN;
  Status st = Call("nvmlDeviceGetP2PStatus", api_.nvmlDeviceGetP2PStatus, a, b, caps, &status);
  if (!st.ok()) return st;
  return status;
}

Result<uint64_t> Library::NvlinkErrorCounter(Device d, unsigned link,
                                             nvmlNvLinkErrorCounter_t counter) const {
  unsigned long long v = 0;
  Status st = Call("nvmlDeviceGetNvLinkErrorCounter", api_.nvmlDeviceGetNvLinkErrorCounter, d, link,
                   counter, &v);
  if (!st.ok()) return st;
  return static_cast<uint64_t>(v);
}

Result<bool> Library::NvlinkActive(Device d, unsigned link) const {
  nvmlEnableState_t active = NVML_FEATURE_DISABLED;
  Status st = Call("nvmlDeviceGetNvLinkState", api_.nvmlDeviceGetNvLinkState, d, link, &active);
  if (!st.ok()) return st;
  return active == NVML_FEATURE_ENABLED;
}

Result<nvmlViolationTime_t> Library::ViolationStatus(Device d, nvmlPerfPolicyType_t policy) const {
  nvmlViolationTime_t v{};
  Status st =
      Call("nvmlDeviceGetViolationStatus", api_.nvmlDeviceGetViolationStatus, d, policy, &v);
  if (!st.ok()) return st;
  return v;
}

Result<uint64_t> Library::ClocksEventReasons(Device d) const {
  unsigned long long v = 0;
  if (api_.nvmlDeviceGetCurrentClocksEventReasons != nullptr) {
    Status st = Call("nvmlDeviceGetCurrentClocksEventReasons",
                     api_.nvmlDeviceGetCurrentClocksEventReasons, d, &v);
    if (!st.ok()) return st;
    return static_cast<uint64_t>(v);
  }
  Status st = Call("nvmlDeviceGetCurrentClocksThrottleReasons",
                   api_.nvmlDeviceGetCurrentClocksThrottleReasons, d, &v);
  if (!st.ok()) return st;
  return static_cast<uint64_t>(v);
}

Result<FabricHealth> Library::GpuFabricHealth(Device d) const {
  nvmlGpuFabricInfo_v3_t v3{};
  v3.version = nvmlGpuFabricInfo_v3;
  Status st = Call("nvmlDeviceGetGpuFabricInfoV", api_.nvmlDeviceGetGpuFabricInfoV, d, &v3);
  if (st.ok()) return FabricHealth{v3.healthMask, v3.healthSummary};
  // ARGUMENT_VERSION_MISMATCH (kInvalidArgument): a driver from before the v3 struct.
  if (st.code() != StatusCode::kInvalidArgument) return st;
  // The v2 layout is v3's first 36 bytes (healthMask at the same offset), so the v3 buffer
  // carries it; the version field tells the driver which layout to write.
  nvmlGpuFabricInfo_v3_t v2{};
  v2.version = nvmlGpuFabricInfo_v2;
  st = Call("nvmlDeviceGetGpuFabricInfoV", api_.nvmlDeviceGetGpuFabricInfoV, d, &v2);
  if (!st.ok()) return st;
  return FabricHealth{v2.healthMask, std::nullopt};
}

Result<int> Library::VgpuLicenseStatus(Device d) const {
  nvmlGridLicensableFeatures_t f{};
  Status st = Call("nvmlDeviceGetGridLicensableFeatures_v4",
                   api_.nvmlDeviceGetGridLicensableFeatures_v4, d, &f);
  if (!st.ok()) return st;
  if (f.isGridLicenseSupported == 0) return 0;
  unsigned n = f.licensableFeaturesCount < 3 ? f.licensableFeaturesCount : 3;
  for (unsigned i = 0; i < n; ++i) {
    const auto& feat = f.gridLicensableFeatures[i];
    if (feat.featureCode == NVML_GRID_LICENSE_FEATURE_CODE_VGPU && feat.featureState > 0) return 1;
  }
  return 0;
}

Result<bool> Library::MigEnabled(Device d) const {
  unsigned current = NVML_DEVICE_MIG_DISABLE, pending = NVML_DEVICE_MIG_DISABLE;
  Status st = Call("nvmlDeviceGetMigMode", api_.nvmlDeviceGetMigMode, d, &current, &pending);
  // Pre-Ampere GPUs, consumer boards and old drivers have no MIG: that is "off", not a failure.
  if (st.code() == StatusCode::kNotSupported) return false;
  if (!st.ok()) return st;
  return current == NVML_DEVICE_MIG_ENABLE;
}

Result<unsigned> Library::MaxMigDeviceCount(Device d) const {
  return ReadScalar<unsigned>("nvmlDeviceGetMaxMigDeviceCount", api_.nvmlDeviceGetMaxMigDeviceCount,
                              d);
}

Result<std::optional<Device>> Library::MigDeviceByIndex(Device parent, unsigned index) const {
  if (api_.nvmlDeviceGetMigDeviceHandleByIndex == nullptr) {
    return NotSupported("nvmlDeviceGetMigDeviceHandleByIndex: symbol not present in " + path_);
  }
  Device mig = nullptr;
  nvmlReturn_t rc;
  {
    CallScope scope("nvmlDeviceGetMigDeviceHandleByIndex");
    rc = api_.nvmlDeviceGetMigDeviceHandleByIndex(parent, index, &mig);
  }
  if (rc == NVML_ERROR_NOT_FOUND) return std::optional<Device>();  // empty slot
  Status st = FromNvmlReturn(rc, "nvmlDeviceGetMigDeviceHandleByIndex", api_.nvmlErrorString);
  if (!st.ok()) return st;
  return std::optional<Device>(mig);
}

Result<unsigned> Library::GpuInstanceId(Device mig) const {
  return ReadScalar<unsigned>("nvmlDeviceGetGpuInstanceId", api_.nvmlDeviceGetGpuInstanceId, mig);
}

Result<unsigned> Library::ComputeInstanceId(Device mig) const {
  return ReadScalar<unsigned>("nvmlDeviceGetComputeInstanceId", api_.nvmlDeviceGetComputeInstanceId,
                              mig);
}

Result<nvmlDeviceAttributes_t> Library::Attributes(Device d) const {
  return ReadScalar<nvmlDeviceAttributes_t>("nvmlDeviceGetAttributes_v2",
                                            api_.nvmlDeviceGetAttributes_v2, d);
}

Result<nvmlGpuInstanceProfileInfo_t> Library::GpuInstanceProfileInfo(Device parent,
                                                                     unsigned profile) const {
  nvmlGpuInstanceProfileInfo_t info{};
  Status st = Call("nvmlDeviceGetGpuInstanceProfileInfo", api_.nvmlDeviceGetGpuInstanceProfileInfo,
                   parent, profile, &info);
  if (!st.ok()) return st;
  return info;
}

Result<bool> Library::GpmSupported(Device d) const {
  nvmlGpmSupport_t support{};
  support.version = NVML_GPM_SUPPORT_VERSION;  // raw 1, not NVMLX_STRUCT_VERSION (go-nvml#168)
  Status st = Call("nvmlGpmQueryDeviceSupport", api_.nvmlGpmQueryDeviceSupport, d, &support);
  if (!st.ok()) return st;
  return support.isSupportedDevice != 0;
}

template <typename Handle>
Result<OwnedHandle<Handle>> Library::CreateOwned(std::string_view create_name,
                                                 nvmlReturn_t (*create)(Handle*),
                                                 std::string_view free_name,
                                                 nvmlReturn_t (*free)(Handle)) const {
  // Without the matching free function the handle would leak: treat it as unsupported.
  if (free == nullptr) {
    return NotSupported(std::string(free_name) + ": symbol not present in " + path_);
  }
  Handle handle = nullptr;
  Status st = Call(create_name, create, &handle);
  if (!st.ok()) return st;
  OwnedHandle<Handle> owned;
  owned.handle_ = handle;
  owned.free_ = free;
  return owned;
}

Result<EventSet> Library::EventSetCreate() const {
  return CreateOwned("nvmlEventSetCreate", api_.nvmlEventSetCreate, "nvmlEventSetFree",
                     api_.nvmlEventSetFree);
}

Status Library::RegisterEvents(Device d, uint64_t event_types, const EventSet& set) const {
  if (!set) return InvalidArgument("nvmlDeviceRegisterEvents: empty event set");
  return Call("nvmlDeviceRegisterEvents", api_.nvmlDeviceRegisterEvents, d,
              static_cast<unsigned long long>(event_types), set.get());
}

Result<std::optional<Event>> Library::WaitEvent(const EventSet& set, unsigned timeout_ms) const {
  if (!set) return InvalidArgument("nvmlEventSetWait_v2: empty event set");
  if (api_.nvmlEventSetWait_v2 == nullptr) {
    return NotSupported("nvmlEventSetWait_v2: symbol not present in " + path_);
  }
  nvmlEventData_t data{};
  nvmlReturn_t rc;
  {
    CallScope scope("nvmlEventSetWait_v2");
    rc = api_.nvmlEventSetWait_v2(set.get(), &data, timeout_ms);
  }
  if (rc == NVML_ERROR_TIMEOUT) return std::optional<Event>();
  Status st = FromNvmlReturn(rc, "nvmlEventSetWait_v2", api_.nvmlErrorString);
  if (!st.ok()) return st;
  return std::optional<Event>(Event{data.device, data.eventType, data.eventData, data.gpuInstanceId,
                                    data.computeInstanceId});
}

Result<GpmSample> Library::GpmSampleAlloc() const {
  return CreateOwned("nvmlGpmSampleAlloc", api_.nvmlGpmSampleAlloc, "nvmlGpmSampleFree",
                     api_.nvmlGpmSampleFree);
}

Status Library::GpmSampleGet(Device d, const GpmSample& sample) const {
  if (!sample) return InvalidArgument("nvmlGpmSampleGet: no sample buffer");
  return Call("nvmlGpmSampleGet", api_.nvmlGpmSampleGet, d, sample.get());
}

Status Library::GpmMigSampleGet(Device parent, unsigned gpu_instance_id,
                                const GpmSample& sample) const {
  if (!sample) return InvalidArgument("nvmlGpmMigSampleGet: no sample buffer");
  return Call("nvmlGpmMigSampleGet", api_.nvmlGpmMigSampleGet, parent, gpu_instance_id,
              sample.get());
}

Result<std::vector<Result<double>>> Library::GpmMetricsGet(const GpmSample& sample1,
                                                           const GpmSample& sample2,
                                                           std::span<const unsigned> ids) const {
  if (!sample1 || !sample2) return InvalidArgument("nvmlGpmMetricsGet: no sample buffer");
  if (ids.size() > kGpmMaxMetricsPerCall) {
    return InvalidArgument("nvmlGpmMetricsGet: too many metrics in one call (" +
                           std::to_string(ids.size()) + ")");
  }
  // 13 KB: on the heap, the collector thread's stack need not hold it.
  auto request = std::make_unique<nvmlGpmMetricsGet_t>();
  std::memset(request.get(), 0, sizeof(*request));
  request->version = NVML_GPM_METRICS_GET_VERSION;  // raw 1
  request->numMetrics = static_cast<unsigned>(ids.size());
  request->sample1 = sample1.get();
  request->sample2 = sample2.get();
  for (size_t i = 0; i < ids.size(); ++i) request->metrics[i].metricId = ids[i];
  Status st = Call("nvmlGpmMetricsGet", api_.nvmlGpmMetricsGet, request.get());
  if (!st.ok()) return st;
  std::vector<Result<double>> out;
  out.reserve(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    const nvmlGpmMetric_t& m = request->metrics[i];
    if (m.nvmlReturn != NVML_SUCCESS) {
      out.emplace_back(FromNvmlReturn(m.nvmlReturn,
                                      "nvmlGpmMetricsGet(metric " + std::to_string(ids[i]) + ")",
                                      api_.nvmlErrorString));
    } else {
      out.emplace_back(m.value);
    }
  }
  return out;
}

}  // namespace nvmlx::nvml
