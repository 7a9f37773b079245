// The duty cycle as a pure function of elapsed time, so every GPU thread agrees on phase
// boundaries without talking to each other and the boundaries are unit-testable.
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>

namespace gpu_pulse {

enum class PhaseKind { kOn, kOff };

std::string_view PhaseName(PhaseKind kind);

struct Phase {
  PhaseKind kind = PhaseKind::kOn;
  int64_t index = 0;                  // Cycle number: on #n is followed by off #n.
  std::chrono::nanoseconds start{0};  // Offsets from the start of the run.
  std::chrono::nanoseconds end{0};    // Clipped to the run's duration.
  friend bool operator==(const Phase&, const Phase&) = default;
};

class Schedule {
 public:
  // on > 0. off == 0: always loaded (off phases have no length and are never returned).
  // duration == 0: unbounded.
  Schedule(std::chrono::nanoseconds on, std::chrono::nanoseconds off,
           std::chrono::nanoseconds duration);

  bool Done(std::chrono::nanoseconds elapsed) const;
  // The phase containing `elapsed` (start <= elapsed < end). Undefined once Done(elapsed).
  Phase At(std::chrono::nanoseconds elapsed) const;

 private:
  std::chrono::nanoseconds on_, off_, duration_;
};

}  // namespace gpu_pulse
