// Container Insights' GPU allocation (gpu_allocation.h) over hand-made pods: which pods count
// (phase, every container limited), request vs limit, usage only while Running, MIG profiles
// and init containers left out, static-pod aliases counted once, and the node's percentages.
#include "model/gpu_allocation.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace nvmlx::model {
namespace {

// A pod with `containers` containers of which `limited` limit nvidia.com/gpu (summing to
// `limit`) and `requested` request it (summing to `request`).
PodMeta Pod(const std::string& uid, const std::string& phase, int containers, int limited,
            int64_t limit, int requested, int64_t request) {
  PodMeta p;
  p.uid = uid;
  p.pod = "pod-" + uid;
  p.namespace_name = "ml";
  p.phase = phase;
  p.containers = containers;
  if (limited > 0 || requested > 0) {
    p.gpu_resources["nvidia.com/gpu"] = {request, limit, requested, limited};
  }
  return p;
}

PodMetadata Of(std::initializer_list<PodMeta> pods) {
  PodMetadata md;
  for (const PodMeta& p : pods) {
    md.by_uid[p.uid] = p;
    md.uid_by_name[p.namespace_name + "/" + p.pod] = p.uid;
  }
  return md;
}

TEST(GpuResourceNameTest, WholeGpusAndMigProfiles) {
  EXPECT_TRUE(IsGpuResourceName("nvidia.com/gpu"));
  EXPECT_TRUE(IsGpuResourceName("nvidia.com/mig-1g.10gb"));
  EXPECT_FALSE(IsGpuResourceName("nvidia.com/gpu.shared"));
  EXPECT_FALSE(IsGpuResourceName("amd.com/gpu"));
  EXPECT_FALSE(IsGpuResourceName("nvidia.com/mig"));
  EXPECT_FALSE(IsGpuResourceName("cpu"));
}

TEST(PodGpuAllocationTest, RunningPodUsesItsLimit) {
  auto a = PodGpuAllocationOf(Pod("a", "Running", 1, 1, 2, 1, 2), 8);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->request, 2);
  EXPECT_EQ(a->limit, 2);
  EXPECT_EQ(a->usage_total, 2);
  ASSERT_TRUE(a->reserved_capacity.has_value());
  EXPECT_DOUBLE_EQ(*a->reserved_capacity, 25.0);  // the limit over the capacity, in percent
}

TEST(PodGpuAllocationTest, PendingPodReservesButDoesNotUse) {
  auto a = PodGpuAllocationOf(Pod("a", "Pending", 2, 2, 3, 2, 3), 4);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->limit, 3);
  EXPECT_EQ(a->usage_total, 0);
  EXPECT_DOUBLE_EQ(*a->reserved_capacity, 75.0);
}

TEST(PodGpuAllocationTest, FinishedPodsAreLeftOut) {
  EXPECT_FALSE(PodGpuAllocationOf(Pod("a", "Succeeded", 1, 1, 1, 1, 1), 8).has_value());
  EXPECT_FALSE(PodGpuAllocationOf(Pod("a", "Failed", 1, 1, 1, 1, 1), 8).has_value());
  // Unknown and an absent phase are not finished: counted, not in use.
  auto unknown = PodGpuAllocationOf(Pod("a", "Unknown", 1, 1, 1, 1, 1), 8);
  ASSERT_TRUE(unknown.has_value());
  EXPECT_EQ(unknown->usage_total, 0);
  EXPECT_TRUE(PodGpuAllocationOf(Pod("a", "", 1, 1, 1, 1, 1), 8).has_value());
}

TEST(PodGpuAllocationTest, EveryContainerMustSetALimit) {
  // A GPU container beside a sidecar without a GPU limit: the agent does not count the pod.
  EXPECT_FALSE(PodGpuAllocationOf(Pod("a", "Running", 2, 1, 1, 1, 1), 8).has_value());
  // No GPU at all in a pod with containers: not counted either.
  EXPECT_FALSE(PodGpuAllocationOf(Pod("a", "Running", 1, 0, 0, 0, 0), 8).has_value());
  // A pod with no containers has all (zero) of them limited: counted with zeros.
  auto empty = PodGpuAllocationOf(Pod("a", "Running", 0, 0, 0, 0, 0), 8);
  ASSERT_TRUE(empty.has_value());
  EXPECT_EQ(empty->limit, 0);
  // A zero limit on every container counts as set.
  auto zero = PodGpuAllocationOf(Pod("a", "Running", 2, 2, 0, 0, 0), 8);
  ASSERT_TRUE(zero.has_value());
  EXPECT_EQ(zero->limit, 0);
}

TEST(PodGpuAllocationTest, RequestIsTheSumOfTheRequestsSet) {
  // Every container limited, only one requests (an API server that did not default requests
  // from limits): the request is what is set, not the limit.
  auto a = PodGpuAllocationOf(Pod("a", "Running", 2, 2, 4, 1, 1), 8);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->request, 1);
  EXPECT_EQ(a->limit, 4);
}

TEST(PodGpuAllocationTest, MigProfilesAreNotGpus) {
  PodMeta p = Pod("a", "Running", 1, 0, 0, 0, 0);
  p.gpu_resources["nvidia.com/mig-1g.10gb"] = {2, 2, 1, 1};
  EXPECT_FALSE(PodGpuAllocationOf(p, 8).has_value());  // its container sets no nvidia.com/gpu
}

TEST(PodGpuAllocationTest, UnknownOrZeroCapacityHasNoReservedCapacity) {
  auto a = PodGpuAllocationOf(Pod("a", "Running", 1, 1, 1, 1, 1), std::nullopt);
  ASSERT_TRUE(a.has_value());
  EXPECT_FALSE(a->reserved_capacity.has_value());
  auto z = PodGpuAllocationOf(Pod("a", "Running", 1, 1, 1, 1, 1), 0);
  ASSERT_TRUE(z.has_value());
  EXPECT_FALSE(z->reserved_capacity.has_value());
}

TEST(NodeGpuAllocationTest, SumsTheCountedPods) {
  const PodMetadata md = Of({
      Pod("run", "Running", 1, 1, 2, 1, 2),     // counted, in use
      Pod("pend", "Pending", 1, 1, 1, 1, 1),    // counted, not in use
      Pod("done", "Succeeded", 1, 1, 4, 1, 4),  // left out
      Pod("side", "Running", 2, 1, 1, 1, 1),    // sidecar without a limit: left out
      Pod("cpu", "Running", 3, 0, 0, 0, 0),     // no GPU
  });
  auto n = NodeGpuAllocationOf(md, 8);
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(n->limit, 8);
  EXPECT_EQ(n->request, 3);
  EXPECT_EQ(n->usage_total, 2);
  EXPECT_DOUBLE_EQ(n->reserved_capacity, 37.5);
  EXPECT_DOUBLE_EQ(n->unreserved_capacity, 62.5);
  EXPECT_EQ(n->available_capacity, 6);  // the Pending pod's GPU is reserved, not held
}

TEST(NodeGpuAllocationTest, OverbookedNodeHasNothingAvailable) {
  // A capacity that shrank under running pods (a device plugin that lost GPUs).
  auto n = NodeGpuAllocationOf(Of({Pod("a", "Running", 1, 1, 3, 1, 3)}), 2);
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(n->available_capacity, 0);
  EXPECT_DOUBLE_EQ(n->reserved_capacity, 150.0);
  EXPECT_DOUBLE_EQ(n->unreserved_capacity, -50.0);  // not clamped: the reserved side is not
}

TEST(NodeGpuAllocationTest, StaticPodAliasCountsOnce) {
  PodMetadata md = Of({Pod("mirror", "Running", 1, 1, 1, 1, 1)});
  md.by_uid["manifest-hash"] = md.by_uid["mirror"];  // as BuildPodMetadata adds it
  auto n = NodeGpuAllocationOf(md, 4);
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(n->request, 1);
  EXPECT_EQ(n->usage_total, 1);
}

TEST(NodeGpuAllocationTest, NoCapacityNoNodeFields) {
  const PodMetadata md = Of({Pod("a", "Running", 1, 1, 1, 1, 1)});
  EXPECT_FALSE(NodeGpuAllocationOf(md, std::nullopt).has_value());
  EXPECT_FALSE(NodeGpuAllocationOf(md, 0).has_value());
}

TEST(NodeGpuCapacityTest, FromNodeInfo) {
  EXPECT_FALSE(NodeGpuCapacity(nullptr).has_value());
  NodeInfo node;
  node.gpu_capacity["nvidia.com/mig-1g.10gb"] = 7;
  EXPECT_FALSE(NodeGpuCapacity(&node).has_value());
  node.gpu_capacity["nvidia.com/gpu"] = 8;
  EXPECT_EQ(NodeGpuCapacity(&node), 8);
}

TEST(NodeGpuCapacityTest, TheNodeFirstThenTheKubeletsAllocatableDevices) {
  Attribution a;
  EXPECT_FALSE(NodeGpuCapacity(a).has_value());
  auto allocatable = std::make_shared<AllocatableDevices>();
  allocatable->device_ids_by_resource["nvidia.com/mig-1g.10gb"] = {"m0", "m1"};
  a.allocatable = allocatable;
  EXPECT_FALSE(NodeGpuCapacity(a).has_value()) << "MIG slices are not GPUs";
  allocatable->device_ids_by_resource["nvidia.com/gpu"] = {"GPU-a::0", "GPU-a::1", "GPU-b::0"};
  EXPECT_EQ(NodeGpuCapacity(a), 3);
  auto node = std::make_shared<NodeInfo>();
  node->gpu_capacity["nvidia.com/gpu"] = 4;
  a.node = node;
  EXPECT_EQ(NodeGpuCapacity(a), 4) << "the Node's capacity, as the agent reads it";
}

}  // namespace
}  // namespace nvmlx::model
