// A simulated quantity as a function of simulation time t (seconds): constant, square wave, ramp
// or sine, as described in SCENARIO.md.
//
// ValueFn is a small immutable value type: once built it may be read from any number of threads
// at once. At() and Integral() are pure functions of t, which is what makes frozen-time runs (and
// so golden files) deterministic.
#ifndef NVML_EXPORTER_TOOLS_SIMGPU_VALUE_H_
#define NVML_EXPORTER_TOOLS_SIMGPU_VALUE_H_

namespace nvmlx::simgpu {

class ValueFn {
 public:
  enum class Kind { kConstant, kSquare, kRamp, kSine };

  ValueFn() = default;  // constant 0
  static ValueFn Constant(double v);
  // `high` while (t + phase_s) mod (on_s + off_s) < on_s, else `low`. Requires on_s + off_s > 0.
  static ValueFn Square(double high, double low, double on_s, double off_s, double phase_s = 0);
  // Linear from `from` to `to` over over_s (> 0); repeats, or holds `to` when repeat is false.
  static ValueFn Ramp(double from, double to, double over_s, bool repeat = true);
  // mid + amplitude * sin(2π t / period_s); period_s > 0.
  static ValueFn Sine(double mid, double amplitude, double period_s);

  Kind kind() const { return kind_; }
  // The value at time t.
  double At(double t) const;
  // ∫_0^t At(u) du, in closed form: the energy counter integrates power without keeping state,
  // so it is the same for every caller and every thread at the same t.
  double Integral(double t) const;
  // The largest value At() takes, at any t: the bound the energy counter's carry-over between
  // processes uses (World::EnergyCarryS).
  double Max() const;
  // The mean over [t1, t2] from Integral(): what a GPM counter pair measures. At(t2) when the
  // window is empty (a frozen clock).
  double Average(double t1, double t2) const;

 private:
  Kind kind_ = Kind::kConstant;
  // Meaning depends on kind_: constant {v}; square {high, low, on, off, phase};
  // ramp {from, to, over, repeat}; sine {mid, amplitude, period}.
  double a_ = 0, b_ = 0, c_ = 0, d_ = 0, e_ = 0;
  bool repeat_ = true;
};

}  // namespace nvmlx::simgpu

#endif  // NVML_EXPORTER_TOOLS_SIMGPU_VALUE_H_
