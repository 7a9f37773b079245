// The API server's pod JSON (pod_json.h): list and watch parsing against fixtures, label
// sanitising as dcgm-exporter does it, the allowlist, and malformed input.
#include "attribute/pod_json.h"

#include <gtest/gtest.h>

#include <string>

#include "attribute/pod_watcher.h"
#include "model/gpu_allocation.h"
#include "test/fixtures/fake_apiserver.h"

namespace nvmlx::attribute {
namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

TEST(SanitizeLabelNameTest, AsDcgmExporter) {
  EXPECT_EQ(SanitizeLabelName("app.kubernetes.io/name"), "app_kubernetes_io_name");
  EXPECT_EQ(SanitizeLabelName("pod-template-hash"), "pod_template_hash");
  EXPECT_EQ(SanitizeLabelName("team"), "team");
  EXPECT_EQ(SanitizeLabelName("Already_OK_9"), "Already_OK_9");
  EXPECT_EQ(SanitizeLabelName("a b\xc3\xa9"), "a_b__");  // each byte outside [a-zA-Z0-9_]
  // Our one addition: a name may not start with a digit in Prometheus.
  EXPECT_EQ(SanitizeLabelName("3scale.net/tier"), "_3scale_net_tier");
}

TEST(LabelFilterTest, DisabledAdmitsNothing) {
  auto f = LabelFilter::Create(false, {".*"});
  EXPECT_FALSE(f->Admits("team"));
}

TEST(LabelFilterTest, NoPatternsAdmitsEverything) {
  auto f = LabelFilter::Create(true, {});
  EXPECT_TRUE(f->Admits("anything/at.all"));
}

TEST(LabelFilterTest, PatternsAreUnanchoredAndMatchTheOriginalKey) {
  auto f = LabelFilter::Create(true, {"^app\\.kubernetes\\.io/", "team"});
  EXPECT_TRUE(f->Admits("app.kubernetes.io/name"));
  EXPECT_FALSE(f->Admits("app_kubernetes_io_name"));  // the sanitised form is not matched
  EXPECT_TRUE(f->Admits("my-team-id"));               // unanchored, as Go's MatchString
  EXPECT_FALSE(f->Admits("pod-template-hash"));
}

TEST(LabelFilterTest, BadPatternsAreSkipped) {
  auto f = LabelFilter::Create(true, {"(unclosed", "team"});
  EXPECT_TRUE(f->Admits("team"));
  EXPECT_FALSE(f->Admits("app"));
  // Only bad patterns: as dcgm-exporter, filtering is off and every label passes.
  auto all = LabelFilter::Create(true, {"(unclosed"});
  EXPECT_TRUE(all->Admits("app"));
}

TEST(PodListTest, ParsesTheFixture) {
  auto filter = LabelFilter::Create(true, {"^app", "team"});
  auto list = ParsePodList(fixtures::ApiServerTestdata("pods_node1.json"), *filter);
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_EQ(list->resource_version, "1200");
  EXPECT_EQ(list->continue_token, "");
  ASSERT_EQ(list->pods.size(), 3u);
  const model::PodMeta& a = list->pods[0].meta;
  EXPECT_EQ(a.pod, "trainer-a");
  EXPECT_EQ(a.namespace_name, "ml");
  EXPECT_EQ(a.uid, "8f1c2d3e-4a5b-6c7d-8e9f-0a1b2c3d4e5f");
  EXPECT_EQ(a.labels, (Labels{{"app_kubernetes_io_name", "trainer"}, {"team", "vision"}}));
  ASSERT_EQ(a.container_names.size(), 2u);
  EXPECT_EQ(
      a.container_names.at("3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a"),
      "main");
  EXPECT_EQ(
      a.container_names.at("aa4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7081900"),
      "sidecar");
  const model::PodMeta& b = list->pods[1].meta;
  EXPECT_EQ(b.labels, (Labels{{"app", "jupyter"}}));
  EXPECT_EQ(b.container_names.begin()->second, "notebook");  // cri-o:// stripped
  const PodRecord& c = list->pods[2];
  EXPECT_EQ(c.mirror_uid, "0123456789abcdef0123456789abcdef");
  EXPECT_EQ(c.meta.container_names.size(), 1u);  // the waiting container has no id yet
  EXPECT_TRUE(c.meta.labels.empty());
}

TEST(PodListTest, LabelsOffByDefault) {
  auto filter = LabelFilter::Create(false, {});
  auto list = ParsePodList(fixtures::ApiServerTestdata("pods_node1.json"), *filter);
  ASSERT_TRUE(list.ok());
  EXPECT_TRUE(list->pods[0].meta.labels.empty());
}

TEST(PodListTest, CollidingSanitisedNamesKeepOne) {
  auto filter = LabelFilter::Create(true, {});
  auto list = ParsePodList(
      R"({"kind":"PodList","metadata":{"resourceVersion":"5"},"items":[{"metadata":{"name":"p",)"
      R"("uid":"u","labels":{"a.b":"1","a_b":"2"}}}]})",
      *filter);
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_EQ(list->pods[0].meta.labels, (Labels{{"a_b", "1"}}));
}

TEST(PodListTest, RejectsBadInputWithAClearError) {
  auto filter = LabelFilter::Create(false, {});
  struct Case {
    const char* body;
    const char* want;
  } cases[] = {
      {"{not json", "invalid JSON"},
      {"[]", "expected a JSON object"},
      {R"({"kind":"Status","code":401})", "expected kind PodList"},
      {R"({"kind":"PodList","metadata":{}})", "no metadata.resourceVersion"},
      {R"({"kind":"PodList","metadata":{"resourceVersion":"1"},"items":{}})", "not an array"},
      {R"({"kind":"PodList","metadata":{"resourceVersion":"1"},"items":[{"metadata":{"name":"x"}}]})",
       "items[0]: metadata without uid"},
      {R"({"kind":"PodList","metadata":{"resourceVersion":"1"},"items":[7]})",
       "items[0]: no metadata"},
  };
  for (const Case& c : cases) {
    auto r = ParsePodList(c.body, *filter);
    ASSERT_FALSE(r.ok()) << c.body;
    EXPECT_NE(r.status().message().find(c.want), std::string::npos)
        << c.body << " -> " << r.status().message();
  }
}

TEST(PodGpuResourcesTest, SumsSpecContainersPerResourceName) {
  auto filter = LabelFilter::Create(false, {});
  auto list = ParsePodList(fixtures::ApiServerTestdata("pods_gpu_node1.json"), *filter);
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->pods.size(), 6u);
  const model::PodMeta& trainer = list->pods[0].meta;
  EXPECT_EQ(trainer.phase, "Running");
  EXPECT_EQ(trainer.containers, 1);
  ASSERT_EQ(trainer.gpu_resources.size(), 1u);  // cpu and memory are not GPU resources
  const model::GpuResourceAmount& t = trainer.gpu_resources.at("nvidia.com/gpu");
  // The init container's 4 GPUs are not added (the agent sums spec.containers only).
  EXPECT_EQ(t.requests, 2);
  EXPECT_EQ(t.limits, 2);
  EXPECT_EQ(t.containers_with_limit, 1);

  const model::PodMeta& sidecar = list->pods[1].meta;
  EXPECT_EQ(sidecar.containers, 2);
  EXPECT_EQ(sidecar.gpu_resources.at("nvidia.com/gpu").containers_with_limit, 1);

  const model::PodMeta& queued = list->pods[2].meta;
  EXPECT_EQ(queued.phase, "Pending");
  const model::GpuResourceAmount& q = queued.gpu_resources.at("nvidia.com/gpu");
  EXPECT_EQ(q.limits, 2);
  EXPECT_EQ(q.requests, 1);  // container b sets only a limit in this (undefaulted) fixture
  EXPECT_EQ(q.containers_with_request, 1);
  EXPECT_EQ(q.containers_with_limit, 2);

  const model::PodMeta& mig = list->pods[4].meta;
  ASSERT_EQ(mig.gpu_resources.size(), 1u);
  EXPECT_EQ(mig.gpu_resources.at("nvidia.com/mig-1g.10gb").limits, 2);

  EXPECT_TRUE(list->pods[5].meta.gpu_resources.empty());
  EXPECT_EQ(list->pods[5].meta.containers, 1);
}

TEST(PodGpuResourcesTest, ThroughMetadataToContainerInsightsCounts) {
  auto filter = LabelFilter::Create(false, {});
  auto list = ParsePodList(fixtures::ApiServerTestdata("pods_gpu_node1.json"), *filter);
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  std::map<std::string, PodRecord> pods;
  for (auto& p : list->pods) pods[p.meta.uid] = p;
  auto md = BuildPodMetadata(pods);
  // Counted: trainer (Running, 2) and queued (Pending, request 1, limit 2). Not counted: the
  // sidecar pod (a container without a GPU limit), the finished pod, the MIG and CPU pods.
  auto node = model::NodeGpuAllocationOf(*md, 8);
  ASSERT_TRUE(node.has_value());
  EXPECT_EQ(node->request, 3);
  EXPECT_EQ(node->usage_total, 2);
  EXPECT_DOUBLE_EQ(node->reserved_capacity, 37.5);
  EXPECT_EQ(node->available_capacity, 6);
  auto queued = model::PodGpuAllocationOf(md->by_uid.at("aaaaaaaa-0000-0000-0000-000000000003"), 8);
  ASSERT_TRUE(queued.has_value());
  EXPECT_EQ(queued->limit, 2);
  EXPECT_EQ(queued->usage_total, 0);
  EXPECT_DOUBLE_EQ(*queued->reserved_capacity, 25.0);
}

TEST(PodGpuResourcesTest, OddValuesCountAsUnset) {
  auto filter = LabelFilter::Create(false, {});
  auto list = ParsePodList(
      R"({"kind":"PodList","metadata":{"resourceVersion":"5"},"items":[{"metadata":{"name":"p",)"
      R"("uid":"u"},"spec":{"containers":[)"
      R"({"resources":{"limits":{"nvidia.com/gpu":"-1"},"requests":{"nvidia.com/gpu":"lots"}}},)"
      R"({"resources":{"limits":{"nvidia.com/gpu":2},"requests":{"nvidia.com/gpu":"500m"}}},)"
      R"({"resources":{"limits":{"nvidia.com/gpu":true}}},)"
      R"({"resources":[1]},7]},"status":{"phase":42}}]})",
      *filter);
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  const model::PodMeta& p = list->pods[0].meta;
  EXPECT_EQ(p.containers, 5);
  EXPECT_EQ(p.phase, "");  // not a string: absent
  const model::GpuResourceAmount& a = p.gpu_resources.at("nvidia.com/gpu");
  EXPECT_EQ(a.limits, 2);  // a JSON number is read too; -1 and true are not set
  EXPECT_EQ(a.containers_with_limit, 1);
  EXPECT_EQ(a.requests, 1);  // 500m rounds up, as Quantity.Value()
  EXPECT_EQ(a.containers_with_request, 1);
}

TEST(PodOwnerTest, ControllerFirstElseTheFirstOwner) {
  auto filter = LabelFilter::Create(false, {});
  auto list = ParsePodList(
      R"({"kind":"PodList","metadata":{"resourceVersion":"5"},"items":[)"
      R"({"metadata":{"name":"a","uid":"ua","ownerReferences":[)"
      R"({"kind":"ConfigMap","name":"cm"},)"
      R"({"kind":"ReplicaSet","name":"web-7d4b9c","controller":true},)"
      R"({"kind":"Job","name":"later","controller":true}]}},)"
      R"({"metadata":{"name":"b","uid":"ub","ownerReferences":[{"kind":7,"name":"x"},)"
      R"({"kind":"Job","name":"nightly-29000000"}]}},)"
      R"({"metadata":{"name":"c","uid":"uc","ownerReferences":{"kind":"Job"}}},)"
      R"({"metadata":{"name":"d","uid":"ud"}}]})",
      *filter);
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->pods.size(), 4u);
  EXPECT_EQ(list->pods[0].meta.owner_kind, "ReplicaSet");  // the controller wins
  EXPECT_EQ(list->pods[0].meta.owner_name, "web-7d4b9c");
  EXPECT_EQ(list->pods[1].meta.owner_kind, "Job");  // no controller: the first usable one
  EXPECT_EQ(list->pods[1].meta.owner_name, "nightly-29000000");
  EXPECT_EQ(list->pods[2].meta.owner_name, "");  // not an array: no owner
  EXPECT_EQ(list->pods[3].meta.owner_kind, "");
}

TEST(WatchEventTest, Types) {
  auto filter = LabelFilter::Create(false, {});
  auto added = ParseWatchEvent(
      R"({"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"p","namespace":"n","uid":"u",)"
      R"("resourceVersion":"7"}}})",
      *filter);
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_EQ(added->type, WatchEventType::kAdded);
  EXPECT_EQ(added->resource_version, "7");
  ASSERT_TRUE(added->pod);
  EXPECT_EQ(added->pod->meta.uid, "u");

  auto bookmark = ParseWatchEvent(
      R"({"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"9"}}})", *filter);
  ASSERT_TRUE(bookmark.ok()) << bookmark.status().ToString();
  EXPECT_EQ(bookmark->type, WatchEventType::kBookmark);
  EXPECT_EQ(bookmark->resource_version, "9");
  EXPECT_FALSE(bookmark->pod);

  auto gone = ParseWatchEvent(
      R"({"type":"ERROR","object":{"kind":"Status","code":410,"message":"too old"}})", *filter);
  ASSERT_TRUE(gone.ok());
  EXPECT_EQ(gone->type, WatchEventType::kError);
  EXPECT_EQ(gone->error_code, 410);

  EXPECT_FALSE(ParseWatchEvent(R"({"type":"WHAT","object":{}})", *filter).ok());
  EXPECT_FALSE(ParseWatchEvent(R"({"type":"ADDED"})", *filter).ok());
  EXPECT_FALSE(ParseWatchEvent("{\"type\":\"ADDED\",", *filter).ok());
}

TEST(StripRuntimePrefixTest, Runtimes) {
  EXPECT_EQ(StripRuntimePrefix("containerd://abc"), "abc");
  EXPECT_EQ(StripRuntimePrefix("cri-o://abc"), "abc");
  EXPECT_EQ(StripRuntimePrefix("docker://abc"), "abc");
  EXPECT_EQ(StripRuntimePrefix("abc"), "abc");
  EXPECT_EQ(StripRuntimePrefix(""), "");
}

TEST(BuildPodMetadataTest, IndexesByUidNameAndMirrorUid) {
  auto filter = LabelFilter::Create(false, {});
  auto list = ParsePodList(fixtures::ApiServerTestdata("pods_node1.json"), *filter);
  ASSERT_TRUE(list.ok());
  std::map<std::string, PodRecord> pods;
  for (auto& p : list->pods) pods[p.meta.uid] = p;
  auto md = BuildPodMetadata(pods);
  EXPECT_EQ(md->uid_by_name.at("ml/trainer-a"), "8f1c2d3e-4a5b-6c7d-8e9f-0a1b2c3d4e5f");
  // The static pod is found under the kubelet's uid too, and names its API uid.
  EXPECT_EQ(md->by_uid.at("0123456789abcdef0123456789abcdef").uid,
            "99999999-8888-7777-6666-555555555555");
  EXPECT_EQ(md->by_uid.size(), 4u);
}

}  // namespace
}  // namespace nvmlx::attribute
