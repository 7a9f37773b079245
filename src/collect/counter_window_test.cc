// CounterWindow: the oldest and newest samples of the last minute, as DCGM compares them for the
// PCIe replay counter and the NVLink error totals.
#include "collect/counter_window.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace nvmlx::collect {
namespace {

const CounterWindow::Clock::time_point kT0 =
    CounterWindow::Clock::time_point{} + std::chrono::hours(1);

TEST(CounterWindowTest, ComparesOldestAndNewestOfTheLastMinute) {
  CounterWindow w;
  w.Add(kT0, 100);
  EXPECT_FALSE(w.Delta().has_value());
  w.Add(kT0 + std::chrono::seconds(30), 140);
  EXPECT_EQ(w.Delta(), 40u);
  w.Add(kT0 + std::chrono::seconds(70), 150);  // kT0 leaves the window
  EXPECT_EQ(w.Delta(), 10u);
  w.Add(kT0 + std::chrono::seconds(75), 5);  // counter reset: absolute difference
  EXPECT_EQ(w.Delta(), 135u);
}

TEST(CounterWindowTest, AGapLongerThanTheWindowStartsAfresh) {
  CounterWindow w;
  w.Add(kT0, 7);
  w.Add(kT0 + std::chrono::minutes(5), 9);  // kT0 left: one sample
  EXPECT_FALSE(w.Delta().has_value());
  w.Add(kT0 + std::chrono::minutes(5) + std::chrono::seconds(1), 12);
  EXPECT_EQ(w.Delta(), 3u);
}

TEST(CounterWindowTest, SixtyFourBitTotals) {
  CounterWindow w;  // NVLink error totals are 64-bit
  const uint64_t big = (uint64_t{1} << 40) + 3;
  w.Add(kT0, big);
  w.Add(kT0 + std::chrono::seconds(1), big + (uint64_t{1} << 33));
  EXPECT_EQ(w.Delta(), uint64_t{1} << 33);
}

}  // namespace
}  // namespace nvmlx::collect
