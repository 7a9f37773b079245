// DCGM_EXP_GPU_HEALTH_STATUS from NVML: the per-GPU health evaluation that DCGM's health module
// (dcgmHealthCheck with every watch set) does, rebuilt on per-collection NVML reads (a few µs each,
// the PCIe replay counter about 0.15 ms).
//
// dcgm-exporter emits one series per GPU and watch, in the fixed order of kHealthWatches, with
// health_watch and health_error_code labels and DCGM's result as value (0 pass, 10 warn, 20 fail);
// a watch with no incident is PASS with DCGM_FR_OK. EvaluateHealth maps plain readings to those
// results; the exact condition table is in docs/dcgm-compat.md §5 "Health and P2P status", and each
// check below names DCGM's (modules/health/DcgmHealthWatch.cpp, DCGM 4.6) it mirrors. Where a watch
// has several incidents, the worst result wins and, among equal results, the first check in the
// table.
//
// Thread-safety: EvaluateHealth is a pure function. A PcieReplayWindow (a CounterWindow) is not
// thread-safe; the collector's fast loop owns one per GPU.
#ifndef NVML_EXPORTER_COLLECT_HEALTH_H_
#define NVML_EXPORTER_COLLECT_HEALTH_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "collect/counter_window.h"
#include "model/snapshot.h"

namespace nvmlx::collect {

inline constexpr int kHealthPass = 0;
inline constexpr int kHealthWarn = 10;
inline constexpr int kHealthFail = 20;

// dcgm-exporter's gpuHealthChecks order (collector/gpu_health_collector.go), which is also the
// series order within a GPU.
inline constexpr std::array<std::string_view, 11> kHealthWatches = {
    "PCIE", "NVLINK", "PMU", "MCU", "MEM", "SM", "INFOROM", "THERMAL", "POWER", "DRIVER", "ALL"};

// What one collection read for one GPU. An absent reading (read failed or unsupported) raises no
// incident, as DCGM skips blank samples.
struct HealthReadings {
  std::optional<uint64_t> volatile_dbe;  // nvmlDeviceGetTotalEccErrors(uncorrected, volatile)
  std::optional<unsigned> retired_sbe;   // nvmlDeviceGetRetiredPages(multiple SBE) count
  std::optional<unsigned> retired_dbe;   // nvmlDeviceGetRetiredPages(DBE) count
  std::optional<bool> retired_pending;   // NVML_FI_DEV_RETIRED_PENDING
  std::optional<unsigned> remap_uncorrectable;  // nvmlDeviceGetRemappedRows
  std::optional<unsigned> remap_pending;
  std::optional<unsigned> remap_failure;
  std::optional<uint64_t> clock_event_reasons;       // nvmlDeviceGetCurrentClocksEventReasons
  std::optional<unsigned> pcie_link_gen;             // current generation
  std::optional<unsigned> pcie_link_width;           // current lanes
  std::optional<uint64_t> pcie_replays_last_minute;  // PcieReplayWindow::Delta
  bool power_readable = true;                        // nvmlDeviceGetPowerUsage answered
  std::optional<unsigned> nvlinks_down;              // CountNvlinksDown (nullopt: no NVLink)
  // Growth of the NVLink error totals over the last minute (FI 38/45/52/59): CRC flit, CRC data,
  // replay, recovery (NvlinkHealthReader).
  std::array<std::optional<uint64_t>, 4> nvlink_errors_last_minute;
  std::optional<int64_t> recovery_action;  // NVML_FI_DEV_GET_GPU_RECOVERY_ACTION
  std::vector<model::XidCount> xids;       // Xids seen within the Xid window (-x)
  // The GPU is lost (Xid 79 or GPU_IS_LOST): ALL fails with DCGM_FR_FALLEN_OFF_BUS, and nothing
  // else is read (LostGpuHealth).
  bool fell_off_bus = false;
};

// One result per watch, in kHealthWatches order.
std::vector<model::HealthResult> EvaluateHealth(const HealthReadings& r);

// The answer of nvmlDeviceGetNvLinkState for one link: active, inactive, or an error.
enum class NvlinkState { kActive, kInactive, kError };

// Links that count as down, as DCGM classifies nvmlDeviceGetNvLinkState per link
// (UpdateNvLinkLinkStateFromNvml): an error (NOT_SUPPORTED without NVLink, INVALID_ARGUMENT past
// the GPU's last link, anything else) is "not supported" and ignored; an inactive link is down,
// unless MIG is enabled on any GPU of the host, when NVML reports links inactive and DCGM
// calls them disabled. nullopt when no link answered at all (a GPU without NVLink).
std::optional<unsigned> CountNvlinksDown(const std::vector<NvlinkState>& links,
                                         bool mig_enabled_anywhere);

// The health of a GPU that is lost: DCGM's result for a GPU that fell off the bus (ALL fails
// with DCGM_FR_FALLEN_OFF_BUS), plus what the Xids of the window raise; every other watch passes,
// since nothing else can be read from it.
std::vector<model::HealthResult> LostGpuHealth(const std::vector<model::XidCount>& xids);

// DCGM's expected PCIe replays per minute for a link: ceil(rate per lane for the generation x
// lanes), with the generation capped at 6 (DCGM's GetExpectedPcieReplayRate). 0 for gen 0.
unsigned ExpectedPcieReplaysPerMinute(unsigned gen, unsigned width);

// The PCIe replay counter (DCGM_FI_DEV_PCIE_REPLAY_TOTAL) over the last minute: the collector's
// name for the window it keeps per GPU.
using PcieReplayWindow = CounterWindow;

}  // namespace nvmlx::collect

#endif  // NVML_EXPORTER_COLLECT_HEALTH_H_
