#include "attribute/node_faults.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>

namespace nvmlx::attribute {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;
using ::testing::HasSubstr;

const WallTime kT0 = std::chrono::system_clock::from_time_t(1796000000);

// Two GPUs; GPU 0 held by ns/trainer.
struct Fixture {
  std::shared_ptr<std::vector<model::DeviceIdentity>> ids =
      std::make_shared<std::vector<model::DeviceIdentity>>();
  model::Snapshot snap;
  Fixture() {
    for (unsigned i = 0; i < 2; ++i) {
      model::DeviceIdentity id;
      id.index = i;
      id.uuid = "GPU-" + std::to_string(i);
      ids->push_back(id);
    }
    snap.identities = ids;
    snap.devices.resize(2);
    for (size_t i = 0; i < 2; ++i) snap.devices[i].identity = &(*ids)[i];
    auto pods = std::make_shared<model::DeviceAttribution>();
    pods->pods_by_device["GPU-0"] = {{"ns", "trainer", "main", ""}};
    snap.attribution.devices = pods;
  }
  const NodeCondition& Condition(const NodeFaultTracker::Outcome& o, const std::string& type) {
    for (const NodeCondition& c : o.conditions) {
      if (c.type == type) return c;
    }
    static NodeCondition none;
    ADD_FAILURE() << "no condition " << type;
    return none;
  }
};

TEST(NodeFaultTrackerTest, CriticalXidRaisesTheConditionAndAnEventThenClearsAfterTheHold) {
  Fixture f;
  NodeFaultTracker tracker(minutes(10));
  NodeFaultTracker::Outcome quiet = tracker.Observe(f.snap, kT0);
  ASSERT_EQ(quiet.conditions.size(), 3u);
  EXPECT_EQ(f.Condition(quiet, "GpuXidCritical").status, "False");
  EXPECT_EQ(f.Condition(quiet, "GpuLost").status, "False");
  EXPECT_EQ(f.Condition(quiet, "GpuLost").message, "all 2 GPU(s) answer");
  EXPECT_TRUE(quiet.events.empty());

  f.snap.devices[0].fault_xids = {{95, 2}};
  NodeFaultTracker::Outcome hit = tracker.Observe(f.snap, kT0 + seconds(1));
  const NodeCondition& c = f.Condition(hit, "GpuXidCritical");
  EXPECT_EQ(c.status, "True");
  EXPECT_TRUE(c.Problem());
  EXPECT_EQ(c.reason, "XidUncontainedEccError");
  EXPECT_THAT(c.message, HasSubstr("GPU 0 (GPU-0): Xid 95 (Uncontained ECC error)"));
  EXPECT_THAT(c.message, HasSubstr("RESET_GPU"));
  EXPECT_THAT(c.message, HasSubstr("pods on it: ns/trainer"));
  ASSERT_EQ(hit.events.size(), 1u);
  EXPECT_EQ(hit.events[0].key, "GPU-0/95");
  EXPECT_EQ(hit.events[0].reason, "XidUncontainedEccError");
  EXPECT_EQ(hit.events[0].count, 2);
  EXPECT_THAT(hit.events[0].message, HasSubstr("2 time(s)"));

  // The same totals: no new Event; the condition is held.
  NodeFaultTracker::Outcome held = tracker.Observe(f.snap, kT0 + minutes(9));
  EXPECT_TRUE(held.events.empty());
  EXPECT_EQ(f.Condition(held, "GpuXidCritical").status, "True");
  // One more occurrence restarts the hold.
  f.snap.devices[0].fault_xids = {{95, 3}};
  NodeFaultTracker::Outcome again = tracker.Observe(f.snap, kT0 + minutes(9) + seconds(30));
  ASSERT_EQ(again.events.size(), 1u);
  EXPECT_EQ(again.events[0].count, 1);
  EXPECT_EQ(f.Condition(tracker.Observe(f.snap, kT0 + minutes(19)), "GpuXidCritical").status,
            "True");
  const NodeCondition cleared =
      f.Condition(tracker.Observe(f.snap, kT0 + minutes(20)), "GpuXidCritical");
  EXPECT_EQ(cleared.status, "False");
  EXPECT_EQ(cleared.reason, "NoCriticalXid");
}

TEST(NodeFaultTrackerTest, NonCriticalXidIsAnEventOnlyAndApplicationXidsAreNothing) {
  Fixture f;
  NodeFaultTracker tracker(minutes(10));
  f.snap.devices[1].fault_xids = {{13, 5}, {94, 1}};
  NodeFaultTracker::Outcome o = tracker.Observe(f.snap, kT0);
  EXPECT_EQ(f.Condition(o, "GpuXidCritical").status, "False");
  ASSERT_EQ(o.events.size(), 1u) << "Xid 13 is an application fault: metrics only";
  EXPECT_EQ(o.events[0].reason, "XidContainedEccError");
  EXPECT_THAT(o.events[0].message, HasSubstr("no pod holds it"));
}

TEST(NodeFaultTrackerTest, LostGpuRaisesGpuLostWithOneEvent) {
  Fixture f;
  NodeFaultTracker tracker(minutes(10));
  f.snap.devices[1].lost = true;
  f.snap.devices[1].up = false;
  NodeFaultTracker::Outcome o = tracker.Observe(f.snap, kT0);
  const NodeCondition& lost = f.Condition(o, "GpuLost");
  EXPECT_EQ(lost.status, "True");
  EXPECT_EQ(lost.reason, "GpuFellOffTheBus");
  EXPECT_THAT(lost.message, HasSubstr("GPU 1 (GPU-1) lost"));
  EXPECT_THAT(lost.message, HasSubstr("RESTART_BM"));
  ASSERT_EQ(o.events.size(), 1u);
  EXPECT_EQ(o.events[0].key, "GPU-1/lost");
  EXPECT_TRUE(tracker.Observe(f.snap, kT0 + seconds(1)).events.empty()) << "one Event per loss";
}

TEST(NodeFaultTrackerTest, HealthFailureIsHeldThenPassesAndUnknownWithoutTheField) {
  Fixture f;
  NodeFaultTracker tracker(minutes(10));
  EXPECT_EQ(f.Condition(tracker.Observe(f.snap, kT0), "GpuHealthy").status, "Unknown");
  f.snap.devices[0].health = {{"PCIE", "DCGM_FR_PCI_REPLAY_RATE", 20},
                              {"MEM", "DCGM_FR_OK", 0},
                              {"ALL", "DCGM_FR_PCI_REPLAY_RATE", 20}};
  f.snap.devices[1].health = {{"PCIE", "DCGM_FR_OK", 0}, {"ALL", "DCGM_FR_OK", 0}};
  const NodeCondition bad = f.Condition(tracker.Observe(f.snap, kT0 + seconds(1)), "GpuHealthy");
  EXPECT_EQ(bad.status, "False");
  EXPECT_TRUE(bad.Problem());
  EXPECT_EQ(bad.reason, "GpuHealthCheckFailed");
  EXPECT_THAT(bad.message, HasSubstr("GPU 0 (GPU-0) fails PCIE DCGM_FR_PCI_REPLAY_RATE"));
  f.snap.devices[0].health = f.snap.devices[1].health;
  EXPECT_EQ(f.Condition(tracker.Observe(f.snap, kT0 + minutes(5)), "GpuHealthy").status, "False");
  const NodeCondition good = f.Condition(tracker.Observe(f.snap, kT0 + minutes(11)), "GpuHealthy");
  EXPECT_EQ(good.status, "True");
  EXPECT_EQ(good.reason, "GpuHealthChecksPass");
}

// A restart: the condition found True on the Node is held from its last heartbeat, with its
// reason and message, then clears; one found False needs nothing.
TEST(NodeFaultTrackerTest, AdoptedProblemIsHeldFromItsLastHeartbeat) {
  Fixture f;
  NodeFaultTracker tracker(minutes(10));
  tracker.Adopt({{"GpuXidCritical", "True", "XidGspError", "GPU 0 (GPU-0): Xid 120", kT0},
                 {"GpuLost", "False", "AllGpusPresent", "all 2 GPU(s) answer", kT0}});
  const NodeCondition held =
      f.Condition(tracker.Observe(f.snap, kT0 + minutes(3)), "GpuXidCritical");
  EXPECT_EQ(held.status, "True");
  EXPECT_EQ(held.reason, "XidGspError");
  EXPECT_THAT(held.message, HasSubstr("GPU 0 (GPU-0): Xid 120"));
  EXPECT_EQ(f.Condition(tracker.Observe(f.snap, kT0 + minutes(10)), "GpuXidCritical").status,
            "False");
}

// A restart with a GPU still lost: the Node already says so (adopted), so no second Event for it;
// a GPU lost since gets its own.
TEST(NodeFaultTrackerTest, GpuFoundLostOnTheNodeAtTheStartGetsNoSecondEvent) {
  Fixture f;
  f.snap.devices[1].lost = true;
  f.snap.devices[1].up = false;
  NodeFaultTracker before(minutes(10));
  const NodeCondition was = f.Condition(before.Observe(f.snap, kT0), "GpuLost");
  NodeFaultTracker after(minutes(10));
  after.Adopt({{was.type, was.status, was.reason, was.message, kT0}});
  NodeFaultTracker::Outcome o = after.Observe(f.snap, kT0 + minutes(1));
  EXPECT_EQ(f.Condition(o, "GpuLost").status, "True");
  EXPECT_TRUE(o.events.empty()) << o.events[0].message;
  f.snap.devices[0].lost = true;
  f.snap.devices[0].up = false;
  o = after.Observe(f.snap, kT0 + minutes(2));
  ASSERT_EQ(o.events.size(), 1u);
  EXPECT_EQ(o.events[0].key, "GPU-0/lost");
}

}  // namespace
}  // namespace nvmlx::attribute
