// CounterWindow: a cumulative counter's change over the last minute, as DCGM's health checks
// measure it for the PCIe replay counter (MonitorPcie) and the NVLink error totals
// (MonitorNVLink4Fields): the difference between the oldest and the newest sample within the last
// 60 s.
//
// Thread-safety: not thread-safe; each window has one owner, the collector's fast loop (through
// a GPU's state or its NvlinkHealthReader).
#ifndef NVML_EXPORTER_COLLECT_COUNTER_WINDOW_H_
#define NVML_EXPORTER_COLLECT_COUNTER_WINDOW_H_

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>

namespace nvmlx::collect {

class CounterWindow {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::seconds kWindow{60};

  // A sample at `at`, no earlier than the last one; the samples more than kWindow older leave.
  void Add(Clock::time_point at, uint64_t counter);

  // The change between the oldest and the newest sample of the window, absolute as DCGM takes it
  // (a counter reset counts as the distance to its new value); empty with fewer than 2 samples.
  std::optional<uint64_t> Delta() const;

 private:
  struct Sample {
    Clock::time_point at;
    uint64_t counter;
  };
  std::deque<Sample> samples_;
};

}  // namespace nvmlx::collect

#endif  // NVML_EXPORTER_COLLECT_COUNTER_WINDOW_H_
