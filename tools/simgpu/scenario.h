// The scenario that drives the simulated GPUs (SCENARIO.md): what each GPU is called, how its
// values move over time, which calls fail, and when Xid events fire.
//
// ParseScenario() turns YAML text into a Scenario or into one "file:line: what was expected"
// message; it never throws (yaml-cpp exceptions are caught inside). A parsed Scenario is an
// immutable value: any number of threads may read one concurrently.
#ifndef NVML_EXPORTER_TOOLS_SIMGPU_SCENARIO_H_
#define NVML_EXPORTER_TOOLS_SIMGPU_SCENARIO_H_

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "value.h"

namespace nvmlx::simgpu {

// Every key of a GPU's `values:` map. The order is the order of kValueKeys below.
enum class ValueKey : int {
  kGpuUtil,
  kMemUtil,
  kEncUtil,
  kDecUtil,
  kSmClock,
  kMemClock,
  kGraphicsClock,
  kVideoClock,
  kMaxSmClock,
  kMaxMemClock,
  kMaxGraphicsClock,
  kMaxVideoClock,
  kGpuTemp,
  kMemTemp,
  kPowerW,
  kPowerLimitW,
  kPowerLimitMinW,
  kPowerLimitMaxW,
  kPowerLimitDefaultW,
  kEnergyMjAtStart,
  kFbUsedMib,
  kFbReservedMib,
  kBar1TotalMib,
  kBar1UsedMib,
  kPstate,
  kFanSpeed,
  kPcieTxKbs,
  kPcieRxKbs,
  kPcieReplay,
  kPcieLinkGen,
  kPcieLinkWidth,
  kPcieMaxLinkGen,
  kPcieMaxLinkWidth,
  kClocksEventReasons,
  kEccSbeVol,
  kEccDbeVol,
  kEccSbeAgg,
  kEccDbeAgg,
  kRetiredSbe,
  kRetiredDbe,
  kRetiredPending,
  kRemappedCor,
  kRemappedUnc,
  kRemappedPending,
  kRemappedFailure,
  kViolationPowerNs,
  kViolationThermalNs,
  kViolationSyncBoostNs,
  kViolationBoardLimitNs,
  kViolationLowUtilNs,
  kViolationReliabilityNs,
  kViolationAppClocksNs,
  kViolationBaseClocksNs,
  kViolationSwThermalNs,
  kViolationHwThermalNs,
  kViolationHwPowerBrakeNs,
  kNvlinkCrcFlitErrors,
  kNvlinkCrcDataErrors,
  kNvlinkReplayErrors,
  kNvlinkRecoveryErrors,
  kNvlinkTxKib,
  kNvlinkRxKib,
  kPcieCorrectableErrors,
  kVgpuLicense,
  kP2pStatus,
  kRecoveryAction,
  kNvlinkLinks,
  kNvlinkInactiveMask,
  // GPM metrics in the header's units (percent 0-100, MiB/s); nvmlGpmMetricsGet averages them
  // over the window between its two samples.
  kGpmGraphicsUtil,
  kGpmSmUtil,
  kGpmSmOccupancy,
  kGpmIntegerUtil,
  kGpmAnyTensorUtil,
  kGpmDfmaTensorUtil,
  kGpmHmmaTensorUtil,
  kGpmImmaTensorUtil,
  kGpmDramBwUtil,
  kGpmFp64Util,
  kGpmFp32Util,
  kGpmFp16Util,
  kGpmPcieTxMibs,
  kGpmPcieRxMibs,
  kGpmNvlinkTxMibs,
  kGpmNvlinkRxMibs,
  // nvmlDeviceGetGpuFabricInfoV: the health mask and summary, and the newest struct version the
  // simulated driver has (3; 2: v3 answers ARGUMENT_VERSION_MISMATCH; 0: NOT_SUPPORTED, no fabric).
  kFabricHealthMask,
  kFabricHealthSummary,
  kFabricInfoVersion,
  kCount,  // not a key
};
inline constexpr int kNumValueKeys = static_cast<int>(ValueKey::kCount);

struct ValueKeyInfo {
  ValueKey key;
  std::string_view name;  // as written in the scenario
  double default_value;
};
// One entry per ValueKey, in enum order.
extern const std::array<ValueKeyInfo, kNumValueKeys> kValueKeys;
std::optional<ValueKey> ValueKeyFromName(std::string_view name);

// One GPU-instance profile of a GPU (nvmlDeviceGetGpuInstanceProfileInfo by profile index).
struct MigProfileSpec {
  unsigned index = 0;  // NVML_GPU_INSTANCE_PROFILE_* index
  unsigned slices = 0;
  double memory_mib = 0;
};

// A compute process on a GPU (SCENARIO.md "Processes"): present from start_s until end_s, its
// memory and utilization value functions of time like any value key.
struct ProcessSpec {
  unsigned pid = 0;
  ValueFn memory_mib = ValueFn::Constant(0);
  ValueFn sm_util = ValueFn::Constant(0);
  ValueFn mem_util = ValueFn::Constant(0);
  double start_s = 0;
  std::optional<double> end_s;
  bool RunningAt(double t) const { return t >= start_s && (!end_s || t < *end_s); }
};

// The simulated CUPTI's view of a GPU (libcupti.so.13 built from cupti_sim.cc; SCENARIO.md
// "PM sampling").
struct PmSamplingSpec {
  bool present = false;             // the GPU has a `pm_sampling` map in the scenario
  std::string chip;                 // cuptiDeviceGetChipName; empty: GH100 with gpm, else GA102
  unsigned metrics_per_pass = 7;    // the host API's pass count: ceil(metrics / this)
  double busy_until_s = 0;          // Enable answers HARDWARE_BUSY before this time; < 0: always
  unsigned decode_error_after = 0;  // each session's Nth decode answers UNKNOWN; 0: never
  // cuptiPmSamplingSetConfig takes this long (the driver's 105-141 ms on GH100, measured); it
  // makes a GPU's set-up outlast a short read deadline outside any NVML call.
  unsigned set_config_ms = 0;
  std::vector<std::string> missing_metrics;  // metric base names this chip lacks
  // Each decode leaves its newest sample in flight (populated, not complete) until the next one,
  // as the H200 delivered records under load; re-initialising the image then loses it.
  bool straddle = false;
  double stall_after_s =
      0;  // > 0: a session completes no sample after this long (the H200's stall)
  // With stall_after_s: only sessions whose configuration holds every metric (base name) of one
  // of these sets stall; empty: every session.
  std::vector<std::vector<std::string>> stall_combinations;
};

struct GpuSpec {
  std::string name = "NVIDIA H200";
  std::string uuid;        // default: derived from the index
  std::string pci_bus_id;  // normalised to upper case "DDDDDDDD:BB:DD.F"
  unsigned pci_domain = 0, pci_bus = 0, pci_device = 0;
  unsigned pci_device_id = 0x233510DE;  // H200 SXM: device 0x2335, vendor 0x10DE
  unsigned pci_subsystem_id = 0x18BE10DE;
  std::string serial;
  std::string vbios = "96.00.AF.00.01";
  int brand = 14;  // NVML_BRAND_NVIDIA
  unsigned minor_number = 0;
  double memory_total_mib = 143771;
  std::string inforom_oem = "2.1", inforom_ecc = "7.16", inforom_power = "1.0";
  std::string inforom_image = "G525.0225.00.03";
  bool gpm = false;  // nvmlGpmQueryDeviceSupport's isSupportedDevice (Hopper+: true)
  PmSamplingSpec pm_sampling;
  bool mig_enabled = false;                   // a `mig:` map is present
  std::vector<MigProfileSpec> mig_profiles;   // ascending index; default: H200-like table
  std::array<ValueFn, kNumValueKeys> values;  // every key set, defaults included
  std::vector<ProcessSpec> processes;         // ascending pid, unique
  // Entry size nvmlDeviceGetComputeRunningProcesses_v3 writes: 24, or 32 as drivers
  // 535.43-535.86 did (the stride trap of docs/nvml.md §4).
  unsigned process_info_stride = 24;

  const ValueFn& value(ValueKey k) const { return values[static_cast<int>(k)]; }
};

// A fault rule. Exactly one of: a call fault (call_name set, optionally with field_id), or a
// lost-GPU rule (lost_after_s set).
struct Fault {
  std::optional<unsigned> gpu;       // nullopt = every GPU ("*")
  std::string call;                  // NVML function name; empty for a lost_after_s rule
  std::optional<unsigned> field_id;  // "nvmlDeviceGetFieldValues:<fi>"
  std::optional<int> error;          // nvmlReturn_t to answer
  double block_ms = 0;
  // Blocks with no end until released (nvmlxSimReleaseHangs or NVMLX_SIMGPU_RELEASE_FILE).
  bool hang = false;
  double after_s = 0;
  std::optional<double> until_s;
  std::optional<double> lost_after_s;
  int line = 0;  // 1-based line in the scenario, for messages
};

// One MIG device (a compute instance) of a MIG-enabled GPU. Its `spec` answers the per-device
// calls made on the MIG handle: the parent's identity, with the instance's UUID, name, memory
// and value functions (every key at its default unless the instance sets it).
struct MigDeviceSpec {
  unsigned gpu = 0;   // parent GPU index
  unsigned slot = 0;  // nvmlDeviceGetMigDeviceHandleByIndex index
  unsigned gpu_instance_id = 0;
  unsigned compute_instance_id = 0;
  unsigned profile = 0;  // MigProfileSpec::index
  unsigned slices = 0;
  double memory_mib = 0;  // nvmlDeviceGetAttributes_v2 memorySizeMB and the memory total
  GpuSpec spec;
};

// nvmlDeviceGetMaxMigDeviceCount of a MIG-enabled GPU (7 slices: at most 7 MIG devices).
inline constexpr unsigned kMaxMigDevices = 7;

struct XidEvent {
  unsigned gpu = 0;
  double at_s = 0;
  unsigned long long xid = 0;
};

struct Scenario {
  std::string source;  // file name, or "<built-in>"
  std::string driver_version = "580.159.04";
  std::string nvml_version = "13.580.159.04";
  int cuda_driver_version = 13000;
  std::vector<GpuSpec> gpus;
  std::vector<MigDeviceSpec> mig_devices;  // by GPU, then slot
  std::vector<Fault> faults;
  std::vector<XidEvent> xids;  // sorted by at_s
};

// Either a Scenario or the error "<source>:<line>: <what was expected>".
using ParseResult = std::variant<Scenario, std::string>;

// Parses YAML (or JSON) text. `source` names it in error messages.
ParseResult ParseScenario(std::string_view text, const std::string& source);
// Reads and parses a file; a read error is reported as "<path>: cannot read: <reason>".
ParseResult LoadScenarioFile(const std::string& path);
// The built-in default scenario (SCENARIO.md, last section).
ParseResult DefaultScenario();
extern const char* const kDefaultScenarioYaml;

// "NOT_SUPPORTED" -> NVML_ERROR_NOT_SUPPORTED ("SUCCESS" -> 0); nullopt when unknown.
std::optional<int> ReturnCodeFromName(std::string_view name);
// True for a name in NVMLX_FOR_EACH_FUNCTION.
bool IsNvmlFunctionName(std::string_view name);

}  // namespace nvmlx::simgpu

#endif  // NVML_EXPORTER_TOOLS_SIMGPU_SCENARIO_H_
