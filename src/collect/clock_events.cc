#include "collect/clock_events.h"

#include "fields/clock_event_names.h"

namespace nvmlx::collect {

void ClockEventWindow::Add(Clock::time_point at, uint64_t reasons) {
  samples_.emplace_back(at, reasons);
  Prune(at);
}

void ClockEventWindow::Prune(Clock::time_point now) {
  const Clock::time_point cutoff = now - window_;
  while (!samples_.empty() && samples_.front().first < cutoff) samples_.pop_front();
}

void ClockEventWindow::Counts(Clock::time_point now, bool* sampled,
                              std::vector<model::ClockEventCount>* counts) {
  Prune(now);
  *sampled = !samples_.empty();
  counts->clear();
  for (uint64_t bit : fields::kClockEventReasonBits) {
    int64_t n = 0;
    for (const auto& [at, reasons] : samples_) n += (reasons & bit) != 0 ? 1 : 0;
    if (n > 0) counts->push_back({bit, n});
  }
}

}  // namespace nvmlx::collect
