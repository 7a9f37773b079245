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
// DCGM_EXP_CLOCK_EVENTS_TOTAL (dcgm-exporter 4.8.3) counts something else: activations. Upstream
// (collector/clock_events_total_collector.go) walks the same stored samples in time order and adds
// 1 to a reason each time its bit is set in a sample and was clear in the entity's previous one;
// the first sample only primes the baseline (a reason already active at start is not counted),
// and a blank or failed sample leaves the baseline as it was. ClockEventTotals does exactly that
// over our per-collection reads.
//
// The reasons counted and their label names are in fields/clock_event_names.h.
//
// Thread-safety: neither class is thread-safe; the GPU's fast worker owns one of each per GPU.
#ifndef NVML_EXPORTER_COLLECT_CLOCK_EVENTS_H_
#define NVML_EXPORTER_COLLECT_CLOCK_EVENTS_H_

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "model/snapshot.h"

namespace nvmlx::collect {

class ClockEventWindow {
 public:
  using Clock = std::chrono::steady_clock;

  explicit ClockEventWindow(std::chrono::milliseconds window) : window_(window) {}

  // One sample of the reasons bitmask taken at `at` (non-decreasing across calls).
  void Add(Clock::time_point at, uint64_t reasons);

  // The samples taken in [now - window, now]: *sampled says whether there is any; *counts gets,
  // for every named reason set in at least one of them, the number of samples it was set in
  // (ascending bit). Older samples are dropped.
  void Counts(Clock::time_point now, bool* sampled, std::vector<model::ClockEventCount>* counts);

  std::chrono::milliseconds window() const { return window_; }

 private:
  void Prune(Clock::time_point now);

  std::chrono::milliseconds window_;
  std::deque<std::pair<Clock::time_point, uint64_t>> samples_;  // ascending time
};

// Rising edges of each named reason bit across successive successful reads of the bitmask.
class ClockEventTotals {
 public:
  // One successful read. The first only sets the baseline; later ones add 1 to each named reason
  // set now and clear in the previous read.
  void Add(uint64_t reasons);
  // Every reason that turned active at least once, with how often, ascending bit; never
  // decreasing.
  const std::vector<model::ClockEventCount>& totals() const { return totals_; }

 private:
  std::optional<uint64_t> previous_;            // the last read; none before the first
  std::vector<model::ClockEventCount> totals_;  // ascending reason, count >= 1
};

}  // namespace nvmlx::collect

#endif  // NVML_EXPORTER_COLLECT_CLOCK_EVENTS_H_
