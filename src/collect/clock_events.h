// DCGM_EXP_CLOCK_EVENTS_COUNT: how often each clock-event reason (throttle reason) was seen on a
// GPU within a sliding window, counted the way dcgm-exporter counts it.
//
// dcgm-exporter (collector/clock_events_collector.go, expcollector.go) asks DCGM for every stored
// sample of DCGM_FI_DEV_CLOCKS_EVENT_REASONS since now - window and adds 1 to each reason whose
// bit is set in a sample. DCGM stores one sample per watch interval (= the collect interval), so
// the value is "collections within the window during which the reason was active", not a number
// of transitions. We keep the same samples ourselves: one nvmlDeviceGetCurrentClocksEventReasons
// bitmask per fast-loop collection, pruned to the window.
//
// Thread-safety: ClockEventWindow is not thread-safe; the collector's fast loop owns one per GPU.
// ClockEventName is a pure function.
#ifndef NVML_EXPORTER_COLLECT_CLOCK_EVENTS_H_
#define NVML_EXPORTER_COLLECT_CLOCK_EVENTS_H_

#include <chrono>
#include <cstdint>
#include <deque>
#include <string_view>
#include <utility>
#include <vector>

#include "collect/snapshot.h"

namespace nvmlx::collect {

// The nine reasons dcgm-exporter names, by bit (nvmlClocksEventReason*, same values as DCGM's
// DCGM_CLOCKS_EVENT_REASON_*), ascending.
inline constexpr uint64_t kClockEventReasonBits[] = {0x1,  0x2,  0x4,  0x8,  0x10,
                                                     0x20, 0x40, 0x80, 0x100};

// The clock_event label value of one reason bit ("gpu_idle", "power_cap", ...); empty for any
// other value (bits dcgm-exporter does not name are not counted). Inline: the renderer uses it
// without linking the collector.
constexpr std::string_view ClockEventName(uint64_t reason_bit) {
  // dcgm-exporter's clockEventToString (the names of dcgmi's CommandLineParser).
  switch (reason_bit) {
    case 0x1:
      return "gpu_idle";
    case 0x2:
      return "clocks_setting";
    case 0x4:
      return "power_cap";
    case 0x8:
      return "hw_slowdown";
    case 0x10:
      return "sync_boost";
    case 0x20:
      return "sw_thermal";
    case 0x40:
      return "hw_thermal";
    case 0x80:
      return "hw_power_brake";
    case 0x100:
      return "display_clocks";
    default:
      return "";
  }
}

class ClockEventWindow {
 public:
  using Clock = std::chrono::steady_clock;

  explicit ClockEventWindow(std::chrono::milliseconds window) : window_(window) {}

  // One sample of the reasons bitmask taken at `at` (non-decreasing across calls).
  void Add(Clock::time_point at, uint64_t reasons);

  // The samples taken in [now - window, now]: *sampled says whether there is any; *counts gets,
  // for every named reason set in at least one of them, the number of samples it was set in
  // (ascending bit). Older samples are dropped.
  void Counts(Clock::time_point now, bool* sampled, std::vector<ClockEventCount>* counts);

  std::chrono::milliseconds window() const { return window_; }

 private:
  void Prune(Clock::time_point now);

  std::chrono::milliseconds window_;
  std::deque<std::pair<Clock::time_point, uint64_t>> samples_;  // ascending time
};

}  // namespace nvmlx::collect

#endif  // NVML_EXPORTER_COLLECT_CLOCK_EVENTS_H_
