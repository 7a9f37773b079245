#include "live/history.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

namespace nvmlx::live {
namespace {

using std::chrono::milliseconds;

// A snapshot of `n` GPUs at `t_ms` whose GPU_UTIL is `util` (+ the GPU index) and whose power
// is absent on GPU 1.
struct Fixture {
  std::shared_ptr<std::vector<model::DeviceIdentity>> ids =
      std::make_shared<std::vector<model::DeviceIdentity>>();
  explicit Fixture(int n) {
    for (int i = 0; i < n; ++i) {
      model::DeviceIdentity id;
      id.index = static_cast<unsigned>(i);
      id.uuid = "GPU-" + std::to_string(i);
      ids->push_back(id);
    }
  }
  model::Snapshot At(int64_t t_ms, double util) const {
    model::Snapshot s;
    s.time = std::chrono::system_clock::time_point(milliseconds(t_ms));
    s.identities = ids;
    for (const model::DeviceIdentity& id : *ids) {
      model::DeviceSnapshot d;
      d.identity = &id;
      d.samples.push_back({150, int64_t{40}});
      if (id.index != 1) d.samples.push_back({155, 300.5});
      d.samples.push_back({203, static_cast<int64_t>(util) + id.index});
      d.samples.push_back({1004, 0.25});
      s.devices.push_back(std::move(d));
    }
    return s;
  }
};

TEST(History, CapacityAndBytesFollowMinutesAndInterval) {
  History h({.minutes = 15, .interval = milliseconds(1000)});
  EXPECT_EQ(h.Capacity(), 15u * 60 + 1);
  EXPECT_EQ(h.BytesPerDevice(), (15u * 60 + 1) * History::kPointBytes);
  EXPECT_EQ(History::kPointBytes, 32u);  // 8-byte time + 6 floats: docs/live-page.md says so
  History slow({.minutes = 15, .interval = milliseconds(30000)});
  EXPECT_EQ(slow.Capacity(), 31u);
  History odd({.minutes = 1, .interval = milliseconds(7000)});
  EXPECT_EQ(odd.Capacity(), 10u);  // ceil(60/7) + 1
  History off({.minutes = 0, .interval = milliseconds(1000)});
  EXPECT_EQ(off.Capacity(), 0u);
  off.Add(Fixture(2).At(1000, 5));
  EXPECT_TRUE(off.Query(15).empty());
  EXPECT_EQ(off.BytesHeld(), 0u);
}

TEST(History, KeepsSeriesValuesAndNanForAbsent) {
  Fixture f(2);
  History h({.minutes = 1, .interval = milliseconds(1000)});
  h.Add(f.At(1000, 10));
  std::vector<DeviceHistory> q = h.Query(1);
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q[0].key, "GPU-0");
  EXPECT_EQ(q[1].index, 1u);
  ASSERT_EQ(q[0].points.size(), 1u);
  const HistoryPoint& p = q[0].points[0];
  EXPECT_EQ(p.time_ms, 1000);
  EXPECT_FLOAT_EQ(p.values[0], 10);                   // gpu_util
  EXPECT_FLOAT_EQ(p.values[1], 0.25);                 // tensor_active
  EXPECT_TRUE(std::isnan(p.values[2]));               // dram_active never sampled
  EXPECT_FLOAT_EQ(p.values[4], 300.5);                // power_w
  EXPECT_FLOAT_EQ(p.values[5], 40);                   // temp_c
  EXPECT_TRUE(std::isnan(q[1].points[0].values[4]));  // GPU 1 has no power sample
}

TEST(History, WrapsAroundKeepingTheNewestInOrder) {
  Fixture f(1);
  History h({.minutes = 1, .interval = milliseconds(10000)});  // 7 points
  ASSERT_EQ(h.Capacity(), 7u);
  for (int i = 0; i < 20; ++i) h.Add(f.At(1000 * i, i));
  std::vector<DeviceHistory> q = h.Query(1);
  ASSERT_EQ(q.size(), 1u);
  ASSERT_EQ(q[0].points.size(), 7u);
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(q[0].points[i].time_ms, 1000 * (13 + i));
    EXPECT_FLOAT_EQ(q[0].points[i].values[0], 13 + i);
  }
}

TEST(History, BoundHoldsWhateverIsAdded) {
  Fixture f(8);
  History h({.minutes = 2, .interval = milliseconds(1000), .max_devices = 8});
  const std::size_t bound = 8 * h.BytesPerDevice();
  for (int i = 0; i < 1000; ++i) {
    h.Add(f.At(1000 * i, i % 100));
    ASSERT_LE(h.BytesHeld(), bound);
  }
  EXPECT_EQ(h.BytesHeld(), bound);
  // Devices beyond max_devices get no ring.
  Fixture more(12);
  History capped({.minutes = 2, .interval = milliseconds(1000), .max_devices = 8});
  capped.Add(more.At(0, 1));
  EXPECT_EQ(capped.Query(2).size(), 8u);
  EXPECT_EQ(capped.BytesHeld(), bound);
}

TEST(History, ForgetsADeviceUnseenForAWholeWindow) {
  History h({.minutes = 1, .interval = milliseconds(1000)});
  Fixture two(2), one(1);
  h.Add(two.At(0, 1));
  h.Add(one.At(30000, 1));
  EXPECT_EQ(h.Query(1).size(), 2u);  // GPU-1 was seen within the window
  h.Add(one.At(61000, 1));
  ASSERT_EQ(h.Query(1).size(), 1u);
  EXPECT_EQ(h.Query(1)[0].key, "GPU-0");
  EXPECT_EQ(h.BytesHeld(), h.BytesPerDevice());
}

TEST(History, QueryMinutesCountsBackFromTheNewestPoint) {
  Fixture f(1);
  History h({.minutes = 10, .interval = milliseconds(60000)});
  for (int i = 0; i <= 10; ++i) h.Add(f.At(60000 * i, i));
  EXPECT_EQ(h.Query(10)[0].points.size(), 11u);  // both ends
  EXPECT_EQ(h.Query(3)[0].points.size(), 4u);    // minutes 7, 8, 9, 10
  EXPECT_EQ(h.Query(3)[0].points.front().time_ms, 7 * 60000);
  EXPECT_EQ(h.Query(60)[0].points.size(), 11u);  // more than kept: the whole window
  EXPECT_TRUE(h.Query(0).empty());
  // After a time: only newer points, and never older than the minutes asked for.
  EXPECT_EQ(h.Query(10, 8 * 60000)[0].points.size(), 2u);  // minutes 9 and 10
  EXPECT_EQ(h.Query(3, 0)[0].points.size(), 4u);
  EXPECT_TRUE(h.Query(10, 10 * 60000)[0].points.empty());
}

}  // namespace
}  // namespace nvmlx::live
