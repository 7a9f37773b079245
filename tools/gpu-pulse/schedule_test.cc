#include "schedule.h"

#include <gtest/gtest.h>

namespace gpu_pulse {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

Phase P(PhaseKind kind, int64_t index, int start_s, int end_s) {
  return Phase{kind, index, seconds(start_s), seconds(end_s)};
}

TEST(Schedule, AlternatesOnThenOff) {
  Schedule s(seconds(20), seconds(20), seconds(100));
  EXPECT_EQ(s.At(seconds(0)), P(PhaseKind::kOn, 0, 0, 20));
  EXPECT_EQ(s.At(seconds(20) - nanoseconds(1)), P(PhaseKind::kOn, 0, 0, 20));
  EXPECT_EQ(s.At(seconds(20)), P(PhaseKind::kOff, 0, 20, 40));
  EXPECT_EQ(s.At(seconds(39)), P(PhaseKind::kOff, 0, 20, 40));
  EXPECT_EQ(s.At(seconds(40)), P(PhaseKind::kOn, 1, 40, 60));
  EXPECT_EQ(s.At(seconds(75)), P(PhaseKind::kOff, 1, 60, 80));
  // The last phase is clipped to the run's duration.
  EXPECT_EQ(s.At(seconds(90)), P(PhaseKind::kOn, 2, 80, 100));
  EXPECT_FALSE(s.Done(seconds(100) - nanoseconds(1)));
  EXPECT_TRUE(s.Done(seconds(100)));
}

TEST(Schedule, UnequalPhases) {
  Schedule s(milliseconds(500), seconds(2), seconds(0));
  EXPECT_EQ(s.At(milliseconds(499)).kind, PhaseKind::kOn);
  EXPECT_EQ(s.At(milliseconds(500)).kind, PhaseKind::kOff);
  Phase p = s.At(milliseconds(2600));
  EXPECT_EQ(p.kind, PhaseKind::kOn);
  EXPECT_EQ(p.index, 1);
  EXPECT_EQ(p.start, milliseconds(2500));
  EXPECT_EQ(p.end, milliseconds(3000));
}

TEST(Schedule, UnboundedNeverDone) {
  Schedule s(seconds(20), seconds(20), seconds(0));
  EXPECT_FALSE(s.Done(std::chrono::hours(1000)));
  EXPECT_EQ(s.At(std::chrono::hours(1)), P(PhaseKind::kOn, 90, 3600, 3620));
}

TEST(Schedule, NoOffPhaseMeansAlwaysOn) {
  Schedule s(seconds(10), seconds(0), seconds(25));
  for (int t = 0; t < 25; ++t) EXPECT_EQ(s.At(seconds(t)).kind, PhaseKind::kOn) << t;
  EXPECT_EQ(s.At(seconds(10)), P(PhaseKind::kOn, 1, 10, 20));
  EXPECT_EQ(s.At(seconds(24)), P(PhaseKind::kOn, 2, 20, 25));
}

TEST(Schedule, PhaseNames) {
  EXPECT_EQ(PhaseName(PhaseKind::kOn), "on");
  EXPECT_EQ(PhaseName(PhaseKind::kOff), "off");
}

}  // namespace
}  // namespace gpu_pulse
