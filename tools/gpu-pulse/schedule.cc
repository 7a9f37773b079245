#include "schedule.h"

#include <algorithm>

namespace gpu_pulse {

std::string_view PhaseName(PhaseKind kind) { return kind == PhaseKind::kOn ? "on" : "off"; }

Schedule::Schedule(std::chrono::nanoseconds on, std::chrono::nanoseconds off,
                   std::chrono::nanoseconds duration)
    : on_(on), off_(off), duration_(duration) {}

bool Schedule::Done(std::chrono::nanoseconds elapsed) const {
  return duration_.count() > 0 && elapsed >= duration_;
}

Phase Schedule::At(std::chrono::nanoseconds elapsed) const {
  if (elapsed.count() < 0) elapsed = std::chrono::nanoseconds(0);
  const auto period = on_ + off_;
  Phase p;
  p.index = elapsed / period;
  const auto cycle_start = period * p.index;
  const auto into = elapsed - cycle_start;
  if (into < on_) {
    p.kind = PhaseKind::kOn;
    p.start = cycle_start;
    p.end = cycle_start + on_;
  } else {
    p.kind = PhaseKind::kOff;
    p.start = cycle_start + on_;
    p.end = cycle_start + period;
  }
  if (duration_.count() > 0) p.end = std::min(p.end, duration_);
  return p;
}

}  // namespace gpu_pulse
