#include "value.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iterator>

namespace nvmlx::simgpu {
namespace {

// ∫_0^t f by the midpoint rule, to check the closed forms against.
double Numeric(const ValueFn& f, double t) {
  const int n = 200000;
  const double h = t / n;
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += f.At((i + 0.5) * h);
  return sum * h;
}

TEST(ValueFnTest, ConstantAndDefault) {
  EXPECT_EQ(ValueFn().At(12), 0);
  ValueFn c = ValueFn::Constant(7.5);
  EXPECT_EQ(c.At(0), 7.5);
  EXPECT_EQ(c.At(1e6), 7.5);
  EXPECT_DOUBLE_EQ(c.Integral(4), 30);
}

TEST(ValueFnTest, SquareStartsHighAndToggles) {
  ValueFn sq = ValueFn::Square(100, 0, 20, 20);
  EXPECT_EQ(sq.At(0), 100);
  EXPECT_EQ(sq.At(19.999), 100);
  EXPECT_EQ(sq.At(20), 0);
  EXPECT_EQ(sq.At(39.9), 0);
  EXPECT_EQ(sq.At(40), 100);
  EXPECT_EQ(sq.At(65), 0);  // 65 mod 40 = 25: the off half
  EXPECT_EQ(sq.At(85), 100);
}

TEST(ValueFnTest, SquarePhaseShiftsTheWave) {
  ValueFn sq = ValueFn::Square(690, 80, 20, 10, 15);  // (t + 15) mod 30 < 20
  EXPECT_EQ(sq.At(0), 690);
  EXPECT_EQ(sq.At(4.9), 690);
  EXPECT_EQ(sq.At(5), 80);
  EXPECT_EQ(sq.At(14.9), 80);
  EXPECT_EQ(sq.At(15), 690);
}

TEST(ValueFnTest, RampRepeatsOrHolds) {
  ValueFn r = ValueFn::Ramp(0, 100, 60);
  EXPECT_DOUBLE_EQ(r.At(0), 0);
  EXPECT_DOUBLE_EQ(r.At(30), 50);
  EXPECT_DOUBLE_EQ(r.At(59.4), 99);
  EXPECT_DOUBLE_EQ(r.At(60), 0);
  EXPECT_DOUBLE_EQ(r.At(75), 25);
  ValueFn once = ValueFn::Ramp(10, 20, 10, /*repeat=*/false);
  EXPECT_DOUBLE_EQ(once.At(5), 15);
  EXPECT_DOUBLE_EQ(once.At(10), 20);
  EXPECT_DOUBLE_EQ(once.At(1000), 20);
}

TEST(ValueFnTest, Sine) {
  ValueFn s = ValueFn::Sine(50, 10, 40);
  EXPECT_NEAR(s.At(0), 50, 1e-9);
  EXPECT_NEAR(s.At(10), 60, 1e-9);
  EXPECT_NEAR(s.At(30), 40, 1e-9);
  EXPECT_NEAR(s.At(40), 50, 1e-9);
}

TEST(ValueFnTest, IntegralsMatchNumericIntegration) {
  const ValueFn fns[] = {
      ValueFn::Square(690, 80, 20, 20), ValueFn::Square(5, -1, 3, 7, 4.5),
      ValueFn::Ramp(0, 100, 60),        ValueFn::Ramp(10, 20, 10, false),
      ValueFn::Sine(300, 100, 17),
  };
  for (const ValueFn& f : fns) {
    for (double t : {0.0, 1.0, 19.5, 20.0, 41.0, 123.4}) {
      EXPECT_NEAR(f.Integral(t), Numeric(f, t), 1e-3 * (1 + std::abs(Numeric(f, t))))
          << "kind " << static_cast<int>(f.kind()) << " t=" << t;
    }
  }
}

TEST(ValueFnTest, SquareIntegralIsTheEnergyOfTheDutyCycle) {
  // 20 s at 690 W + 20 s at 80 W = 15400 J per 40 s period.
  ValueFn sq = ValueFn::Square(690, 80, 20, 20);
  EXPECT_DOUBLE_EQ(sq.Integral(40), 15400);
  EXPECT_DOUBLE_EQ(sq.Integral(50), 15400 + 6900);
  EXPECT_DOUBLE_EQ(sq.Integral(70), 15400 + 13800 + 800);
}

TEST(ValueFnTest, AverageOfSquareWaveIsItsWindowMean) {
  // What nvmlGpmMetricsGet reports: 1 s at 100 %, 1 s at 0 %.
  ValueFn sq = ValueFn::Square(100, 0, 1, 1);
  EXPECT_DOUBLE_EQ(sq.Average(0, 1), 100);
  EXPECT_DOUBLE_EQ(sq.Average(1, 2), 0);
  EXPECT_DOUBLE_EQ(sq.Average(0, 2), 50);
  EXPECT_NEAR(sq.Average(0.5, 1.5), 50, 1e-9);
  EXPECT_NEAR(sq.Average(0.75, 1.25), 50, 1e-9);
  EXPECT_NEAR(sq.Average(0, 30), 50, 1e-9);
  EXPECT_NEAR(sq.Average(0.5, 1.25), 100.0 * 0.5 / 0.75, 1e-9);
  EXPECT_DOUBLE_EQ(sq.Average(0.5, 0.5), 100) << "empty window (frozen clock): the value at t";
  EXPECT_DOUBLE_EQ(sq.Average(1.5, 1.5), 0);
}

// The bound of the energy counter's carry-over between processes (World::EnergyCarryS): no value
// any of the shapes takes may exceed it, or a restart could find the counter lower than before.
TEST(ValueFnTest, MaxBoundsEveryValue) {
  const ValueFn fns[] = {ValueFn::Constant(80),
                         ValueFn::Square(690, 80, 20, 20, 7),
                         ValueFn::Square(80, 690, 1, 3),
                         ValueFn::Ramp(700, 100, 60),
                         ValueFn::Ramp(0, 300, 10, false),
                         ValueFn::Sine(300, -200, 17)};
  const double want[] = {80, 690, 690, 700, 300, 500};
  for (size_t i = 0; i < std::size(fns); ++i) {
    EXPECT_DOUBLE_EQ(fns[i].Max(), want[i]) << i;
    double seen = -1e9;
    for (double t = 0; t < 120; t += 0.01) seen = std::fmax(seen, fns[i].At(t));
    EXPECT_LE(seen, fns[i].Max() + 1e-9) << i;
    EXPECT_GE(seen, fns[i].Max() - 1.0) << i << ": the bound is tight";
  }
}

}  // namespace
}  // namespace nvmlx::simgpu
