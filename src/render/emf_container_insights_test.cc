// The Container Insights schema (render/emf_container_insights.h) on hand-built snapshots: every
// document is checked by the EMF specification's validator and by the schema's own
// (test/emf/ci_schema_validator.h), then its values against the samples it came from.
#include "render/emf_container_insights.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ci_schema_validator.h"
#include "emf_validator.h"
#include "fields/catalog.h"

namespace nvmlx::render {
namespace {

using model::DeviceIdentity;
using model::DeviceSnapshot;
using nlohmann::json;

constexpr int64_t kTimeMs = 1700000000000;
constexpr double kMib = 1024.0 * 1024.0;

int Id(std::string_view name) {
  const fields::FieldDef* f = fields::FindByName(name);
  EXPECT_NE(f, nullptr) << name;
  return f == nullptr ? 0 : f->id;
}

// Samples of the seven fields: utilization `util`, `used` of 1000 MiB, temperature `temp`.
std::vector<model::Sample> Samples(int64_t util, int64_t used, int64_t temp) {
  std::vector<model::Sample> s = {
      {Id("DCGM_FI_DEV_GPU_UTIL"), util},
      {Id("DCGM_FI_DEV_FB_USED"), used},
      {Id("DCGM_FI_DEV_FB_TOTAL"), int64_t{1000}},
      {Id("DCGM_FI_DEV_FB_USED_PERCENT"), static_cast<double>(used) / 1000.0},
      {Id("DCGM_FI_DEV_GPU_TEMP"), temp},
      {Id("DCGM_FI_DEV_POWER_USAGE"), 250.5},
      {Id("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"), 0.25},
  };
  std::sort(s.begin(), s.end(), [](auto& a, auto& b) { return a.field_id < b.field_id; });
  return s;
}

// Four GPUs: 0 held by train/trainer alone; 1 shared by two pods (time-slicing) with processes;
// 2 MIG-enabled, instance GI 1 held by mig/worker; 3 idle.
struct World {
  std::shared_ptr<std::vector<DeviceIdentity>> ids =
      std::make_shared<std::vector<DeviceIdentity>>();
  model::Snapshot snap;

  World() {
    for (unsigned g = 0; g < 4; ++g) {
      DeviceIdentity id;
      id.index = g;
      id.uuid = "GPU-000" + std::to_string(g);
      ids->push_back(id);
    }
    DeviceIdentity mig = (*ids)[2];
    mig.mig = DeviceIdentity::Mig{1, 0, "1g.18gb", "MIG-0002-1"};
    ids->push_back(mig);
    snap.identities = ids;
    snap.time = std::chrono::system_clock::time_point(std::chrono::milliseconds(kTimeMs));
    for (size_t i = 0; i < ids->size(); ++i) {
      DeviceSnapshot d;
      d.identity = &(*ids)[i];
      d.samples = Samples(10 * static_cast<int64_t>(i + 1), 100 * static_cast<int64_t>(i + 1), 40);
      snap.devices.push_back(std::move(d));
    }
    // The MIG instance reads its memory only; temperature and power are its GPU's.
    auto& inst = snap.devices[4].samples;
    inst = {{Id("DCGM_FI_DEV_FB_TOTAL"), int64_t{500}}, {Id("DCGM_FI_DEV_FB_USED"), int64_t{50}}};
    std::sort(inst.begin(), inst.end(), [](auto& a, auto& b) { return a.field_id < b.field_id; });

    auto devices = std::make_shared<model::DeviceAttribution>();
    devices->pods_by_device["GPU-0000"] = {{"ml", "train-7d9f8c6b5-abcde", "trainer", ""}};
    devices->pods_by_device["GPU-0001"] = {{"a", "pa", "c", "0"}, {"b", "pb", "c", "1"}};
    devices->pods_by_device["MIG-0002-1"] = {{"mig", "worker-0", "w", ""}};
    snap.attribution.devices = devices;
    // Per-process data on the shared GPU: pa uses 30% and 200 MiB, pb 5% and 50 MiB.
    auto meta = std::make_shared<model::PodMetadata>();
    auto procs = std::make_shared<model::ProcessAttribution>();
    const std::string cid_a(64, 'a'), cid_b(64, 'b');
    meta->by_uid["uid-a"] = {"a", "pa", "uid-a", {{"app", "x"}}, {{cid_a, "c"}}};
    meta->by_uid["uid-b"] = {"b", "pb", "uid-b", {}, {{cid_b, "c"}}};
    meta->uid_by_name = {{"a/pa", "uid-a"}, {"b/pb", "uid-b"}};
    procs->by_pid[100] = {"uid-a", cid_a};
    procs->by_pid[200] = {"uid-b", cid_b};
    snap.attribution.metadata = meta;
    snap.attribution.processes = procs;
    snap.devices[1].processes = {{100, static_cast<uint64_t>(200 * kMib), true, 30, 0},
                                 {200, static_cast<uint64_t>(50 * kMib), true, 5, 0}};
  }
};

ContainerInsightsOptions Options() {
  ContainerInsightsOptions o;
  o.cluster_name = "eks-1";
  o.node_name = "ip-10-0-1-23.ec2.internal";
  o.instance_id = "i-0123456789abcdef0";
  o.instance_type = "p5.48xlarge";
  o.pod_shares = true;
  return o;
}

std::vector<json> Valid(const std::vector<std::string>& docs, bool instance_known = true) {
  std::vector<json> out;
  for (const std::string& d : docs) {
    EXPECT_EQ(testing::ValidateEmf(d, {.max_bytes = 61440, .now_ms = std::nullopt}),
              std::vector<std::string>{})
        << d;
    EXPECT_EQ(testing::ValidateContainerInsights(d, {"eks-1", instance_known}),
              std::vector<std::string>{})
        << d;
    out.push_back(json::parse(d));
  }
  return out;
}

// The events of `type` keyed by "<UUID>/<FullPodName>/<ContainerName>".
std::map<std::string, json> OfType(const std::vector<json>& docs, const std::string& type) {
  std::map<std::string, json> m;
  for (const json& d : docs) {
    if (d["Type"] != type) continue;
    const std::string key = d.value("UUID", d.value("GpuDevice", "")) + "/" +
                            d.value("FullPodName", "") + "/" + d.value("ContainerName", "");
    EXPECT_TRUE(m.emplace(key, d).second) << "twice: " << key;
  }
  return m;
}

TEST(ContainerInsightsTest, ThreeLevelsWithTheAgentsNamesUnitsAndDimensions) {
  World w;
  ContainerInsightsRenderer r(Options());
  std::vector<std::string> docs;
  r.Render(w.snap, w.snap.time, &docs);
  const std::vector<json> events = Valid(docs);
  const auto nodes = OfType(events, "NodeGPU");
  const auto containers = OfType(events, "ContainerGPU");
  const auto pods = OfType(events, "PodGPU");
  // One per GPU (the MIG instance is not one), one per holder; the idle GPU has no pod event.
  ASSERT_EQ(nodes.size(), 4u);
  ASSERT_EQ(containers.size(), 4u);
  ASSERT_EQ(pods.size(), 4u);

  const json& n0 = nodes.at("nvidia0//");
  EXPECT_EQ(n0["_aws"]["LogStreamName"], "ip-10-0-1-23.ec2.internal");
  EXPECT_EQ(n0["node_gpu_utilization"], 10);
  EXPECT_EQ(n0["node_gpu_memory_used"], 100 * kMib);
  EXPECT_EQ(n0["node_gpu_memory_total"], 1000 * kMib);
  EXPECT_DOUBLE_EQ(n0["node_gpu_memory_utilization"].get<double>(), 10.0);
  EXPECT_EQ(n0["node_gpu_tensor_core_utilization"], 0.25);
  EXPECT_EQ(n0["kubernetes"], json({{"host", "ip-10-0-1-23.ec2.internal"}}));

  const json& c0 = containers.at("GPU-0000/train-7d9f8c6b5-abcde/trainer");
  EXPECT_EQ(c0["Namespace"], "ml");
  EXPECT_EQ(c0["GpuDevice"], "nvidia0");
  EXPECT_EQ(c0["container_gpu_utilization"], 10);
  EXPECT_EQ(c0["container_gpu_power_draw"], 250.5);
  EXPECT_EQ(c0["Sources"], json::parse(R"(["dcgm","pod","calculated"])"));
  EXPECT_EQ(c0["kubernetes"]["container_name"], "trainer");
  EXPECT_EQ(pods.at("GPU-0000/train-7d9f8c6b5-abcde/")["pod_gpu_utilization"], 10);
}

TEST(ContainerInsightsTest, SharedGpuPodsCarryTheirOwnShare) {
  World w;
  ContainerInsightsRenderer r(Options());
  std::vector<std::string> docs;
  r.Render(w.snap, w.snap.time, &docs);
  const auto containers = OfType(Valid(docs), "ContainerGPU");
  const json& a = containers.at("GPU-0001/pa/c");
  const json& b = containers.at("GPU-0001/pb/c");
  EXPECT_EQ(a["container_gpu_utilization"], 30);
  EXPECT_EQ(b["container_gpu_utilization"], 5);
  EXPECT_EQ(a["container_gpu_memory_used"], 200 * kMib);
  EXPECT_DOUBLE_EQ(a["container_gpu_memory_utilization"].get<double>(), 20.0);
  EXPECT_EQ(b["container_gpu_memory_used"], 50 * kMib);
  // GPU-wide quantities are the device's.
  EXPECT_EQ(a["container_gpu_memory_total"], 1000 * kMib);
  EXPECT_EQ(a["container_gpu_temperature"], 40);
  EXPECT_EQ(a["kubernetes"]["labels"], json({{"app", "x"}}));
  EXPECT_EQ(a["kubernetes"]["pod_id"], "uid-a");

  // Without per-process data every pod gets the device's value, as the agent sends it.
  ContainerInsightsOptions o = Options();
  o.pod_shares = false;
  ContainerInsightsRenderer plain(o);
  docs.clear();
  plain.Render(w.snap, w.snap.time, &docs);
  const auto same = OfType(Valid(docs), "ContainerGPU");
  EXPECT_EQ(same.at("GPU-0001/pa/c")["container_gpu_utilization"], 20);
  EXPECT_EQ(same.at("GPU-0001/pb/c")["container_gpu_utilization"], 20);
}

TEST(ContainerInsightsTest, MigInstanceValuesWithItsGpusTemperature) {
  World w;
  ContainerInsightsRenderer r(Options());
  std::vector<std::string> docs;
  r.Render(w.snap, w.snap.time, &docs);
  const auto containers = OfType(Valid(docs), "ContainerGPU");
  const json& m = containers.at("MIG-0002-1/worker-0/w");
  EXPECT_EQ(m["GpuDevice"], "nvidia2");
  EXPECT_EQ(m["container_gpu_memory_used"], 50 * kMib);
  EXPECT_EQ(m["container_gpu_memory_total"], 500 * kMib);
  EXPECT_EQ(m["container_gpu_temperature"], 40);          // the GPU's
  EXPECT_FALSE(m.contains("container_gpu_utilization"));  // not the whole GPU's utilization
}

TEST(ContainerInsightsTest, UnknownInstanceLeavesItsDimensionSetsOut) {
  World w;
  ContainerInsightsOptions o = Options();
  o.instance_id.clear();
  o.instance_type.clear();
  ContainerInsightsRenderer r(o);
  std::vector<std::string> docs;
  r.Render(w.snap, w.snap.time, &docs);
  for (const json& d : Valid(docs, false)) {
    EXPECT_FALSE(d.contains("InstanceId"));
    if (d["Type"] == "NodeGPU") {
      EXPECT_EQ(d["_aws"]["CloudWatchMetrics"][0]["Dimensions"],
                json::parse(R"([["ClusterName"]])"));
    }
  }
}

TEST(ContainerInsightsTest, HistogramsOncePerPeriod) {
  World w;
  ContainerInsightsOptions o = Options();
  o.histograms = true;
  ContainerInsightsRenderer r(o);
  std::vector<std::string> docs;
  const int64_t utils[] = {10, 10, 70};
  for (int i = 0; i < 3; ++i) {
    w.snap.devices[3].samples = Samples(utils[i], 100 + i, 40);
    r.Render(w.snap, w.snap.time + std::chrono::seconds(20 * i), &docs);
  }
  EXPECT_TRUE(docs.empty()) << "nothing before the period ends";
  r.Render(w.snap, w.snap.time + std::chrono::seconds(60), &docs);
  const auto nodes = OfType(Valid(docs), "NodeGPU");
  ASSERT_EQ(nodes.size(), 4u);
  const json& n3 = nodes.at("nvidia3//");
  EXPECT_EQ(n3["_aws"]["Timestamp"], kTimeMs + 40000);  // the period's last collection
  const json& u = n3["node_gpu_utilization"];
  EXPECT_EQ(u["Values"], json::parse("[10,70]"));
  EXPECT_EQ(u["Counts"], json::parse("[2,1]"));
  EXPECT_EQ(u["Count"], 3);
  EXPECT_EQ(u["Sum"], 90);
  EXPECT_EQ(u["Min"], 10);
  EXPECT_EQ(u["Max"], 70);
  EXPECT_EQ(n3["node_gpu_memory_used"]["Values"].size(), 3u);
}

TEST(ContainerInsightsTest, ManyDistinctValuesStayWithinOneHundred) {
  World w;
  ContainerInsightsOptions o = Options();
  o.histograms = true;
  o.histogram_period = std::chrono::seconds(1000);
  ContainerInsightsRenderer r(o);
  std::vector<std::string> docs;
  for (int i = 0; i <= 300; ++i) {
    w.snap.devices[3].samples = Samples(i % 101, 100, 40 + i);
    r.Render(w.snap, w.snap.time + std::chrono::seconds(i), &docs);
  }
  r.Render(w.snap, w.snap.time + std::chrono::seconds(1000), &docs);
  const json t = OfType(Valid(docs), "NodeGPU").at("nvidia3//")["node_gpu_temperature"];
  EXPECT_EQ(t["Values"].size(), 100u);
  EXPECT_EQ(t["Count"], 301);
  EXPECT_EQ(t["Min"], 40);
  EXPECT_EQ(t["Max"], 340);
}

// Pods as the API server describes them: phase, containers and nvidia.com/gpu amounts.
model::PodMeta GpuPod(std::string ns, std::string pod, std::string phase, int containers,
                      int64_t requests, int64_t limits, int with_limit) {
  model::PodMeta m;
  m.namespace_name = std::move(ns);
  m.pod = std::move(pod);
  m.uid = "uid-" + m.pod;
  m.phase = std::move(phase);
  m.containers = containers;
  if (with_limit > 0 || requests > 0) {
    m.gpu_resources["nvidia.com/gpu"] = {requests, limits, with_limit, with_limit};
  }
  return m;
}

// World's GPUs on a node of 4 (status.capacity), with four pods: trainer (Running, 2 GPUs, a
// Deployment's), queued (Pending, 1), done (Succeeded, 1: left out) and half (a CPU sidecar
// without a GPU limit: left out).
void AddAllocation(World* w, bool with_node = true) {
  auto meta = std::make_shared<model::PodMetadata>();
  for (model::PodMeta m : {GpuPod("ml", "train-7d9f8c6b5-abcde", "Running", 2, 2, 2, 2),
                           GpuPod("ml", "queued", "Pending", 1, 1, 1, 1),
                           GpuPod("ml", "done", "Succeeded", 1, 1, 1, 1),
                           GpuPod("ml", "half", "Running", 2, 1, 1, 1)}) {
    if (m.pod == "train-7d9f8c6b5-abcde") {
      m.owner_kind = "ReplicaSet";
      m.owner_name = "train-7d9f8c6b5";
    }
    meta->uid_by_name[m.namespace_name + "/" + m.pod] = m.uid;
    meta->by_uid[m.uid] = m;
  }
  w->snap.attribution.metadata = meta;
  if (with_node) {
    auto node = std::make_shared<model::NodeInfo>();
    node->node_name = "ip-10-0-1-23.ec2.internal";
    node->instance_id = "i-0fedcba9876543210";
    node->instance_type = "g5.12xlarge";
    node->gpu_capacity["nvidia.com/gpu"] = 4;
    w->snap.attribution.node = node;
  }
}

TEST(ContainerInsightsTest, AllocationCountsFromPodSpecsAndTheNodesCapacity) {
  World w;
  AddAllocation(&w);
  ContainerInsightsRenderer r(Options());
  std::vector<std::string> docs;
  r.Render(w.snap, w.snap.time, &docs);
  const std::vector<json> events = Valid(docs);
  const auto pods = OfType(events, "Pod");
  ASSERT_EQ(pods.size(), 2u) << "Succeeded and partly limited pods are not counted";
  const json& t = pods.at("/train-7d9f8c6b5-abcde/");
  EXPECT_EQ(t["PodName"], "train");  // the Deployment, through the ReplicaSet
  EXPECT_EQ(t["pod_gpu_request"], 2);
  EXPECT_EQ(t["pod_gpu_limit"], 2);
  EXPECT_EQ(t["pod_gpu_usage_total"], 2);
  EXPECT_EQ(t["pod_gpu_reserved_capacity"], 50);
  EXPECT_FALSE(t.contains("kubernetes"));
  const json& q = pods.at("/queued/");
  EXPECT_EQ(q["pod_gpu_usage_total"], 0);  // in use only while Running
  EXPECT_EQ(q["pod_gpu_reserved_capacity"], 25);
  EXPECT_EQ(q["_aws"]["CloudWatchMetrics"][0]["Dimensions"],
            json::parse(R"([["ClusterName"],["ClusterName","Namespace","PodName"],)"
                        R"(["ClusterName","FullPodName","Namespace","PodName"]])"));

  const auto nodes = OfType(events, "Node");
  ASSERT_EQ(nodes.size(), 1u);
  const json& n = nodes.begin()->second;
  EXPECT_EQ(n["node_gpu_limit"], 4);
  EXPECT_EQ(n["node_gpu_usage_total"], 2);
  EXPECT_EQ(n["node_gpu_request"], 3);  // a member, not a metric
  EXPECT_EQ(n["node_gpu_reserved_capacity"], 75);
  EXPECT_EQ(n["node_gpu_unreserved_capacity"], 25);
  EXPECT_EQ(n["node_gpu_available_capacity"], 2);
  EXPECT_EQ(n["_aws"]["CloudWatchMetrics"][0]["Metrics"].size(), 5u);
  EXPECT_EQ(n["_aws"]["CloudWatchMetrics"][0]["Dimensions"],
            json::parse(R"([["ClusterName"],["ClusterName","InstanceId","NodeName"]])"));

  // The GPU events name the workload the same way.
  EXPECT_EQ(OfType(events, "ContainerGPU").at("GPU-0000/train-7d9f8c6b5-abcde/trainer")["PodName"],
            "train");
}

TEST(ContainerInsightsTest, WithoutTheNodeTheKubeletsDevicesElseNoNodeEvent) {
  World w;
  AddAllocation(&w, /*with_node=*/false);
  ContainerInsightsRenderer r(Options());
  std::vector<std::string> docs;
  r.Render(w.snap, w.snap.time, &docs);
  const std::vector<json> events = Valid(docs);
  EXPECT_TRUE(OfType(events, "Node").empty());
  const auto pods = OfType(events, "Pod");
  const json& t = pods.at("/train-7d9f8c6b5-abcde/");
  EXPECT_EQ(t["pod_gpu_limit"], 2);
  EXPECT_FALSE(t.contains("pod_gpu_reserved_capacity"));

  // The kubelet's allocatable devices stand in for the Node's capacity.
  auto allocatable = std::make_shared<model::AllocatableDevices>();
  allocatable->device_ids_by_resource["nvidia.com/gpu"] = {"GPU-0000", "GPU-0001", "GPU-0002"};
  w.snap.attribution.allocatable = allocatable;
  docs.clear();
  r.Render(w.snap, w.snap.time, &docs);
  const auto with_kubelet = Valid(docs);
  const auto nodes = OfType(with_kubelet, "Node");
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes.begin()->second["node_gpu_limit"], 3);
  EXPECT_EQ(nodes.begin()->second["node_gpu_available_capacity"], 1);
}

TEST(ContainerInsightsTest, IdentityFromTheNodeObjectElseFromFlags) {
  World w;
  AddAllocation(&w);
  ContainerInsightsRenderer r(Options());  // flags: i-0123456789abcdef0, p5.48xlarge
  std::vector<std::string> docs;
  r.Render(w.snap, w.snap.time, &docs);
  for (const json& d : Valid(docs)) {
    EXPECT_EQ(d["InstanceId"], "i-0fedcba9876543210") << d["Type"];
    EXPECT_EQ(d["InstanceType"], "g5.12xlarge") << d["Type"];
  }
  // A Node without a providerID of EC2's form (and without the label): the flags fill in.
  auto bare = std::make_shared<model::NodeInfo>();
  bare->gpu_capacity["nvidia.com/gpu"] = 4;
  w.snap.attribution.node = bare;
  docs.clear();
  r.Render(w.snap, w.snap.time, &docs);
  for (const json& d : Valid(docs)) {
    EXPECT_EQ(d["InstanceId"], "i-0123456789abcdef0") << d["Type"];
    EXPECT_EQ(d["InstanceType"], "p5.48xlarge") << d["Type"];
  }
}

TEST(ContainerInsightsTest, HistogramsSendTheAllocationCountsOncePerPeriodAsValues) {
  World w;
  AddAllocation(&w);
  ContainerInsightsOptions o = Options();
  o.histograms = true;
  ContainerInsightsRenderer r(o);
  std::vector<std::string> docs;
  r.Render(w.snap, w.snap.time, &docs);
  r.Render(w.snap, w.snap.time + std::chrono::seconds(30), &docs);
  EXPECT_TRUE(docs.empty());
  r.Render(w.snap, w.snap.time + std::chrono::seconds(60), &docs);
  const std::vector<json> events = Valid(docs);
  const auto nodes = OfType(events, "Node");
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes.begin()->second["node_gpu_limit"], 4);  // a plain value
  EXPECT_EQ(nodes.begin()->second["_aws"]["Timestamp"], kTimeMs + 30000);
  EXPECT_EQ(OfType(events, "Pod").size(), 2u);
}

TEST(ContainerInsightsTest, WorkloadNames) {
  EXPECT_EQ(CiWorkloadName("train-7d9f8c6b5-abcde", "ReplicaSet", "train-7d9f8c6b5"), "train");
  EXPECT_EQ(CiWorkloadName("nightly-28900000-xyz", "Job", "nightly-28900000"), "nightly");
  EXPECT_EQ(CiWorkloadName("batch-x", "Job", "batch-x"), "batch-x");
  EXPECT_EQ(CiWorkloadName("web-0", "StatefulSet", "web"), "web");
  EXPECT_EQ(CiWorkloadName("solo", "", ""), "solo");
}

}  // namespace
}  // namespace nvmlx::render
