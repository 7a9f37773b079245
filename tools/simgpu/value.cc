#include "value.h"

#include <cmath>
#include <numbers>

namespace nvmlx::simgpu {
namespace {

// x mod m in [0, m) also for negative x (std::fmod keeps the sign of x).
double PositiveMod(double x, double m) { return x - m * std::floor(x / m); }

}  // namespace

ValueFn ValueFn::Constant(double v) {
  ValueFn f;
  f.a_ = v;
  return f;
}

ValueFn ValueFn::Square(double high, double low, double on_s, double off_s, double phase_s) {
  ValueFn f;
  f.kind_ = Kind::kSquare;
  f.a_ = high;
  f.b_ = low;
  f.c_ = on_s;
  f.d_ = off_s;
  f.e_ = phase_s;
  return f;
}

ValueFn ValueFn::Ramp(double from, double to, double over_s, bool repeat) {
  ValueFn f;
  f.kind_ = Kind::kRamp;
  f.a_ = from;
  f.b_ = to;
  f.c_ = over_s;
  f.repeat_ = repeat;
  return f;
}

ValueFn ValueFn::Sine(double mid, double amplitude, double period_s) {
  ValueFn f;
  f.kind_ = Kind::kSine;
  f.a_ = mid;
  f.b_ = amplitude;
  f.c_ = period_s;
  return f;
}

double ValueFn::At(double t) const {
  switch (kind_) {
    case Kind::kConstant:
      return a_;
    case Kind::kSquare:
      return PositiveMod(t + e_, c_ + d_) < c_ ? a_ : b_;
    case Kind::kRamp: {
      double u = repeat_ ? PositiveMod(t, c_) : std::fmin(std::fmax(t, 0.0), c_);
      return a_ + (b_ - a_) * (u / c_);
    }
    case Kind::kSine:
      return a_ + b_ * std::sin(2 * std::numbers::pi * t / c_);
  }
  return 0;
}

double ValueFn::Integral(double t) const {
  switch (kind_) {
    case Kind::kConstant:
      return a_ * t;
    case Kind::kSquare: {
      const double period = c_ + d_;
      // F(u) = ∫_0^u of the unshifted wave; the shifted integral is F(t + phase) - F(phase).
      auto from_zero = [&](double u) {
        double cycles = std::floor(u / period);
        double r = u - cycles * period;
        double partial = r < c_ ? a_ * r : a_ * c_ + b_ * (r - c_);
        return cycles * (a_ * c_ + b_ * d_) + partial;
      };
      return from_zero(t + e_) - from_zero(e_);
    }
    case Kind::kRamp: {
      auto partial = [&](double r) { return a_ * r + (b_ - a_) * r * r / (2 * c_); };
      const double cycle = (a_ + b_) / 2 * c_;
      if (t <= 0) return a_ * t;  // before the start the ramp sits at `from`
      if (!repeat_) return t < c_ ? partial(t) : cycle + b_ * (t - c_);
      double cycles = std::floor(t / c_);
      return cycles * cycle + partial(t - cycles * c_);
    }
    case Kind::kSine: {
      const double w = 2 * std::numbers::pi / c_;
      return a_ * t + b_ / w * (1 - std::cos(w * t));
    }
  }
  return 0;
}

double ValueFn::Max() const {
  switch (kind_) {
    case Kind::kConstant:
      return a_;
    case Kind::kSquare:
    case Kind::kRamp:
      return std::fmax(a_, b_);  // a ramp's values lie between from and to
    case Kind::kSine:
      return a_ + std::fabs(b_);
  }
  return 0;
}

double ValueFn::Average(double t1, double t2) const {
  // A constant is exact (the integral difference would round 2.5 to 2.4999…, and B/s fields
  // truncate); an empty window (frozen clock) is the value at that instant.
  if (kind_ == Kind::kConstant || !(t2 - t1 > 1e-9)) return At(t2);
  return (Integral(t2) - Integral(t1)) / (t2 - t1);
}

}  // namespace nvmlx::simgpu
