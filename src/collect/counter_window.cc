#include "collect/counter_window.h"

namespace nvmlx::collect {

void CounterWindow::Add(Clock::time_point at, uint64_t counter) {
  samples_.push_back({at, counter});
  while (samples_.size() > 1 && samples_.front().at < at - kWindow) samples_.pop_front();
}

std::optional<uint64_t> CounterWindow::Delta() const {
  if (samples_.size() < 2) return std::nullopt;
  const uint64_t a = samples_.front().counter, b = samples_.back().counter;
  return a <= b ? b - a : a - b;
}

}  // namespace nvmlx::collect
