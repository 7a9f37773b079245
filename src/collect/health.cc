#include "collect/health.h"

#include <cmath>
#include <string_view>

namespace nvmlx::collect {
namespace {

enum Watch { kPcie, kNvlink, kPmu, kMcu, kMem, kSm, kInforom, kThermal, kPower, kDriver, kAll };

// An Xid that DCGM's health module maps to a watch (DcgmHealthWatch::BuildXidMappings): the
// "devastating" ones go to ALL, the rest to their subsystem.
struct XidRule {
  int64_t xid;
  Watch watch;
  int result;
  std::string_view code;
};
constexpr std::string_view kXidCode = "DCGM_FR_XID_ERROR";
constexpr XidRule kXidRules[] = {
    {31, kMem, kHealthWarn, kXidCode},
    {32, kMem, kHealthWarn, kXidCode},
    {38, kPcie, kHealthWarn, kXidCode},
    {39, kPcie, kHealthWarn, kXidCode},
    {42, kPcie, kHealthWarn, kXidCode},
    {43, kMem, kHealthWarn, kXidCode},
    {48, kAll, kHealthFail, kXidCode},
    {54, kPower, kHealthWarn, kXidCode},
    {56, kPower, kHealthWarn, kXidCode},
    {57, kPower, kHealthWarn, "DCGM_FR_CLOCK_THROTTLE_POWER"},
    {58, kPower, kHealthWarn, kXidCode},
    {60, kThermal, kHealthWarn, "DCGM_FR_CLOCK_THROTTLE_THERMAL"},
    {61, kThermal, kHealthWarn, kXidCode},
    {62, kThermal, kHealthWarn, kXidCode},
    {63, kMem, kHealthWarn, "DCGM_FR_PENDING_PAGE_RETIREMENTS"},
    {64, kMem, kHealthFail, "DCGM_FR_ROW_REMAP_FAILURE"},
    {67, kNvlink, kHealthWarn, kXidCode},
    {73, kNvlink, kHealthWarn, kXidCode},
    {74, kAll, kHealthFail, kXidCode},
    {78, kPower, kHealthWarn, kXidCode},
    {79, kAll, kHealthFail, "DCGM_FR_FALLEN_OFF_BUS"},
    {93, kInforom, kHealthWarn, "DCGM_FR_CORRUPT_INFOROM"},
    {94, kAll, kHealthWarn, "DCGM_FR_CONTAINED_ERROR"},
    {95, kAll, kHealthFail, "DCGM_FR_UNCONTAINED_ERROR"},
    {119, kAll, kHealthFail, kXidCode},
    {120, kAll, kHealthFail, kXidCode},
    {121, kNvlink, kHealthWarn, kXidCode},
    {137, kNvlink, kHealthWarn, kXidCode},
    {140, kAll, kHealthFail, kXidCode},
};

// nvmlClocksEventReason* bits.
constexpr uint64_t kSwPowerCap = 0x4;
constexpr uint64_t kSwThermalSlowdown = 0x20;
constexpr uint64_t kHwThermalSlowdown = 0x40;
constexpr uint64_t kHwPowerBrakeSlowdown = 0x80;

// DCGM's limits (common/DcgmGPUHardwareLimits.h).
constexpr unsigned kMaxRetiredPages = 63;
constexpr unsigned kMaxRowRemapUncorrectable = 512;
constexpr uint64_t kMaxNvlinkErrors = 1;                // DCGM_LIMIT_MAX_NVLINK_ERROR
constexpr double kMaxNvlinkCrcErrorsPerSecond = 100.0;  // DCGM_LIMIT_MAX_NVLINK_CRC_ERROR

class Results {
 public:
  Results() {
    for (size_t i = 0; i < kHealthWatches.size(); ++i) {
      out_.push_back({kHealthWatches[i], "DCGM_FR_OK", kHealthPass});
    }
  }
  // Worst wins; among equals the first raised stays.
  void Raise(Watch w, int result, std::string_view code) {
    model::HealthResult& r = out_[w];
    if (result > r.value) {
      r.value = result;
      r.error_code = code;
    }
  }
  std::vector<model::HealthResult> Take() { return std::move(out_); }

 private:
  std::vector<model::HealthResult> out_;
};

}  // namespace

unsigned ExpectedPcieReplaysPerMinute(unsigned gen, unsigned width) {
  if (gen == 0) return 0;
  if (gen > 6) gen = 6;
  // 10^-12 bit error rate x the lane's GT/s x 60 s (Gen3 is 8 GT/s, not twice Gen2's 5).
  constexpr double kGigaTransfers[] = {2.5, 5.0, 8.0, 16.0, 32.0, 64.0};
  const double per_lane = kGigaTransfers[gen - 1] / 1000.0 * 60.0;
  return static_cast<unsigned>(std::ceil(per_lane * width));
}

std::vector<model::HealthResult> EvaluateHealth(const HealthReadings& r) {
  Results out;
  // Xids first: DCGM's subsystem checks run MonitorSubsystemXids before their field checks.
  for (const model::XidCount& x : r.xids) {
    if (x.count <= 0) continue;
    for (const XidRule& rule : kXidRules) {
      if (rule.xid == x.xid) out.Raise(rule.watch, rule.result, rule.code);
    }
  }
  if (r.fell_off_bus) out.Raise(kAll, kHealthFail, "DCGM_FR_FALLEN_OFF_BUS");

  // PCIE (MonitorPcie): replays within the last minute above the link's expected rate.
  if (r.pcie_replays_last_minute && r.pcie_link_gen && r.pcie_link_width && *r.pcie_link_gen > 0 &&
      *r.pcie_replays_last_minute >
          ExpectedPcieReplaysPerMinute(*r.pcie_link_gen, *r.pcie_link_width)) {
    out.Raise(kPcie, kHealthWarn, "DCGM_FR_PCI_REPLAY_RATE");
  }

  // NVLINK (MonitorNVLink4Fields): any growth of an error total within the last minute. Replay
  // and recovery errors fail; CRC errors warn, and fail at 100 per second or more (DCGM divides
  // by the minute it looked at, whatever span its samples cover).
  for (size_t k = 0; k < r.nvlink_errors_last_minute.size(); ++k) {
    const std::optional<uint64_t>& grew = r.nvlink_errors_last_minute[k];
    if (!grew || *grew < kMaxNvlinkErrors) continue;
    if (k >= 2) {
      out.Raise(kNvlink, kHealthFail, "DCGM_FR_NVLINK_ERROR_CRITICAL");
    } else if (static_cast<double>(*grew) / 60.0 >= kMaxNvlinkCrcErrorsPerSecond) {
      out.Raise(kNvlink, kHealthFail, "DCGM_FR_NVLINK_CRC_ERROR_THRESHOLD");
    } else {
      out.Raise(kNvlink, kHealthWarn, "DCGM_FR_NVLINK_ERROR_THRESHOLD");
    }
  }
  // NVLINK (MonitorNVLinkStatus): a link reported inactive (CountNvlinksDown).
  if (r.nvlinks_down && *r.nvlinks_down > 0) out.Raise(kNvlink, kHealthFail, "DCGM_FR_NVLINK_DOWN");

  // MEM (MonitorMem*).
  if (r.volatile_dbe && *r.volatile_dbe > 0) {
    out.Raise(kMem, kHealthFail, "DCGM_FR_VOLATILE_DBE_DETECTED");
  }
  if (r.retired_pending && *r.retired_pending) {
    out.Raise(kMem, kHealthWarn, "DCGM_FR_PENDING_PAGE_RETIREMENTS");
  }
  if (r.retired_sbe || r.retired_dbe) {
    const unsigned total = r.retired_sbe.value_or(0) + r.retired_dbe.value_or(0);
    if (total >= kMaxRetiredPages) out.Raise(kMem, kHealthFail, "DCGM_FR_RETIRED_PAGES_LIMIT");
  }
  if (r.remap_failure && *r.remap_failure > 0) {
    out.Raise(kMem, kHealthFail, "DCGM_FR_ROW_REMAP_FAILURE");
  }
  if (r.remap_uncorrectable && *r.remap_uncorrectable >= kMaxRowRemapUncorrectable) {
    out.Raise(kMem, kHealthWarn, "DCGM_FR_UNCORRECTABLE_ROW_REMAP");
  }
  // Ours: a pending remap needs a GPU reset to take effect (DCGM reports it through Xid 63 only).
  if (r.remap_pending && *r.remap_pending > 0) {
    out.Raise(kMem, kHealthWarn, "DCGM_FR_PENDING_ROW_REMAP");
  }

  // THERMAL and POWER (MonitorThermal / MonitorPower watch the violation counters; a counter
  // moves exactly while the matching clock-event reason is set, which is what we sample).
  if (r.clock_event_reasons) {
    if (*r.clock_event_reasons & (kSwThermalSlowdown | kHwThermalSlowdown)) {
      out.Raise(kThermal, kHealthWarn, "DCGM_FR_CLOCK_THROTTLE_THERMAL");
    }
    if (*r.clock_event_reasons & (kSwPowerCap | kHwPowerBrakeSlowdown)) {
      out.Raise(kPower, kHealthWarn, "DCGM_FR_CLOCK_THROTTLE_POWER");
    }
  }
  if (!r.power_readable) out.Raise(kPower, kHealthWarn, "DCGM_FR_POWER_UNREADABLE");

  // DRIVER (MonitorDriver): the driver's recommended recovery action
  // (nvmlDeviceGpuRecoveryAction_t).
  if (r.recovery_action) {
    switch (*r.recovery_action) {
      case 1:
        out.Raise(kDriver, kHealthFail, "DCGM_FR_GPU_RECOVERY_RESET");
        break;
      case 2:
        out.Raise(kDriver, kHealthFail, "DCGM_FR_GPU_RECOVERY_REBOOT");
        break;
      case 3:
        out.Raise(kDriver, kHealthWarn, "DCGM_FR_GPU_RECOVERY_DRAIN_P2P");
        break;
      case 4:
        out.Raise(kDriver, kHealthFail, "DCGM_FR_GPU_RECOVERY_DRAIN_RESET");
        break;
      default:
        break;
    }
  }
  return out.Take();
}

std::optional<unsigned> CountNvlinksDown(const std::vector<NvlinkState>& links,
                                         bool mig_enabled_anywhere) {
  unsigned answered = 0, down = 0;
  for (NvlinkState s : links) {
    if (s == NvlinkState::kError) continue;
    ++answered;
    if (s == NvlinkState::kInactive && !mig_enabled_anywhere) ++down;
  }
  if (answered == 0) return std::nullopt;
  return down;
}

std::vector<model::HealthResult> LostGpuHealth(const std::vector<model::XidCount>& xids) {
  HealthReadings r;
  r.xids = xids;
  r.fell_off_bus = true;
  return EvaluateHealth(r);
}

}  // namespace nvmlx::collect
