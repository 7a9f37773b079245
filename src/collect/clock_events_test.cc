#include "collect/clock_events.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

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

// The reasons that turned active, as a map-like list for comparisons.
std::vector<std::pair<uint64_t, int64_t>> Totals(const ClockEventTotals& t) {
  std::vector<std::pair<uint64_t, int64_t>> out;
  for (const model::ClockEventCount& c : t.totals()) out.emplace_back(c.reason, c.count);
  return out;
}

using Pairs = std::vector<std::pair<uint64_t, int64_t>>;
constexpr uint64_t kIdle = 0x1, kClocksSetting = 0x2, kPowerCap = 0x4;

// dcgm-exporter 4.8.3's transition cases: a rise counts once, staying set or falling does not,
// and only the bits that rose count when several are set.
TEST(ClockEventTotalsTest, CountsRisingEdgesOnly) {
  struct Case {
    const char* name;
    std::vector<uint64_t> reads;
    Pairs want;
  };
  const Case cases[] = {
      {"0 to A counts A", {0, kIdle}, {{kIdle, 1}}},
      {"A to A does not count", {kIdle, kIdle}, {}},
      {"A to A+B counts B", {kIdle, kIdle | kClocksSetting}, {{kClocksSetting, 1}}},
      {"A+B to B counts nothing", {kIdle | kClocksSetting, kClocksSetting}, {}},
      {"B to A+B counts A", {kClocksSetting, kIdle | kClocksSetting}, {{kIdle, 1}}},
      {"A on, off, on counts twice", {0, kIdle, 0, kIdle}, {{kIdle, 2}}},
      {"the first read only primes", {kIdle | kClocksSetting}, {}},
      {"an unnamed bit is not counted", {0, 0x200 | kPowerCap}, {{kPowerCap, 1}}},
  };
  for (const Case& c : cases) {
    ClockEventTotals t;
    for (uint64_t r : c.reads) t.Add(r);
    EXPECT_EQ(Totals(t), c.want) << c.name;
  }
}

// Across a long run the totals never go down, whatever the bitmask does, and the sum of rises
// matches a count made by hand.
TEST(ClockEventTotalsTest, NeverDecreasing) {
  ClockEventTotals t;
  const uint64_t reads[] = {kPowerCap, 0, kIdle, kIdle | kPowerCap, kPowerCap, 0, 0, kIdle, kIdle};
  Pairs before;
  for (uint64_t r : reads) {
    t.Add(r);
    Pairs now = Totals(t);
    for (const auto& [bit_binding, n] : before) {
      const auto bit = bit_binding;  // clang 14 cannot capture a structured binding
      auto it = std::find_if(now.begin(), now.end(), [&](const auto& p) { return p.first == bit; });
      ASSERT_NE(it, now.end()) << "a reason's series never disappears";
      EXPECT_GE(it->second, n);
    }
    before = now;
  }
  // Rises: idle at reads 3 and 8, power cap at read 4 (read 1 primes).
  EXPECT_EQ(before, (Pairs{{kIdle, 2}, {kPowerCap, 1}}));
}

}  // namespace
}  // namespace nvmlx::collect
