#include "collect/clock_events.h"

#include <algorithm>

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

void ClockEventTotals::Add(uint64_t reasons) {
  if (!previous_) {
    previous_ = reasons;  // a reason active at start is no activation we saw
    return;
  }
  const uint64_t rose = reasons & ~*previous_;
  previous_ = reasons;
  for (uint64_t bit : fields::kClockEventReasonBits) {
    if ((rose & bit) == 0) continue;
    auto it =
        std::lower_bound(totals_.begin(), totals_.end(), bit,
                         [](const model::ClockEventCount& c, uint64_t b) { return c.reason < b; });
    if (it == totals_.end() || it->reason != bit) it = totals_.insert(it, {bit, 0});
    ++it->count;
  }
}

}  // namespace nvmlx::collect
