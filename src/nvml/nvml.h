// The NVML library as loaded at run time: the only code in nvml-exporter that calls NVML.
//
// Library::Load dlopen()s libnvidia-ml.so.1 (or the path given by --nvml-library /
// NVML_EXPORTER_NVML_LIBRARY, which is how the simulated GPUs of tools/simgpu come in: the very
// same path as the real driver), resolves every symbol of nvml_api.h by its versioned name and
// calls nvmlInit_v2. A symbol the driver lacks stays null and the typed wrappers below answer
// NOT_SUPPORTED, so an older driver disables single fields, never the program.
//
// Every NVML return code becomes a Status in exactly one place, FromNvmlReturn(), which keeps
// the function's name in the message ("nvmlDeviceGetFanSpeed: Not Supported (3)").
//
// Thread-safety: a loaded Library is immutable; all const methods may be called from any thread
// concurrently (NVML itself is thread-safe; it serialises internally on the RM lock).
#ifndef NVML_EXPORTER_NVML_NVML_H_
#define NVML_EXPORTER_NVML_NVML_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nvml/call_site.h"
#include "nvml/nvml_api.h"
#include "util/status.h"

namespace nvmlx::nvml {

// One function pointer per NVML entry point we use; null when the library lacks it.
struct Api {
#define NVMLX_API_MEMBER(name) decltype(&::name) name = nullptr;
  NVMLX_FOR_EACH_FUNCTION(NVMLX_API_MEMBER)
#undef NVMLX_API_MEMBER
};

// The seam: nvmlReturn_t -> Status, naming the function. error_string may be null.
Status FromNvmlReturn(nvmlReturn_t rc, std::string_view function,
                      const char* (*error_string)(nvmlReturn_t));

using Device = nvmlDevice_t;

struct PciInfo {
  std::string bus_id;  // "00000000:00:06.0", as NVML's busId (upper-case hex)
  unsigned pci_device_id = 0;
  unsigned pci_subsystem_id = 0;
};

struct MemoryInfo {
  uint64_t total = 0;
  uint64_t free = 0;
  uint64_t used = 0;  // v2: excludes reserved; v1 (driver < 510): includes it
  uint64_t reserved = 0;
  bool has_reserved = false;  // false when only the v1 call exists
};

struct Utilization {
  unsigned gpu = 0;
  unsigned memory = 0;
};

// The health part of nvmlDeviceGetGpuFabricInfoV. `summary` is empty when the driver only has
// the v2 struct (no healthSummary there).
struct FabricHealth {
  unsigned mask = 0;  // NVML_GPU_FABRIC_HEALTH_MASK_* sub-fields, as the driver gives them
  std::optional<unsigned> summary;
};

// An owned NVML handle that NVML frees with a function of its own (GPM samples: nvmlGpmSampleFree;
// event sets: nvmlEventSetFree): freed on destruction, move-only. Only Library creates them.
// Not thread-safe: one user at a time (NVML allows one waiter per event set, and a GPM sample is
// filled and read by one reader); distinct handles are independent.
class Library;

template <typename Handle>
class OwnedHandle {
 public:
  OwnedHandle() = default;
  ~OwnedHandle() { Reset(); }
  OwnedHandle(OwnedHandle&& other) noexcept { *this = std::move(other); }
  OwnedHandle& operator=(OwnedHandle&& other) noexcept {
    if (this != &other) {
      Reset();
      handle_ = other.handle_;
      free_ = other.free_;
      other.handle_ = nullptr;
    }
    return *this;
  }
  OwnedHandle(const OwnedHandle&) = delete;
  OwnedHandle& operator=(const OwnedHandle&) = delete;

  Handle get() const { return handle_; }
  explicit operator bool() const { return handle_ != nullptr; }

 private:
  friend class Library;
  void Reset() {
    if (handle_ != nullptr && free_ != nullptr) free_(handle_);
    handle_ = nullptr;
  }
  Handle handle_ = nullptr;
  nvmlReturn_t (*free_)(Handle) = nullptr;
};

// A GPM sample buffer: filled by Library::GpmSampleGet, read by Library::GpmMetricsGet.
using GpmSample = OwnedHandle<nvmlGpmSample_t>;
// An event set: registration and waiting go through Library (the XidWatcher's thread owns it).
using EventSet = OwnedHandle<nvmlEventSet_t>;

// nvmlGpmMetricsGet computes at most this many metrics per call here: drivers differ in
// NVML_GPM_METRIC_MAX (98 / 210 / 333) and older ones misbehave with large requests
// (DataDog/datadog-agent#47669), so callers batch.
inline constexpr size_t kGpmMaxMetricsPerCall = 20;

struct RemappedRows {
  unsigned correctable = 0;
  unsigned uncorrectable = 0;
  unsigned pending = 0;
  unsigned failure = 0;
};

// One NVML event (nvmlEventSetWait_v2). For Xid events `data` is the Xid; gpu_instance and
// compute_instance are 0xFFFFFFFF when the event is not attributed to a MIG instance.
struct Event {
  Device device = nullptr;
  uint64_t type = 0;
  uint64_t data = 0;
  unsigned gpu_instance = 0;
  unsigned compute_instance = 0;
};

// One compute process with a context on a device (nvmlProcessInfo_t, whatever stride the driver
// wrote). used_memory_bytes is 0 when NVML reports it unavailable.
struct ProcessInfo {
  unsigned pid = 0;
  uint64_t used_memory_bytes = 0;
  unsigned gpu_instance_id = 0xFFFFFFFF;  // 0xFFFFFFFF when MIG is off or unknown (legacy call)
  unsigned compute_instance_id = 0xFFFFFFFF;
};

// One per-process utilization sample (either API), percentages clamped to 0..100.
struct ProcessUtilization {
  unsigned pid = 0;
  uint64_t timestamp_us = 0;  // as NVML gives it (Unix-epoch µs on R580)
  unsigned sm = 0;
  unsigned memory = 0;
  unsigned encoder = 0;
  unsigned decoder = 0;
};

class Library {
 public:
  // Loads `path` ("libnvidia-ml.so.1" searches the dynamic linker path) and initialises NVML.
  // Errors: NOT_FOUND when dlopen fails (message holds dlerror()), or NVML's own init error.
  static Result<std::unique_ptr<Library>> Load(const std::string& path);
  ~Library();
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  const std::string& path() const { return path_; }
  // The file dlopen actually mapped (from dladdr), for the "using NVML from …" log line.
  const std::string& resolved_path() const { return resolved_path_; }
  const Api& api() const { return api_; }
  // Names of the symbols this library lacks (for one start-up debug line).
  std::vector<std::string> MissingSymbols() const;

  // Generic call through the seam: NOT_SUPPORTED when the symbol is absent.
  template <typename Fn, typename... Args>
  Status Call(std::string_view name, Fn* fn, Args... args) const {
    if (fn == nullptr) {
      return NotSupported(std::string(name) + ": symbol not present in " + path_);
    }
    nvmlReturn_t rc;
    {
      CallScope scope(name.data());  // every caller passes a string literal
      rc = fn(args...);
    }
    return FromNvmlReturn(rc, name, api_.nvmlErrorString);
  }

  // --- System ----------------------------------------------------------------------------
  Result<std::string> DriverVersion() const;
  Result<std::string> NvmlVersion() const;
  Result<int> CudaDriverVersion() const;
  Result<unsigned> DeviceCount() const;
  Result<Device> DeviceByIndex(unsigned index) const;

  // --- Identity (read once at start-up) ----------------------------------------------------
  Result<std::string> Uuid(Device d) const;
  Result<std::string> Name(Device d) const;
  Result<PciInfo> Pci(Device d) const;
  Result<unsigned> MinorNumber(Device d) const;
  Result<std::string> Serial(Device d) const;
  Result<int> Brand(Device d) const;
  Result<std::string> VbiosVersion(Device d) const;
  Result<std::string> InforomVersion(Device d, nvmlInforomObject_t object) const;
  Result<std::string> InforomImageVersion(Device d) const;

  // --- Values ------------------------------------------------------------------------------
  Result<unsigned> ClockMhz(Device d, nvmlClockType_t type) const;
  Result<unsigned> MaxClockMhz(Device d, nvmlClockType_t type) const;
  Result<unsigned> GpuTemperatureC(Device d) const;
  Result<unsigned> PowerUsageMw(Device d) const;
  Result<uint64_t> TotalEnergyMj(Device d) const;
  Result<unsigned> PowerLimitMw(Device d) const;
  Result<unsigned> EnforcedPowerLimitMw(Device d) const;
  Result<unsigned> DefaultPowerLimitMw(Device d) const;
  Result<std::pair<unsigned, unsigned>> PowerLimitConstraintsMw(Device d) const;
  Result<int> PerformanceState(Device d) const;
  Result<unsigned> FanSpeedPercent(Device d) const;
  Result<unsigned> PcieThroughputKBs(Device d, nvmlPcieUtilCounter_t counter) const;
  Result<unsigned> PcieReplayCounter(Device d) const;
  Result<unsigned> PcieLinkGen(Device d) const;
  Result<unsigned> PcieLinkWidth(Device d) const;
  Result<unsigned> MaxPcieLinkGen(Device d) const;
  Result<unsigned> MaxPcieLinkWidth(Device d) const;
  Result<Utilization> UtilizationRates(Device d) const;
  Result<unsigned> EncoderUtilization(Device d) const;
  Result<unsigned> DecoderUtilization(Device d) const;
  // nvmlDeviceGetMemoryInfo_v2 when present (driver >= 510), else the v1 call.
  Result<MemoryInfo> Memory(Device d) const;
  Result<nvmlBAR1Memory_t> Bar1Memory(Device d) const;
  // One call for many fields; check each element's nvmlReturn afterwards.
  Status FieldValues(Device d, nvmlFieldValue_t* values, int count) const;
  Result<uint64_t> TotalEccErrors(Device d, nvmlMemoryErrorType_t type,
                                  nvmlEccCounterType_t counter) const;
  // Count of pages retired for `cause` (INSUFFICIENT_SIZE with a count counts as success).
  Result<unsigned> RetiredPageCount(Device d, nvmlPageRetirementCause_t cause) const;
  Result<RemappedRows> RemappedRowCounts(Device d) const;
  // nvmlDeviceGetP2PStatus from `a` to `b` for one capability (DCGM_EXP_P2P_STATUS asks NVLINK).
  Result<nvmlGpuP2PStatus_t> P2pStatus(Device a, Device b, nvmlGpuP2PCapsIndex_t caps) const;
  // One data-link error counter of one NVLink link (nvmlDeviceGetNvLinkErrorCounter). Without
  // NVLink NOT_SUPPORTED; a link past the GPU's last INVALID_ARGUMENT (docs/nvml.md).
  Result<uint64_t> NvlinkErrorCounter(Device d, unsigned link,
                                      nvmlNvLinkErrorCounter_t counter) const;
  // Whether NVLink `link` is active (nvmlDeviceGetNvLinkState); errors as NvlinkErrorCounter.
  Result<bool> NvlinkActive(Device d, unsigned link) const;
  Result<nvmlViolationTime_t> ViolationStatus(Device d, nvmlPerfPolicyType_t policy) const;
  // ClocksEventReasons (R535+), falling back to the ClocksThrottleReasons name.
  Result<uint64_t> ClocksEventReasons(Device d) const;
  // 1 when a vGPU licence is active, 0 otherwise (also when licensing is unsupported).
  Result<int> VgpuLicenseStatus(Device d) const;
  // nvmlDeviceGetGpuFabricInfoV with the v3 struct, then v2 when the driver rejects v3's
  // version (as DCGM 4.6's ReadFabricManagerStatusField). NOT_SUPPORTED without a fabric.
  Result<FabricHealth> GpuFabricHealth(Device d) const;

  // --- Events (Xid) ------------------------------------------------------------------------
  Result<EventSet> EventSetCreate() const;
  // nvmlDeviceRegisterEvents for `event_types` (e.g. nvmlEventTypeXidCriticalError) on `d`.
  Status RegisterEvents(Device d, uint64_t event_types, const EventSet& set) const;
  // Waits up to timeout_ms for the next event. NVML_ERROR_TIMEOUT is the ordinary "nothing
  // happened" outcome, not an error: it is an empty optional.
  Result<std::optional<Event>> WaitEvent(const EventSet& set, unsigned timeout_ms) const;

  // --- MIG (docs/nvml.md §5). Read-only: nothing here changes a GPU's MIG configuration. -----
  // The current MIG mode is ENABLE. A GPU without MIG support (NOT_SUPPORTED, or the symbol
  // absent) answers false rather than an error.
  Result<bool> MigEnabled(Device d) const;
  Result<unsigned> MaxMigDeviceCount(Device d) const;
  // The MIG device in slot `index` of `parent`; nullopt for an empty slot (NVML's NOT_FOUND).
  Result<std::optional<Device>> MigDeviceByIndex(Device parent, unsigned index) const;
  Result<unsigned> GpuInstanceId(Device mig) const;
  Result<unsigned> ComputeInstanceId(Device mig) const;
  // nvmlDeviceGetAttributes_v2: slice counts and memory size of a MIG device; no root needed.
  Result<nvmlDeviceAttributes_t> Attributes(Device d) const;
  // One GPU-instance profile of `parent` by profile index. NOT_SUPPORTED: this GPU lacks that
  // profile; INVALID_ARGUMENT: past the last index.
  Result<nvmlGpuInstanceProfileInfo_t> GpuInstanceProfileInfo(Device parent,
                                                              unsigned profile) const;

  // --- GPM (Hopper+; docs/nvml.md §3) -------------------------------------------------------
  // isSupportedDevice of nvmlGpmQueryDeviceSupport (version: the raw 1).
  Result<bool> GpmSupported(Device d) const;
  Result<GpmSample> GpmSampleAlloc() const;
  Status GpmSampleGet(Device d, const GpmSample& sample) const;
  // A GPU-instance-level sample (DCGM's GPU_I entity): `parent` is the GPU, not the MIG handle.
  Status GpmMigSampleGet(Device parent, unsigned gpu_instance_id, const GpmSample& sample) const;
  // The metrics `ids` computed from sample1 -> sample2, one Result per id (in order), from each
  // element's own nvmlReturn. At most kGpmMaxMetricsPerCall ids (INVALID_ARGUMENT otherwise).
  // A failure of the whole call is the returned Status.
  Result<std::vector<Result<double>>> GpmMetricsGet(const GpmSample& sample1,
                                                    const GpmSample& sample2,
                                                    std::span<const unsigned> ids) const;

  // --- Processes (docs/nvml.md §4) ---------------------------------------------------------
  // Compute processes with a context on `d`, ascending pid: _v3, else _v2, else the legacy
  // unversioned call. The entry stride of _v3/_v2 is measured against a sentinel-filled buffer
  // (drivers 535.43-535.86 wrote 32-byte entries under the same name); a stride that is none of
  // 16/24/32 is INTERNAL rather than misread.
  Result<std::vector<ProcessInfo>> ComputeProcesses(Device d) const;
  // Per-process utilization samples newer than `last_seen_us` (pass the largest timestamp of the
  // previous answer): nvmlDeviceGetProcessesUtilizationInfo where present (R550+), else
  // nvmlDeviceGetProcessUtilization. NVML's NOT_FOUND means "no new samples" (every process idle
  // since then) and is an empty vector, not an error. Values above 100 (zombie entries) are
  // clamped.
  Result<std::vector<ProcessUtilization>> ProcessUtilizations(Device d,
                                                              uint64_t last_seen_us) const;

 private:
  Library() = default;
  Result<std::string> ReadString(std::string_view name, Device d,
                                 nvmlReturn_t (*fn)(nvmlDevice_t, char*, unsigned),
                                 unsigned size) const;
  template <typename T, typename Fn>
  Result<T> ReadScalar(std::string_view name, Fn* fn, Device d) const;
  // Creates a handle that NVML frees with `free` (GPM samples, event sets).
  template <typename Handle>
  Result<OwnedHandle<Handle>> CreateOwned(std::string_view create_name,
                                          nvmlReturn_t (*create)(Handle*),
                                          std::string_view free_name,
                                          nvmlReturn_t (*free)(Handle)) const;

  std::string path_;
  std::string resolved_path_;
  void* handle_ = nullptr;
  bool initialised_ = false;
  Api api_;
};

}  // namespace nvmlx::nvml

#endif  // NVML_EXPORTER_NVML_NVML_H_
