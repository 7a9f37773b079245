#include "scenario.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <set>
#include <sstream>

#include "nvml/nvml_api.h"

namespace nvmlx::simgpu {

const std::array<ValueKeyInfo, kNumValueKeys> kValueKeys = {{
    {ValueKey::kGpuUtil, "gpu_util", 0},
    {ValueKey::kMemUtil, "mem_util", 0},
    {ValueKey::kEncUtil, "enc_util", 0},
    {ValueKey::kDecUtil, "dec_util", 0},
    {ValueKey::kSmClock, "sm_clock", 1980},
    {ValueKey::kMemClock, "mem_clock", 3201},
    {ValueKey::kGraphicsClock, "graphics_clock", 1980},
    {ValueKey::kVideoClock, "video_clock", 1755},
    {ValueKey::kMaxSmClock, "max_sm_clock", 1980},
    {ValueKey::kMaxMemClock, "max_mem_clock", 3201},
    {ValueKey::kMaxGraphicsClock, "max_graphics_clock", 1980},
    {ValueKey::kMaxVideoClock, "max_video_clock", 1755},
    {ValueKey::kGpuTemp, "gpu_temp", 35},
    {ValueKey::kMemTemp, "mem_temp", 40},
    {ValueKey::kPowerW, "power_w", 80},
    {ValueKey::kPowerLimitW, "power_limit_w", 700},
    {ValueKey::kPowerLimitMinW, "power_limit_min_w", 200},
    {ValueKey::kPowerLimitMaxW, "power_limit_max_w", 700},
    {ValueKey::kPowerLimitDefaultW, "power_limit_default_w", 700},
    {ValueKey::kEnergyMjAtStart, "energy_mj_at_start", 1000000},
    {ValueKey::kFbUsedMib, "fb_used_mib", 0},
    {ValueKey::kFbReservedMib, "fb_reserved_mib", 615},
    {ValueKey::kBar1TotalMib, "bar1_total_mib", 262144},
    {ValueKey::kBar1UsedMib, "bar1_used_mib", 1},
    {ValueKey::kPstate, "pstate", 0},
    {ValueKey::kFanSpeed, "fan_speed", 0},
    {ValueKey::kPcieTxKbs, "pcie_tx_kbs", 0},
    {ValueKey::kPcieRxKbs, "pcie_rx_kbs", 0},
    {ValueKey::kPcieReplay, "pcie_replay", 0},
    {ValueKey::kPcieLinkGen, "pcie_link_gen", 5},
    {ValueKey::kPcieLinkWidth, "pcie_link_width", 16},
    {ValueKey::kPcieMaxLinkGen, "pcie_max_link_gen", 5},
    {ValueKey::kPcieMaxLinkWidth, "pcie_max_link_width", 16},
    {ValueKey::kClocksEventReasons, "clocks_event_reasons", 0},
    {ValueKey::kEccSbeVol, "ecc_sbe_vol", 0},
    {ValueKey::kEccDbeVol, "ecc_dbe_vol", 0},
    {ValueKey::kEccSbeAgg, "ecc_sbe_agg", 0},
    {ValueKey::kEccDbeAgg, "ecc_dbe_agg", 0},
    {ValueKey::kRetiredSbe, "retired_sbe", 0},
    {ValueKey::kRetiredDbe, "retired_dbe", 0},
    {ValueKey::kRetiredPending, "retired_pending", 0},
    {ValueKey::kRemappedCor, "remapped_cor", 0},
    {ValueKey::kRemappedUnc, "remapped_unc", 0},
    {ValueKey::kRemappedPending, "remapped_pending", 0},
    {ValueKey::kRemappedFailure, "remapped_failure", 0},
    {ValueKey::kViolationPowerNs, "violation_power_ns", 0},
    {ValueKey::kViolationThermalNs, "violation_thermal_ns", 0},
    {ValueKey::kViolationSyncBoostNs, "violation_sync_boost_ns", 0},
    {ValueKey::kViolationBoardLimitNs, "violation_board_limit_ns", 0},
    {ValueKey::kViolationLowUtilNs, "violation_low_util_ns", 0},
    {ValueKey::kViolationReliabilityNs, "violation_reliability_ns", 0},
    {ValueKey::kViolationAppClocksNs, "violation_app_clocks_ns", 0},
    {ValueKey::kViolationBaseClocksNs, "violation_base_clocks_ns", 0},
    {ValueKey::kViolationSwThermalNs, "violation_sw_thermal_ns", 0},
    {ValueKey::kViolationHwThermalNs, "violation_hw_thermal_ns", 0},
    {ValueKey::kViolationHwPowerBrakeNs, "violation_hw_power_brake_ns", 0},
    {ValueKey::kNvlinkCrcFlitErrors, "nvlink_crc_flit_errors", 0},
    {ValueKey::kNvlinkCrcDataErrors, "nvlink_crc_data_errors", 0},
    {ValueKey::kNvlinkReplayErrors, "nvlink_replay_errors", 0},
    {ValueKey::kNvlinkRecoveryErrors, "nvlink_recovery_errors", 0},
    {ValueKey::kNvlinkTxKib, "nvlink_tx_kib", 0},
    {ValueKey::kNvlinkRxKib, "nvlink_rx_kib", 0},
    {ValueKey::kPcieCorrectableErrors, "pcie_correctable_errors", 0},
    {ValueKey::kVgpuLicense, "vgpu_license", 0},
    {ValueKey::kP2pStatus, "p2p_status", 0},
    {ValueKey::kRecoveryAction, "recovery_action", 0},
    {ValueKey::kNvlinkLinks, "nvlink_links", 18},
    {ValueKey::kNvlinkInactiveMask, "nvlink_inactive_mask", 0},
    {ValueKey::kGpmGraphicsUtil, "gpm_graphics_util", 0},
    {ValueKey::kGpmSmUtil, "gpm_sm_util", 0},
    {ValueKey::kGpmSmOccupancy, "gpm_sm_occupancy", 0},
    {ValueKey::kGpmIntegerUtil, "gpm_integer_util", 0},
    {ValueKey::kGpmAnyTensorUtil, "gpm_any_tensor_util", 0},
    {ValueKey::kGpmDfmaTensorUtil, "gpm_dfma_tensor_util", 0},
    {ValueKey::kGpmHmmaTensorUtil, "gpm_hmma_tensor_util", 0},
    {ValueKey::kGpmImmaTensorUtil, "gpm_imma_tensor_util", 0},
    {ValueKey::kGpmDramBwUtil, "gpm_dram_bw_util", 0},
    {ValueKey::kGpmFp64Util, "gpm_fp64_util", 0},
    {ValueKey::kGpmFp32Util, "gpm_fp32_util", 0},
    {ValueKey::kGpmFp16Util, "gpm_fp16_util", 0},
    {ValueKey::kGpmPcieTxMibs, "gpm_pcie_tx_mibs", 0},
    {ValueKey::kGpmPcieRxMibs, "gpm_pcie_rx_mibs", 0},
    {ValueKey::kGpmNvlinkTxMibs, "gpm_nvlink_tx_mibs", 0},
    {ValueKey::kGpmNvlinkRxMibs, "gpm_nvlink_rx_mibs", 0},
    // Every sub-field of the mask "not degraded / not in progress / healthy" (2 each) and the
    // configuration "correct" (1): (2 << 0) | (2 << 2) | (2 << 4) | (2 << 6) | (1 << 8).
    {ValueKey::kFabricHealthMask, "fabric_health_mask", 426},
    {ValueKey::kFabricHealthSummary, "fabric_health_summary", 1},
    {ValueKey::kFabricInfoVersion, "fabric_info_version", 3},
}};

std::optional<ValueKey> ValueKeyFromName(std::string_view name) {
  for (const auto& info : kValueKeys) {
    if (info.name == name) return info.key;
  }
  return std::nullopt;
}

std::optional<int> ReturnCodeFromName(std::string_view name) {
  static constexpr std::pair<std::string_view, int> kCodes[] = {
      {"SUCCESS", NVML_SUCCESS},
      {"UNINITIALIZED", NVML_ERROR_UNINITIALIZED},
      {"INVALID_ARGUMENT", NVML_ERROR_INVALID_ARGUMENT},
      {"NOT_SUPPORTED", NVML_ERROR_NOT_SUPPORTED},
      {"NO_PERMISSION", NVML_ERROR_NO_PERMISSION},
      {"ALREADY_INITIALIZED", NVML_ERROR_ALREADY_INITIALIZED},
      {"NOT_FOUND", NVML_ERROR_NOT_FOUND},
      {"INSUFFICIENT_SIZE", NVML_ERROR_INSUFFICIENT_SIZE},
      {"INSUFFICIENT_POWER", NVML_ERROR_INSUFFICIENT_POWER},
      {"DRIVER_NOT_LOADED", NVML_ERROR_DRIVER_NOT_LOADED},
      {"TIMEOUT", NVML_ERROR_TIMEOUT},
      {"IRQ_ISSUE", NVML_ERROR_IRQ_ISSUE},
      {"LIBRARY_NOT_FOUND", NVML_ERROR_LIBRARY_NOT_FOUND},
      {"FUNCTION_NOT_FOUND", NVML_ERROR_FUNCTION_NOT_FOUND},
      {"CORRUPTED_INFOROM", NVML_ERROR_CORRUPTED_INFOROM},
      {"GPU_IS_LOST", NVML_ERROR_GPU_IS_LOST},
      {"RESET_REQUIRED", NVML_ERROR_RESET_REQUIRED},
      {"OPERATING_SYSTEM", NVML_ERROR_OPERATING_SYSTEM},
      {"LIB_RM_VERSION_MISMATCH", NVML_ERROR_LIB_RM_VERSION_MISMATCH},
      {"IN_USE", NVML_ERROR_IN_USE},
      {"MEMORY", NVML_ERROR_MEMORY},
      {"NO_DATA", NVML_ERROR_NO_DATA},
      {"VGPU_ECC_NOT_SUPPORTED", NVML_ERROR_VGPU_ECC_NOT_SUPPORTED},
      {"INSUFFICIENT_RESOURCES", NVML_ERROR_INSUFFICIENT_RESOURCES},
      {"FREQ_NOT_SUPPORTED", NVML_ERROR_FREQ_NOT_SUPPORTED},
      {"ARGUMENT_VERSION_MISMATCH", NVML_ERROR_ARGUMENT_VERSION_MISMATCH},
      {"DEPRECATED", NVML_ERROR_DEPRECATED},
      {"NOT_READY", NVML_ERROR_NOT_READY},
      {"GPU_NOT_FOUND", NVML_ERROR_GPU_NOT_FOUND},
      {"INVALID_STATE", NVML_ERROR_INVALID_STATE},
      {"UNKNOWN", NVML_ERROR_UNKNOWN},
  };
  for (const auto& [n, code] : kCodes) {
    if (n == name) return code;
  }
  return std::nullopt;
}

bool IsNvmlFunctionName(std::string_view name) {
#define NVMLX_SIMGPU_NAME(fn) #fn,
  static constexpr std::string_view kNames[] = {NVMLX_FOR_EACH_FUNCTION(NVMLX_SIMGPU_NAME)};
#undef NVMLX_SIMGPU_NAME
  return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

namespace {

// Thrown inside the parser only; ParseScenario turns it into the one-line message.
struct ParseError {
  int line;  // 1-based; 0 when unknown
  std::string what;
};

int LineOf(const YAML::Node& n) {
  const YAML::Mark m = n.Mark();
  return m.line >= 0 ? m.line + 1 : 0;
}

[[noreturn]] void Fail(const YAML::Node& at, std::string what) {
  throw ParseError{LineOf(at), std::move(what)};
}

// Rejects keys outside `allowed`: a typo in a scenario should fail loudly, not be ignored.
void CheckKeys(const YAML::Node& map, const std::string& where,
               std::initializer_list<std::string_view> allowed) {
  for (const auto& kv : map) {
    const std::string key = kv.first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string list;
      for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      Fail(kv.first, where + ": unknown key '" + key + "' (expected one of: " + list + ")");
    }
  }
}

void RequireMap(const YAML::Node& n, const std::string& where) {
  if (!n.IsMap()) Fail(n, where + ": expected a map");
}

double Number(const YAML::Node& n, const std::string& where) {
  if (n.IsScalar()) {
    const std::string& s = n.Scalar();
    char* end = nullptr;
    errno = 0;
    double v = std::strtod(s.c_str(), &end);
    if (!s.empty() && end == s.c_str() + s.size() && errno == 0 && std::isfinite(v)) return v;
  }
  Fail(n, where + ": expected a number");
}

double NonNegative(const YAML::Node& n, const std::string& where) {
  double v = Number(n, where);
  if (v < 0) Fail(n, where + ": expected a number >= 0");
  return v;
}

double Positive(const YAML::Node& n, const std::string& where) {
  double v = Number(n, where);
  if (v <= 0) Fail(n, where + ": expected a number > 0");
  return v;
}

unsigned long long Unsigned(const YAML::Node& n, const std::string& where,
                            unsigned long long max = 0xFFFFFFFFull) {
  if (n.IsScalar()) {
    const std::string& s = n.Scalar();
    char* end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(s.c_str(), &end, 0);  // base 0: 0x1234 works
    if (!s.empty() && s[0] != '-' && end == s.c_str() + s.size() && errno == 0 && v <= max) {
      return v;
    }
  }
  Fail(n, where + ": expected an unsigned integer");
}

std::string String(const YAML::Node& n, const std::string& where) {
  if (!n.IsScalar()) Fail(n, where + ": expected a string");
  return n.Scalar();
}

bool Bool(const YAML::Node& n, const std::string& where) {
  if (!n.IsScalar() || (n.Scalar() != "true" && n.Scalar() != "false")) {
    Fail(n, where + ": expected true or false");
  }
  return n.Scalar() == "true";
}

// A field that must exist inside `map`; reported at the map's line when absent.
YAML::Node Required(const YAML::Node& map, const char* key, const std::string& where) {
  YAML::Node n = map[key];
  if (!n.IsDefined()) Fail(map, where + ": missing '" + key + "'");
  return n;
}

ValueFn ParseValue(const YAML::Node& n, const std::string& where) {
  if (n.IsScalar()) return ValueFn::Constant(Number(n, where));
  const std::string expected =
      ": expected a number, {square: {...}}, {ramp: {...}} or {sine: {...}}";
  if (!n.IsMap() || n.size() != 1) Fail(n, where + expected);
  const auto kv = *n.begin();
  const std::string form = kv.first.Scalar();
  const YAML::Node& p = kv.second;
  const std::string at = where + "." + form;
  if (form == "square") {
    RequireMap(p, at);
    CheckKeys(p, at, {"high", "low", "on_s", "off_s", "phase_s"});
    double high = Number(Required(p, "high", at), at + ".high");
    double low = Number(Required(p, "low", at), at + ".low");
    double on = NonNegative(Required(p, "on_s", at), at + ".on_s");
    double off = NonNegative(Required(p, "off_s", at), at + ".off_s");
    double phase = p["phase_s"] ? Number(p["phase_s"], at + ".phase_s") : 0;
    if (on + off <= 0) Fail(p, at + ": on_s + off_s must be > 0");
    return ValueFn::Square(high, low, on, off, phase);
  }
  if (form == "ramp") {
    RequireMap(p, at);
    CheckKeys(p, at, {"from", "to", "over_s", "repeat"});
    double from = Number(Required(p, "from", at), at + ".from");
    double to = Number(Required(p, "to", at), at + ".to");
    double over = Positive(Required(p, "over_s", at), at + ".over_s");
    bool repeat = true;
    if (YAML::Node r = p["repeat"]) repeat = Bool(r, at + ".repeat");
    return ValueFn::Ramp(from, to, over, repeat);
  }
  if (form == "sine") {
    RequireMap(p, at);
    CheckKeys(p, at, {"mid", "amplitude", "period_s"});
    double mid = Number(Required(p, "mid", at), at + ".mid");
    double amp = Number(Required(p, "amplitude", at), at + ".amplitude");
    double period = Positive(Required(p, "period_s", at), at + ".period_s");
    return ValueFn::Sine(mid, amp, period);
  }
  Fail(kv.first, where + ": unknown function '" + form + "'" + expected);
}

// "00000000:06:00.0" (any hex case) -> domain, bus, device; normalised to upper case.
void ParsePciBusId(const YAML::Node& n, const std::string& where, GpuSpec* gpu) {
  std::string s = String(n, where);
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  int used = 0;
  if (std::sscanf(s.c_str(), "%8x:%2x:%2x.%1x%n", &domain, &bus, &device, &function, &used) != 4 ||
      used != static_cast<int>(s.size()) || device > 0x1F || function > 7) {
    Fail(n, where + ": expected a PCI bus id like \"00000000:06:00.0\"");
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%08X:%02X:%02X.%X", domain, bus, device, function);
  gpu->pci_bus_id = buf;
  gpu->pci_domain = domain;
  gpu->pci_bus = bus;
  gpu->pci_device = device;
}

// Chosen so that DCGM's naming ("<slices>g.<ceil(MiB / 1024)>gb") gives NVIDIA's H200 profile
// names (1g.18gb, 1g.35gb, 2g.35gb, 3g.71gb, 4g.71gb, 7g.141gb); the MiB figures are not measured.
const MigProfileSpec kDefaultMigProfiles[] = {
    {0, 1, 17920},  {1, 2, 35840}, {2, 3, 72192}, {3, 4, 72192},
    {4, 7, 144384}, {7, 1, 17920}, {9, 1, 35840},
};

void ParseValues(const YAML::Node& values, const std::string& at, GpuSpec* gpu) {
  RequireMap(values, at);
  for (const auto& kv : values) {
    const std::string key = kv.first.Scalar();
    std::optional<ValueKey> k = ValueKeyFromName(key);
    if (!k) Fail(kv.first, at + ": unknown value key '" + key + "' (see SCENARIO.md)");
    gpu->values[static_cast<int>(*k)] = ParseValue(kv.second, at + "." + key);
  }
}

// `mig:` of GPU `index`: its profile table and its MIG devices (appended to *devices).
void ParseProcesses(const YAML::Node& procs, const std::string& at, GpuSpec* spec);

void ParseMig(const YAML::Node& n, const std::string& where, unsigned index, GpuSpec* gpu,
              std::vector<MigDeviceSpec>* devices) {
  RequireMap(n, where);
  CheckKeys(n, where, {"profiles", "instances"});
  gpu->mig_enabled = true;
  if (auto list = n["profiles"]) {
    if (!list.IsSequence()) Fail(list, where + ".profiles: expected a list");
    unsigned i = 0;
    for (const auto& p : list) {
      const std::string at = where + ".profiles[" + std::to_string(i++) + "]";
      RequireMap(p, at);
      CheckKeys(p, at, {"index", "slices", "memory_mib"});
      MigProfileSpec prof;
      prof.index = static_cast<unsigned>(Unsigned(Required(p, "index", at), at + ".index", 63));
      prof.slices = static_cast<unsigned>(Unsigned(Required(p, "slices", at), at + ".slices", 8));
      prof.memory_mib = Positive(Required(p, "memory_mib", at), at + ".memory_mib");
      for (const auto& other : gpu->mig_profiles) {
        if (other.index == prof.index) Fail(p, at + ".index: duplicate profile index");
      }
      gpu->mig_profiles.push_back(prof);
    }
  } else {
    gpu->mig_profiles.assign(std::begin(kDefaultMigProfiles), std::end(kDefaultMigProfiles));
  }
  std::sort(gpu->mig_profiles.begin(), gpu->mig_profiles.end(),
            [](const MigProfileSpec& a, const MigProfileSpec& b) { return a.index < b.index; });
  YAML::Node list = n["instances"];
  if (!list) return;
  if (!list.IsSequence()) Fail(list, where + ".instances: expected a list");
  std::vector<bool> used_slots(kMaxMigDevices, false);
  const size_t first = devices->size();
  unsigned i = 0;
  for (const auto& m : list) {
    const std::string at = where + ".instances[" + std::to_string(i) + "]";
    RequireMap(m, at);
    CheckKeys(m, at,
              {"profile", "gpu_instance_id", "compute_instance_id", "slot", "uuid", "memory_mib",
               "values", "processes"});
    MigDeviceSpec d;
    d.gpu = index;
    d.profile = static_cast<unsigned>(Unsigned(Required(m, "profile", at), at + ".profile", 63));
    const MigProfileSpec* prof = nullptr;
    for (const auto& p : gpu->mig_profiles) {
      if (p.index == d.profile) prof = &p;
    }
    if (prof == nullptr) {
      Fail(m["profile"],
           at + ".profile: " + std::to_string(d.profile) + " is not a profile index of this GPU");
    }
    d.slices = prof->slices;
    d.memory_mib = prof->memory_mib;
    if (auto v = m["memory_mib"]) d.memory_mib = Positive(v, at + ".memory_mib");
    d.gpu_instance_id = static_cast<unsigned>(
        Unsigned(Required(m, "gpu_instance_id", at), at + ".gpu_instance_id", 0xFFFFFFFEull));
    if (auto v = m["compute_instance_id"]) {
      d.compute_instance_id =
          static_cast<unsigned>(Unsigned(v, at + ".compute_instance_id", 0xFFFFFFFEull));
    }
    for (size_t j = first; j < devices->size(); ++j) {
      const MigDeviceSpec& o = (*devices)[j];
      if (o.gpu_instance_id == d.gpu_instance_id &&
          o.compute_instance_id == d.compute_instance_id) {
        Fail(m, at + ": duplicate gpu_instance_id/compute_instance_id");
      }
    }
    unsigned slot = 0;
    if (auto v = m["slot"]) {
      slot = static_cast<unsigned>(Unsigned(v, at + ".slot"));
      if (slot >= kMaxMigDevices) Fail(v, at + ".slot: expected 0 to 6");
      if (used_slots[slot]) Fail(v, at + ".slot: " + std::to_string(slot) + " is taken");
    } else {
      while (slot < kMaxMigDevices && used_slots[slot]) ++slot;
      if (slot == kMaxMigDevices) Fail(m, at + ": more than 7 MIG devices");
    }
    used_slots[slot] = true;
    d.slot = slot;
    // The MIG handle answers with the parent's identity and the instance's own memory/values.
    d.spec = *gpu;
    d.spec.mig_enabled = false;
    d.spec.mig_profiles.clear();
    d.spec.memory_total_mib = d.memory_mib;
    for (int k = 0; k < kNumValueKeys; ++k) {
      d.spec.values[k] = ValueFn::Constant(kValueKeys[k].default_value);
    }
    char buf[96];
    std::snprintf(buf, sizeof(buf), "MIG-%08X-0000-0000-0000-%04X%04X%04X", index,
                  d.gpu_instance_id & 0xFFFF, d.compute_instance_id & 0xFFFF, slot);
    d.spec.uuid = buf;
    if (auto v = m["uuid"]) d.spec.uuid = String(v, at + ".uuid");
    std::snprintf(buf, sizeof(buf), " MIG %ug.%llugb", d.slices,
                  static_cast<unsigned long long>((d.memory_mib + 1023) / 1024));
    d.spec.name = gpu->name + buf;
    if (auto v = m["values"]) ParseValues(v, at + ".values", &d.spec);
    // Its own compute processes (the parent's list is not the instance's).
    d.spec.processes.clear();
    if (auto v = m["processes"]) ParseProcesses(v, at + ".processes", &d.spec);
    devices->push_back(std::move(d));
    ++i;
  }
  std::sort(devices->begin() + static_cast<std::ptrdiff_t>(first), devices->end(),
            [](const MigDeviceSpec& a, const MigDeviceSpec& b) { return a.slot < b.slot; });
}

ProcessSpec ParseProcess(const YAML::Node& n, const std::string& where) {
  RequireMap(n, where);
  CheckKeys(n, where, {"pid", "memory_mib", "sm_util", "mem_util", "start_s", "end_s"});
  ProcessSpec p;
  const YAML::Node pid = Required(n, "pid", where);
  p.pid = static_cast<unsigned>(Unsigned(pid, where + ".pid"));
  if (p.pid == 0) Fail(pid, where + ".pid: expected a pid > 0");
  if (auto v = n["memory_mib"]) p.memory_mib = ParseValue(v, where + ".memory_mib");
  if (auto v = n["sm_util"]) p.sm_util = ParseValue(v, where + ".sm_util");
  if (auto v = n["mem_util"]) p.mem_util = ParseValue(v, where + ".mem_util");
  if (auto v = n["start_s"]) p.start_s = NonNegative(v, where + ".start_s");
  if (auto v = n["end_s"]) {
    p.end_s = Number(v, where + ".end_s");
    if (*p.end_s <= p.start_s) Fail(v, where + ".end_s: expected a time after start_s");
  }
  return p;
}

// A `processes:` list (of a GPU or of a MIG instance), ascending pid, pids unique.
void ParseProcesses(const YAML::Node& procs, const std::string& at, GpuSpec* spec) {
  if (!procs.IsSequence()) Fail(procs, at + ": expected a list");
  std::set<unsigned> pids;
  unsigned i = 0;
  for (const auto& p : procs) {
    ProcessSpec one = ParseProcess(p, at + "[" + std::to_string(i++) + "]");
    if (!pids.insert(one.pid).second) Fail(p, at + ": duplicate pid " + std::to_string(one.pid));
    spec->processes.push_back(std::move(one));
  }
  std::sort(spec->processes.begin(), spec->processes.end(),
            [](const ProcessSpec& a, const ProcessSpec& b) { return a.pid < b.pid; });
}

GpuSpec ParseGpu(const YAML::Node& n, unsigned index) {
  const std::string where = "gpus[" + std::to_string(index) + "]";
  RequireMap(n, where);
  CheckKeys(n, where,
            {"name", "uuid", "pci_bus_id", "pci_device_id", "pci_subsystem_id", "serial", "vbios",
             "brand", "minor_number", "memory_total_mib", "inforom", "gpm", "values", "mig",
             "processes", "process_info_stride", "pm_sampling"});
  GpuSpec gpu;
  for (int k = 0; k < kNumValueKeys; ++k) {
    gpu.values[k] = ValueFn::Constant(kValueKeys[k].default_value);
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), "GPU-00000000-0000-0000-0000-%012X", index);
  gpu.uuid = buf;
  std::snprintf(buf, sizeof(buf), "00000000:%02X:00.0", 0x06 + index);
  gpu.pci_bus_id = buf;
  gpu.pci_bus = 0x06 + index;
  gpu.serial = std::to_string(1650000000001ull + index);
  gpu.minor_number = index;

  if (auto v = n["name"]) gpu.name = String(v, where + ".name");
  if (auto v = n["uuid"]) gpu.uuid = String(v, where + ".uuid");
  if (auto v = n["pci_bus_id"]) ParsePciBusId(v, where + ".pci_bus_id", &gpu);
  if (auto v = n["pci_device_id"]) gpu.pci_device_id = Unsigned(v, where + ".pci_device_id");
  if (auto v = n["pci_subsystem_id"]) {
    gpu.pci_subsystem_id = Unsigned(v, where + ".pci_subsystem_id");
  }
  if (auto v = n["serial"]) gpu.serial = String(v, where + ".serial");
  if (auto v = n["vbios"]) gpu.vbios = String(v, where + ".vbios");
  if (auto v = n["brand"]) gpu.brand = static_cast<int>(Unsigned(v, where + ".brand", 1000));
  if (auto v = n["minor_number"]) gpu.minor_number = Unsigned(v, where + ".minor_number");
  if (auto v = n["memory_total_mib"]) {
    gpu.memory_total_mib = Positive(v, where + ".memory_total_mib");
  }
  if (auto v = n["gpm"]) gpu.gpm = Bool(v, where + ".gpm");
  if (auto pm = n["pm_sampling"]) {
    const std::string at = where + ".pm_sampling";
    RequireMap(pm, at);
    gpu.pm_sampling.present = true;
    CheckKeys(pm, at,
              {"chip", "metrics_per_pass", "busy_until_s", "decode_error_after", "missing_metrics",
               "straddle", "stall_after_s", "stall_combinations", "set_config_ms"});
    if (auto v = pm["chip"]) gpu.pm_sampling.chip = String(v, at + ".chip");
    if (auto v = pm["metrics_per_pass"]) {
      gpu.pm_sampling.metrics_per_pass =
          static_cast<unsigned>(Unsigned(v, at + ".metrics_per_pass", 64));
      if (gpu.pm_sampling.metrics_per_pass == 0) Fail(v, at + ".metrics_per_pass: expected >= 1");
    }
    if (auto v = pm["busy_until_s"]) gpu.pm_sampling.busy_until_s = Number(v, at + ".busy_until_s");
    if (auto v = pm["decode_error_after"]) {
      gpu.pm_sampling.decode_error_after =
          static_cast<unsigned>(Unsigned(v, at + ".decode_error_after", 1000000));
    }
    if (auto v = pm["straddle"]) gpu.pm_sampling.straddle = Bool(v, at + ".straddle");
    if (auto v = pm["set_config_ms"]) {
      gpu.pm_sampling.set_config_ms =
          static_cast<unsigned>(Unsigned(v, at + ".set_config_ms", 60000));
    }
    if (auto v = pm["stall_after_s"]) {
      gpu.pm_sampling.stall_after_s = Positive(v, at + ".stall_after_s");
    }
    if (auto v = pm["stall_combinations"]) {
      if (!v.IsSequence()) {
        Fail(v, at + ".stall_combinations: expected a list of lists of metric names");
      }
      for (const auto& set : v) {
        if (!set.IsSequence() || set.size() == 0) {
          Fail(set, at + ".stall_combinations: expected a non-empty list of metric names");
        }
        std::vector<std::string> names;
        for (const auto& m : set) names.push_back(String(m, at + ".stall_combinations"));
        gpu.pm_sampling.stall_combinations.push_back(std::move(names));
      }
    }
    if (auto v = pm["missing_metrics"]) {
      if (!v.IsSequence()) Fail(v, at + ".missing_metrics: expected a list of metric names");
      for (const auto& m : v) {
        gpu.pm_sampling.missing_metrics.push_back(String(m, at + ".missing_metrics"));
      }
    }
  }
  if (auto inf = n["inforom"]) {
    const std::string at = where + ".inforom";
    RequireMap(inf, at);
    CheckKeys(inf, at, {"oem", "ecc", "power", "image"});
    if (auto v = inf["oem"]) gpu.inforom_oem = String(v, at + ".oem");
    if (auto v = inf["ecc"]) gpu.inforom_ecc = String(v, at + ".ecc");
    if (auto v = inf["power"]) gpu.inforom_power = String(v, at + ".power");
    if (auto v = inf["image"]) gpu.inforom_image = String(v, at + ".image");
  }
  if (auto values = n["values"]) ParseValues(values, where + ".values", &gpu);
  if (auto values = n["values"]) {
    const std::string at = where + ".values";
    RequireMap(values, at);
    for (const auto& kv : values) {
      const std::string key = kv.first.Scalar();
      std::optional<ValueKey> k = ValueKeyFromName(key);
      if (!k) Fail(kv.first, at + ": unknown value key '" + key + "' (see SCENARIO.md)");
      gpu.values[static_cast<int>(*k)] = ParseValue(kv.second, at + "." + key);
    }
  }
  if (auto v = n["process_info_stride"]) {
    gpu.process_info_stride = static_cast<unsigned>(Unsigned(v, where + ".process_info_stride"));
    if (gpu.process_info_stride != 24 && gpu.process_info_stride != 32) {
      Fail(v, where + ".process_info_stride: expected 24 or 32");
    }
  }
  if (auto procs = n["processes"]) ParseProcesses(procs, where + ".processes", &gpu);
  return gpu;
}

Fault ParseFault(const YAML::Node& n, unsigned index, size_t gpu_count) {
  const std::string where = "faults[" + std::to_string(index) + "]";
  RequireMap(n, where);
  CheckKeys(n, where,
            {"gpu", "call", "error", "block_ms", "hang", "after_s", "until_s", "lost_after_s"});
  Fault f;
  f.line = LineOf(n);
  if (YAML::Node g = n["gpu"]; g && !(g.IsScalar() && g.Scalar() == "*")) {
    unsigned long long gpu = 0;
    try {
      gpu = Unsigned(g, where + ".gpu");
    } catch (const ParseError&) {
      Fail(g, where + ".gpu: expected a GPU index or \"*\"");
    }
    if (gpu >= gpu_count) {
      Fail(g, where + ".gpu: " + std::to_string(gpu) + " is out of range: the scenario has " +
                  std::to_string(gpu_count) + " GPUs");
    }
    f.gpu = static_cast<unsigned>(gpu);
  }
  if (auto v = n["lost_after_s"]) {
    f.lost_after_s = NonNegative(v, where + ".lost_after_s");
    if (n["call"] || n["error"] || n["block_ms"] || n["hang"] || n["after_s"] || n["until_s"]) {
      Fail(n, where + ": a lost_after_s rule takes only 'gpu'");
    }
    return f;
  }
  YAML::Node call = Required(n, "call", where + " (or lost_after_s)");
  std::string name = String(call, where + ".call");
  if (auto colon = name.find(':'); colon != std::string::npos) {
    std::string fi = name.substr(colon + 1);
    name.resize(colon);
    char* end = nullptr;
    unsigned long v = std::strtoul(fi.c_str(), &end, 10);
    if (name != "nvmlDeviceGetFieldValues" || fi.empty() || *end != '\0' || v > 0xFFFF) {
      Fail(call, where + ".call: expected \"nvmlDeviceGetFieldValues:<field id>\"");
    }
    f.field_id = static_cast<unsigned>(v);
  }
  if (name != "*" && !IsNvmlFunctionName(name)) {
    Fail(call, where + ".call: '" + name + "' is not an NVML function of nvml_api.h (or \"*\")");
  }
  if (name == "nvmlInit_v2" || name == "nvmlShutdown" || name == "nvmlErrorString") {
    Fail(call, where + ".call: " + name + " cannot be faulted");
  }
  f.call = name;
  if (auto e = n["error"]) {
    std::string code = String(e, where + ".error");
    if (code.rfind("NVML_ERROR_", 0) == 0) code = code.substr(11);
    f.error = ReturnCodeFromName(code);
    if (!f.error) {
      Fail(e, where + ".error: unknown nvmlReturn_t name '" + code + "' (e.g. NOT_SUPPORTED)");
    }
  }
  if (auto v = n["block_ms"]) f.block_ms = NonNegative(v, where + ".block_ms");
  if (auto v = n["hang"]) f.hang = Bool(v, where + ".hang");
  if (!f.error && !n["block_ms"] && !f.hang) {
    Fail(n, where + ": expected 'error', 'block_ms' and/or 'hang: true'");
  }
  if (auto v = n["after_s"]) f.after_s = NonNegative(v, where + ".after_s");
  if (auto v = n["until_s"]) {
    f.until_s = Number(v, where + ".until_s");
    if (*f.until_s <= f.after_s) Fail(v, where + ".until_s: expected a time after after_s");
  }
  return f;
}

XidEvent ParseXid(const YAML::Node& n, unsigned index, size_t gpu_count) {
  const std::string where = "xids[" + std::to_string(index) + "]";
  RequireMap(n, where);
  CheckKeys(n, where, {"gpu", "at_s", "xid"});
  XidEvent x;
  YAML::Node g = Required(n, "gpu", where);
  x.gpu = static_cast<unsigned>(Unsigned(g, where + ".gpu"));
  if (x.gpu >= gpu_count) {
    Fail(g, where + ".gpu: " + std::to_string(x.gpu) + " is out of range: the scenario has " +
                std::to_string(gpu_count) + " GPUs");
  }
  x.at_s = NonNegative(Required(n, "at_s", where), where + ".at_s");
  x.xid = Unsigned(Required(n, "xid", where), where + ".xid");
  return x;
}

template <typename T, typename F>
std::vector<T> ParseList(const YAML::Node& list, const char* where, F parse_one) {
  if (!list.IsSequence()) Fail(list, std::string(where) + ": expected a list");
  std::vector<T> out;
  unsigned i = 0;
  for (const auto& item : list) out.push_back(parse_one(item, i++));
  return out;
}

Scenario ParseRoot(const YAML::Node& root) {
  if (!root.IsMap()) Fail(root, "expected a map with 'gpus:' at the top level");
  CheckKeys(root, "scenario",
            {"driver_version", "nvml_version", "cuda_driver_version", "gpus", "faults", "xids"});
  Scenario s;
  if (auto v = root["driver_version"]) s.driver_version = String(v, "driver_version");
  if (auto v = root["nvml_version"]) s.nvml_version = String(v, "nvml_version");
  if (auto v = root["cuda_driver_version"]) {
    s.cuda_driver_version = static_cast<int>(Unsigned(v, "cuda_driver_version", 0x7FFFFFFF));
  }
  s.gpus = ParseList<GpuSpec>(Required(root, "gpus", "scenario"), "gpus", ParseGpu);
  // MIG devices after their GPU is complete (they copy its identity and values).
  for (unsigned i = 0; i < s.gpus.size(); ++i) {
    if (auto mig = root["gpus"][i]["mig"]) {
      ParseMig(mig, "gpus[" + std::to_string(i) + "].mig", i, &s.gpus[i], &s.mig_devices);
    }
  }
  // Duplicate identities would make the exporter's per-UUID bookkeeping lie.
  std::set<std::string> uuids, buses;
  YAML::Node gpus = root["gpus"];
  for (size_t i = 0; i < s.gpus.size(); ++i) {
    if (!uuids.insert(s.gpus[i].uuid).second) {
      Fail(gpus[i], "gpus[" + std::to_string(i) + "].uuid: duplicate " + s.gpus[i].uuid);
    }
    for (const MigDeviceSpec& m : s.mig_devices) {
      if (m.gpu == i && !uuids.insert(m.spec.uuid).second) {
        Fail(gpus[i]["mig"], "gpus[" + std::to_string(i) + "].mig: duplicate uuid " + m.spec.uuid);
      }
    }
    if (!buses.insert(s.gpus[i].pci_bus_id).second) {
      Fail(gpus[i],
           "gpus[" + std::to_string(i) + "].pci_bus_id: duplicate " + s.gpus[i].pci_bus_id);
    }
  }
  const size_t count = s.gpus.size();
  if (auto v = root["faults"]) {
    s.faults = ParseList<Fault>(
        v, "faults", [count](const YAML::Node& n, unsigned i) { return ParseFault(n, i, count); });
  }
  if (auto v = root["xids"]) {
    s.xids = ParseList<XidEvent>(
        v, "xids", [count](const YAML::Node& n, unsigned i) { return ParseXid(n, i, count); });
    std::stable_sort(s.xids.begin(), s.xids.end(),
                     [](const XidEvent& a, const XidEvent& b) { return a.at_s < b.at_s; });
  }
  return s;
}

std::string Located(const std::string& source, int line, const std::string& what) {
  return line > 0 ? source + ":" + std::to_string(line) + ": " + what : source + ": " + what;
}

}  // namespace

ParseResult ParseScenario(std::string_view text, const std::string& source) {
  try {
    YAML::Node root = YAML::Load(std::string(text));
    Scenario s = ParseRoot(root);
    s.source = source;
    return s;
  } catch (const ParseError& e) {
    return Located(source, e.line, e.what);
  } catch (const YAML::Exception& e) {
    return Located(source, e.mark.line >= 0 ? e.mark.line + 1 : 0, "invalid YAML: " + e.msg);
  } catch (const std::exception& e) {
    return Located(source, 0, e.what());
  } catch (...) {
    return Located(source, 0, "unexpected error while parsing");
  }
}

ParseResult LoadScenarioFile(const std::string& path) {
  try {
    std::ifstream in(path, std::ios::binary);
    if (!in) return path + ": cannot read: " + std::strerror(errno);
    std::ostringstream text;
    text << in.rdbuf();
    return ParseScenario(text.str(), path);
  } catch (...) {
    return path + ": cannot read";
  }
}

ParseResult DefaultScenario() { return ParseScenario(kDefaultScenarioYaml, "<built-in>"); }

}  // namespace nvmlx::simgpu
