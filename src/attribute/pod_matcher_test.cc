#include "attribute/pod_matcher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "attribute/pod_resources_proto.h"

namespace nvmlx::attribute {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr char kGpu0[] = "GPU-00000000-0000-0000-0000-000000000000";
constexpr char kGpu1[] = "GPU-00000000-0000-0000-0000-000000000001";
constexpr char kMigA[] = "MIG-11111111-1111-1111-1111-111111111111";
constexpr char kMigB[] = "MIG-22222222-2222-2222-2222-222222222222";

model::DeviceIdentity Gpu(unsigned index, std::string uuid) {
  model::DeviceIdentity id;
  id.index = index;
  id.uuid = std::move(uuid);
  return id;
}

model::DeviceIdentity Mig(unsigned index, std::string parent, unsigned gi, std::string uuid) {
  model::DeviceIdentity id = Gpu(index, std::move(parent));
  id.mig = model::DeviceIdentity::Mig{gi, 0, "1g.18gb", std::move(uuid)};
  return id;
}

// Two whole GPUs, and GPU 1 also partitioned into MIG instances with GI ids 1 and 2.
std::vector<model::DeviceIdentity> Identities() {
  return {Gpu(0, kGpu0), Gpu(1, kGpu1), Mig(1, kGpu1, 1, kMigA), Mig(1, kGpu1, 2, kMigB)};
}

struct Holder {
  std::string ns, pod, container, resource;
  std::vector<std::string> ids;
};

// The kubelet's answer built as the protobuf message it sends, converted as the plugin does.
v1::ListPodResourcesResponse AnswerProto(const std::vector<Holder>& holders) {
  v1::ListPodResourcesResponse r;
  for (const Holder& h : holders) {
    v1::PodResources* pod = r.add_pod_resources();
    pod->set_namespace_(h.ns);
    pod->set_name(h.pod);
    v1::ContainerResources* c = pod->add_containers();
    c->set_name(h.container);
    v1::ContainerDevices* d = c->add_devices();
    d->set_resource_name(h.resource);
    for (const std::string& id : h.ids) d->add_device_ids(id);
  }
  return r;
}

KubeletPodList Answer(const std::vector<Holder>& holders) {
  return FromProto(AnswerProto(holders));
}

// "ns/pod/container[/vgpu]" for each holder of `key`, in published order.
std::vector<std::string> Holders(const model::DeviceAttribution& a, const std::string& key) {
  std::vector<std::string> out;
  auto it = a.pods_by_device.find(key);
  if (it == a.pods_by_device.end()) return out;
  for (const model::PodRef& p : it->second) {
    out.push_back(p.namespace_name + "/" + p.pod + "/" + p.container +
                  (p.vgpu.empty() ? "" : "/" + p.vgpu));
  }
  return out;
}

TEST(PodMatcherTest, ExclusiveGpusByUuid) {
  PodMatcher m(Identities(), {});
  MatchStats stats;
  auto a = m.Match(Answer({{"ns", "a", "c1", "nvidia.com/gpu", {kGpu0}},
                           {"ns", "b", "c2", "nvidia.com/gpu", {kGpu1}}}),
                   &stats);
  EXPECT_THAT(Holders(*a, kGpu0), ElementsAre("ns/a/c1"));
  EXPECT_THAT(Holders(*a, kGpu1), ElementsAre("ns/b/c2"));
  EXPECT_EQ(stats.gpu_devices, 2u);
  EXPECT_EQ(stats.unmatched, 0u);
}

TEST(PodMatcherTest, OtherResourcesAreIgnoredUnlessNamed) {
  auto answer = Answer({{"ns", "a", "c", "example.com/gpu", {kGpu0}},
                        {"ns", "b", "c", "nvidia.com/gpu.shared", {kGpu1}}});
  PodMatcher plain(Identities(), {});
  EXPECT_THAT(plain.Match(answer)->pods_by_device, IsEmpty());
  MatchOptions extra;
  extra.extra_resource_names = {"nvidia.com/gpu.shared"};
  auto a = PodMatcher(Identities(), extra).Match(answer);
  EXPECT_THAT(Holders(*a, kGpu1), ElementsAre("ns/b/c"));
  EXPECT_THAT(Holders(*a, kGpu0), IsEmpty());
}

TEST(PodMatcherTest, UnknownIdsAreCountedNotAttributed) {
  MatchStats stats;
  auto a = PodMatcher(Identities(), {})
               .Match(Answer({{"ns", "a", "c", "nvidia.com/gpu", {"GPU-elsewhere", "nvidia0"}}}),
                      &stats);
  EXPECT_THAT(a->pods_by_device, IsEmpty());
  EXPECT_EQ(stats.unmatched, 2u);  // nvidia0 names a GPU only with --kubernetes-gpu-id-type
}

TEST(PodMatcherTest, DeviceNameIds) {
  MatchOptions o;
  o.id_type = GpuIdType::kDeviceName;
  auto a = PodMatcher(Identities(), o)
               .Match(Answer({{"ns", "a", "c", "nvidia.com/gpu", {"nvidia1"}},
                              {"ns", "b", "c", "nvidia.com/gpu", {kGpu0}}}));
  EXPECT_THAT(Holders(*a, kGpu1), ElementsAre("ns/a/c"));
  // With device-name ids a UUID names nothing, as in dcgm-exporter.
  EXPECT_THAT(Holders(*a, kGpu0), IsEmpty());
}

TEST(PodMatcherTest, MigUuidsAndResources) {
  auto a = PodMatcher(Identities(), {})
               .Match(Answer({{"ns", "a", "c", "nvidia.com/mig-1g.18gb", {kMigA}},
                              {"ns", "b", "c", "nvidia.com/gpu", {std::string(kMigB) + "::2"}}}));
  EXPECT_THAT(Holders(*a, kMigA), ElementsAre("ns/a/c"));
  EXPECT_THAT(Holders(*a, kMigB), ElementsAre("ns/b/c"));
  EXPECT_THAT(Holders(*a, kGpu1), IsEmpty());  // the parent is not the instance
}

TEST(PodMatcherTest, OldDriverMigIdsResolveThroughParentAndGi) {
  auto a = PodMatcher(Identities(), {})
               .Match(Answer({{"ns",
                               "a",
                               "c",
                               "nvidia.com/mig-1g.18gb",
                               {std::string("MIG-") + kGpu1 + "/2/0"}}}));
  EXPECT_THAT(Holders(*a, kMigB), ElementsAre("ns/a/c"));
}

TEST(PodMatcherTest, GkeMigIdsWorkWithEitherIdType) {
  for (GpuIdType type : {GpuIdType::kUid, GpuIdType::kDeviceName}) {
    MatchOptions o;
    o.id_type = type;
    o.virtual_gpus = true;
    auto a = PodMatcher(Identities(), o)
                 .Match(Answer({{"ns", "a", "c", "nvidia.com/gpu", {"nvidia1/gi1"}},
                                {"ns", "b", "c", "nvidia.com/gpu", {"nvidia1/gi2/vgpu3"}}}));
    EXPECT_THAT(Holders(*a, kMigA), ElementsAre("ns/a/c"));
    EXPECT_THAT(Holders(*a, kMigB), ElementsAre("ns/b/c/3"));
  }
}

TEST(PodMatcherTest, GkeTimeSharingIds) {
  MatchOptions o;
  o.id_type = GpuIdType::kDeviceName;
  o.virtual_gpus = true;
  auto a = PodMatcher(Identities(), o)
               .Match(Answer({{"ns", "a", "c", "nvidia.com/gpu", {"nvidia0/vgpu0"}},
                              {"ns", "b", "c", "nvidia.com/gpu", {"nvidia0/vgpu1"}}}));
  EXPECT_THAT(Holders(*a, kGpu0), ElementsAre("ns/a/c/0", "ns/b/c/1"));
}

TEST(PodMatcherTest, TimeSlicedGpusWithVirtualGpusGiveOneHolderPerReplica) {
  MatchOptions o;
  o.virtual_gpus = true;
  // Listed in an order that is not the sorted one.
  auto a = PodMatcher(Identities(), o)
               .Match(Answer({{"team", "z", "c", "nvidia.com/gpu", {std::string(kGpu0) + "::1"}},
                              {"team", "a", "c", "nvidia.com/gpu", {std::string(kGpu0) + "::0"}},
                              {"team", "z", "c", "nvidia.com/gpu", {std::string(kGpu0) + "::1"}},
                              {"team", "e", "c", "nvidia.com/gpu", {kGpu1}}}));
  EXPECT_THAT(Holders(*a, kGpu0), ElementsAre("team/a/c/0", "team/z/c/1"));  // sorted, deduped
  EXPECT_THAT(Holders(*a, kGpu1), ElementsAre("team/e/c"));  // exclusive: no replica
}

TEST(PodMatcherTest, WithoutVirtualGpusASharedGpuGetsOneStableHolder) {
  // dcgm-exporter keeps the last one listed; we keep the least, whatever the listing order.
  std::vector<Holder> holders = {
      {"team", "z", "c", "nvidia.com/gpu", {std::string(kGpu0) + "::1"}},
      {"team", "b", "c", "nvidia.com/gpu", {std::string(kGpu0) + "::0"}},
      {"alpha", "y", "c", "nvidia.com/gpu", {std::string(kGpu0) + "::2"}}};
  PodMatcher m(Identities(), {});
  for (int rotation = 0; rotation < 3; ++rotation) {
    std::rotate(holders.begin(), holders.begin() + 1, holders.end());
    auto a = m.Match(Answer(holders));
    EXPECT_THAT(Holders(*a, kGpu0), ElementsAre("alpha/y/c")) << rotation;
  }
}

TEST(PodMatcherTest, SharedReplica) {
  EXPECT_EQ(PodMatcher::SharedReplica("GPU-x::3"), "3");
  EXPECT_EQ(PodMatcher::SharedReplica("nvidia0/vgpu3"), "3");
  EXPECT_EQ(PodMatcher::SharedReplica("nvidia0/gi1/vgpu7"), "7");
  EXPECT_EQ(PodMatcher::SharedReplica("GPU-x"), "");
  EXPECT_EQ(PodMatcher::SharedReplica("MIG-x"), "");
}

// DRA: a container's claim resource of gpu.nvidia.com, named by pool and device.
void AddClaim(v1::ListPodResourcesResponse* r, const std::string& ns, const std::string& pod,
              const std::string& container, const std::string& claim, const std::string& driver,
              const std::string& pool, const std::string& device) {
  v1::PodResources* p = nullptr;
  for (v1::PodResources& existing : *r->mutable_pod_resources()) {
    if (existing.namespace_() == ns && existing.name() == pod) p = &existing;
  }
  if (p == nullptr) {
    p = r->add_pod_resources();
    p->set_namespace_(ns);
    p->set_name(pod);
  }
  v1::ContainerResources* c = nullptr;
  for (v1::ContainerResources& existing : *p->mutable_containers()) {
    if (existing.name() == container) c = &existing;
  }
  if (c == nullptr) {
    c = p->add_containers();
    c->set_name(container);
  }
  v1::DynamicResource* dr = c->add_dynamic_resources();
  dr->set_claim_name(claim);
  dr->set_claim_namespace(ns);
  v1::ClaimResource* res = dr->add_claim_resources();
  res->set_driver_name(driver);
  res->set_pool_name(pool);
  res->set_device_name(device);
  res->add_cdi_devices()->set_name("k8s.gpu.nvidia.com/device=" + device);
}

DraSlices Slices() {
  DraSlices s;
  s.by_pool_device["node1/gpu-0"] = {false, kGpu0, "", ""};
  s.by_pool_device["node1/gpu-1-mig-a"] = {true, kMigA, kGpu1, "1g.18gb"};
  s.by_pool_device["node1/gpu-9"] = {false, "GPU-not-collected", "", ""};
  return s;
}

TEST(PodMatcherTest, DraClaimsResolveThroughResourceSlices) {
  PodMatcher m(Identities(), {});
  v1::ListPodResourcesResponse r;
  AddClaim(&r, "ns", "train", "main", "gpu-claim", "gpu.nvidia.com", "node1", "gpu-0");
  AddClaim(&r, "ns2", "infer", "c", "mig-claim", "gpu.nvidia.com", "node1", "gpu-1-mig-a");
  // The same container's second claim on the same device: kept once (the first).
  AddClaim(&r, "ns", "train", "main", "again", "gpu.nvidia.com", "node1", "gpu-0");
  AddClaim(&r, "ns", "nic", "c", "net", "example.com/nic", "node1", "gpu-0");  // other driver
  AddClaim(&r, "ns", "lost", "c", "x", "gpu.nvidia.com", "node1", "gpu-unknown");
  AddClaim(&r, "ns", "far", "c", "y", "gpu.nvidia.com", "node1", "gpu-9");
  const DraSlices slices = Slices();
  MatchStats stats;
  auto a = m.Match(FromProto(r), &stats, &slices);
  ASSERT_THAT(Holders(*a, kGpu0), ElementsAre("ns/train/main"));
  const model::PodRef& whole = a->pods_by_device.at(kGpu0)[0];
  ASSERT_TRUE(whole.dra.has_value());
  EXPECT_EQ(whole.dra->claim_name, "gpu-claim");
  EXPECT_EQ(whole.dra->claim_namespace, "ns");
  EXPECT_EQ(whole.dra->driver, "gpu.nvidia.com");
  EXPECT_EQ(whole.dra->pool, "node1");
  EXPECT_EQ(whole.dra->device, "gpu-0");
  EXPECT_EQ(whole.dra->mig_profile, "");
  EXPECT_EQ(whole.dra->mig_device_uuid, "");
  // A MIG claim attributes the instance, not its parent GPU.
  EXPECT_THAT(Holders(*a, kGpu1), IsEmpty());
  ASSERT_THAT(Holders(*a, kMigA), ElementsAre("ns2/infer/c"));
  const model::PodRef& part = a->pods_by_device.at(kMigA)[0];
  ASSERT_TRUE(part.dra.has_value());
  EXPECT_EQ(part.dra->mig_profile, "1g.18gb");
  EXPECT_EQ(part.dra->mig_device_uuid, kMigA);
  EXPECT_EQ(stats.dra_claims, 5u);
  EXPECT_EQ(stats.dra_unresolved, 2u);  // gpu-unknown, and gpu-9 that we do not collect
  EXPECT_THAT(stats.dra_unknown, ElementsAre("node1/gpu-unknown"));

  // Without slices (DRA off) the claims are ignored.
  auto off = m.Match(FromProto(r), &stats);
  EXPECT_TRUE(off->pods_by_device.empty());
  EXPECT_EQ(stats.dra_claims, 0u);
}

TEST(PodMatcherTest, DraHoldersReplaceDevicePluginHoldersAndAreOrdered) {
  PodMatcher m(Identities(), {});
  v1::ListPodResourcesResponse r = AnswerProto({{"ns", "plugin", "c", "nvidia.com/gpu", {kGpu0}},
                                                {"ns", "other", "c", "nvidia.com/gpu", {kGpu1}}});
  AddClaim(&r, "zz", "b", "c", "shared", "gpu.nvidia.com", "node1", "gpu-0");
  AddClaim(&r, "aa", "a", "c", "shared", "gpu.nvidia.com", "node1", "gpu-0");
  const DraSlices slices = Slices();
  auto a = m.Match(FromProto(r), nullptr, &slices);
  EXPECT_THAT(Holders(*a, kGpu0), ElementsAre("aa/a/c", "zz/b/c"));
  EXPECT_THAT(Holders(*a, kGpu1), ElementsAre("ns/other/c"));
  EXPECT_FALSE(a->pods_by_device.at(kGpu1)[0].dra.has_value());
}

}  // namespace
}  // namespace nvmlx::attribute
