#include "collect/clock_events.h"

#include <gtest/gtest.h>

namespace nvmlx::collect {
namespace {

using std::chrono::milliseconds;
using Clock = ClockEventWindow::Clock;

// A fake clock: explicit time points, no sleeping.
const Clock::time_point kT0 = Clock::time_point() + std::chrono::hours(1);

TEST(ClockEventWindowTest, CountsSamplesPerReasonWithinTheWindow) {
  ClockEventWindow w(milliseconds(1000));
  // Every 200 ms: power cap throughout, sw thermal in two samples, an unnamed bit (0x200) once.
  w.Add(kT0, 0x4);
  w.Add(kT0 + milliseconds(200), 0x4 | 0x20);
  w.Add(kT0 + milliseconds(400), 0x4 | 0x20 | 0x200);
  w.Add(kT0 + milliseconds(600), 0x4);
  bool sampled = false;
  std::vector<model::ClockEventCount> counts;
  w.Counts(kT0 + milliseconds(600), &sampled, &counts);
  EXPECT_TRUE(sampled);
  ASSERT_EQ(counts.size(), 2u);
  EXPECT_EQ(counts[0].reason, 0x4u);
  EXPECT_EQ(counts[0].count, 4);
  EXPECT_EQ(counts[1].reason, 0x20u);
  EXPECT_EQ(counts[1].count, 2);

  // At 1.3 s the samples of 0 and 0.2 s have left the window [0.3 s, 1.3 s].
  w.Counts(kT0 + milliseconds(1300), &sampled, &counts);
  EXPECT_TRUE(sampled);
  ASSERT_EQ(counts.size(), 2u);
  EXPECT_EQ(counts[0].count, 2);  // power cap at 0.4 and 0.6 s
  EXPECT_EQ(counts[1].count, 1);  // sw thermal at 0.4 s

  // The window edge itself still counts (DCGM's "values since").
  w.Counts(kT0 + milliseconds(1600), &sampled, &counts);
  ASSERT_EQ(counts.size(), 1u);
  EXPECT_EQ(counts[0].reason, 0x4u);
  EXPECT_EQ(counts[0].count, 1);
}

TEST(ClockEventWindowTest, NoReasonAndNoSampleAreDifferent) {
  ClockEventWindow w(milliseconds(500));
  bool sampled = true;
  std::vector<model::ClockEventCount> counts = {{0x4, 1}};
  w.Counts(kT0, &sampled, &counts);
  EXPECT_FALSE(sampled) << "nothing read yet";
  EXPECT_TRUE(counts.empty());

  w.Add(kT0, 0);  // read, but no reason active
  w.Counts(kT0 + milliseconds(100), &sampled, &counts);
  EXPECT_TRUE(sampled);
  EXPECT_TRUE(counts.empty());

  w.Counts(kT0 + milliseconds(700), &sampled, &counts);
  EXPECT_FALSE(sampled) << "the only sample aged out";
}

}  // namespace
}  // namespace nvmlx::collect
