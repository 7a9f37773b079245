// Per-pod rendering (pod_families.h) through RenderPrometheus: the DCGM per-pod series in
// dcgm-exporter's shape, our pod and GPU families, their sums, labels per flag, and the
// attribution error counters.
#include "render/pod_families.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "fields/catalog.h"
#include "plan/plan_test_util.h"
#include "render/prometheus.h"

namespace nvmlx::render {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kUidA[] = "aaaaaaaa-0000-0000-0000-000000000001";
constexpr char kUidB[] = "bbbbbbbb-0000-0000-0000-000000000002";
constexpr char kUidUnknown[] = "cccccccc-0000-0000-0000-000000000003";
const std::string kCidMain(64, '1');
const std::string kCidSide(64, '2');
const std::string kCidB(64, '3');

class PodFamiliesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ids_ = std::make_shared<std::vector<model::DeviceIdentity>>(2);
    for (unsigned i = 0; i < 2; ++i) {
      (*ids_)[i].index = i;
      (*ids_)[i].uuid = "GPU-" + std::to_string(i);
      (*ids_)[i].pci_bus_id = "00000000:0" + std::to_string(i) + ":00.0";
      (*ids_)[i].model_name = "NVIDIA H200";
    }
    snap_.identities = ids_;
    snap_.devices.resize(2);
    for (unsigned i = 0; i < 2; ++i) {
      snap_.devices[i].identity = &(*ids_)[i];
      snap_.devices[i].samples = {{203, int64_t{90}}, {252, int64_t{30000}}};
    }
    // GPU 0: pod A (two containers, three processes), pod B, a host process, a process of a pod
    // the API server does not know. GPU 1: idle.
    snap_.devices[0].processes = {
        {100, 10240ull << 20, true, 40, 10}, {101, (2048ull << 20) + 5, true, 15, 3},
        {102, 512ull << 20, false, 0, 0},    {200, 8192ull << 20, true, 30, 8},
        {300, 1024ull << 20, true, 5, 1},    {400, 256ull << 20, true, 2, 0}};
    auto procs = std::make_shared<model::ProcessAttribution>();
    procs->by_pid[100] = {kUidA, kCidMain};
    procs->by_pid[101] = {kUidA, kCidSide};
    procs->by_pid[102] = {kUidA, kCidMain};
    procs->by_pid[200] = {kUidB, kCidB};
    procs->by_pid[400] = {kUidUnknown, std::string(64, '4')};
    auto md = std::make_shared<model::PodMetadata>();
    md->by_uid[kUidA] = {"ml",
                         "trainer-a",
                         kUidA,
                         {{"team", "vision"}, {"gpu", "clash"}},
                         {{kCidMain, "main"}, {kCidSide, "sidecar"}}};
    md->by_uid[kUidB] = {"research", "notebook-b", kUidB, {}, {{kCidB, "notebook"}}};
    md->uid_by_name["ml/trainer-a"] = kUidA;
    md->uid_by_name["research/notebook-b"] = kUidB;
    snap_.attribution.processes = procs;
    snap_.attribution.metadata = md;

    snap_.plan = plan::testing::PlanOf(
        {plan::testing::Row("DCGM_FI_DEV_GPU_UTIL", config::MetricType::kGauge, "help"),
         plan::testing::Row("DCGM_FI_DEV_FB_USED", config::MetricType::kGauge, "help")});
    opts_.hostname = "node1";
    opts_.pods.enabled = true;
    opts_.pods.dcgm_per_pod_series = true;
    opts_.pods.families = true;
  }

  std::string Render() {
    std::string out;
    RenderPrometheus(snap_, opts_, &out);
    return out;
  }

  // Every sample of `family` as (labels text, value).
  static std::map<std::string, double> Samples(const std::string& page, const std::string& family) {
    std::map<std::string, double> out;
    std::istringstream in(page);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind(family + "{", 0) != 0) continue;
      const size_t space = line.rfind(' ');
      out[line.substr(family.size(), space - family.size())] = std::stod(line.substr(space + 1));
    }
    return out;
  }

  std::shared_ptr<std::vector<model::DeviceIdentity>> ids_;
  model::Snapshot snap_;
  PrometheusOptions opts_;
};

// The DCGM families' device labels, and our families'.
constexpr char kDev0[] =
    "{gpu=\"0\",UUID=\"GPU-0\",pci_bus_id=\"00000000:00:00.0\",device=\"nvidia0\","
    "modelName=\"NVIDIA H200\",hostname=\"node1\"";
constexpr char kOwn0[] = "{gpu=\"0\",UUID=\"GPU-0\"";

TEST_F(PodFamiliesTest, DcgmPerPodSeriesAsDcgmExporter) {
  const std::string page = Render();
  // The device-level series stays, and the pod series follow it within the family.
  EXPECT_THAT(page, HasSubstr(std::string("DCGM_FI_DEV_GPU_UTIL") + kDev0 + "} 90\n"));
  EXPECT_THAT(page, HasSubstr(std::string("DCGM_FI_DEV_GPU_UTIL") + kDev0 +
                              ",container=\"main\",namespace=\"ml\",pod=\"trainer-a\",pod_uid=\"" +
                              kUidA + "\"} 40\n"));
  EXPECT_THAT(page, HasSubstr(std::string("DCGM_FI_DEV_FB_USED") + kDev0 +
                              ",container=\"sidecar\",namespace=\"ml\",pod=\"trainer-a\","
                              "pod_uid=\"" +
                              kUidA + "\"} 2048\n"));
  // Main container: 10240 + 512 MiB over two processes.
  EXPECT_THAT(page, HasSubstr(",container=\"main\",namespace=\"ml\",pod=\"trainer-a\",pod_uid=\"" +
                              std::string(kUidA) + "\"} 10752\n"));
  EXPECT_EQ(page.find("# TYPE DCGM_FI_DEV_GPU_UTIL"), page.rfind("# TYPE DCGM_FI_DEV_GPU_UTIL"));
  // No pod labels on the DCGM series (dcgm-exporter's virtual-GPU path has none).
  const auto util = Samples(page, "DCGM_FI_DEV_GPU_UTIL");
  for (const auto& [labels, v] : util) EXPECT_THAT(labels, Not(HasSubstr("team=")));
}

TEST_F(PodFamiliesTest, PerPodValuesSumToTheGpuTotals) {
  const std::string page = Render();
  double pod_sm = 0, pod_mem = 0, pod_procs = 0;
  for (const auto& [l, v] : Samples(page, "nvml_exporter_pod_gpu_sm_utilization_ratio")) {
    if (l.find("gpu=\"0\"") != std::string::npos) pod_sm += v;
  }
  for (const auto& [l, v] : Samples(page, "nvml_exporter_pod_gpu_memory_used_bytes")) {
    if (l.find("gpu=\"0\"") != std::string::npos) pod_mem += v;
  }
  for (const auto& [l, v] : Samples(page, "nvml_exporter_pod_gpu_processes")) {
    if (l.find("gpu=\"0\"") != std::string::npos) pod_procs += v;
  }
  const auto total_sm = Samples(page, "nvml_exporter_gpu_process_sm_utilization_ratio");
  const auto total_mem = Samples(page, "nvml_exporter_gpu_process_memory_used_bytes");
  const auto total_procs = Samples(page, "nvml_exporter_gpu_processes");
  const auto unattributed = Samples(page, "nvml_exporter_gpu_unattributed_processes");
  const std::string dev0 = std::string(kOwn0) + "}";
  EXPECT_DOUBLE_EQ(total_sm.at(dev0), 0.92);
  EXPECT_EQ(unattributed.at(dev0), 1);  // the host process 300
  EXPECT_EQ(pod_procs + unattributed.at(dev0), total_procs.at(dev0));
  EXPECT_NEAR(pod_sm + 0.05, total_sm.at(dev0), 1e-9);  // + the host process's 5 %
  EXPECT_EQ(pod_mem + (1024ull << 20), total_mem.at(dev0));
  // The idle GPU: totals of 0, no pod series.
  const std::string dev1 = "{gpu=\"1\",UUID=\"GPU-1\"}";
  EXPECT_EQ(total_procs.at(dev1), 0);
}

TEST_F(PodFamiliesTest, OurFamiliesLabelsPerFlags) {
  std::string page = Render();
  // Pod uid only where the metadata is unknown (it is the only name); pod labels only when
  // the watcher collected them, never overriding ours ("gpu").
  EXPECT_THAT(page, HasSubstr(std::string("nvml_exporter_pod_gpu_processes") + kOwn0 +
                              ",namespace=\"ml\",pod=\"trainer-a\",container=\"main\","
                              "team=\"vision\"} 2\n"));
  EXPECT_THAT(page, HasSubstr(std::string("nvml_exporter_pod_gpu_processes") + kOwn0 +
                              ",namespace=\"\",pod=\"\",container=\"\",pod_uid=\"" + kUidUnknown +
                              "\"} 1\n"));
  EXPECT_THAT(page, Not(HasSubstr("gpu=\"clash\"")));
  EXPECT_THAT(page, HasSubstr("nvml_exporter_pod_gpu_sm_utilization_ratio"));
  opts_.pods.pod_uid_label = true;
  opts_.pods.use_old_namespace = true;
  page = Render();
  EXPECT_THAT(
      page, HasSubstr(std::string("nvml_exporter_pod_gpu_processes") + "{gpu=\"0\",uuid=\"GPU-0\"" +
                      ",pod_namespace=\"research\",pod_name=\"notebook-b\","
                      "container_name=\"notebook\",pod_uid=\"" +
                      kUidB + "\"} 1\n"));
  EXPECT_THAT(page, HasSubstr(",container_name=\"main\",pod_name=\"trainer-a\","
                              "pod_namespace=\"ml\",pod_uid=\""));
}

TEST_F(PodFamiliesTest, KubeletPodsWithoutProcessesReadZeroAndCarryVgpu) {
  auto devs = std::make_shared<model::DeviceAttribution>();
  devs->pods_by_device["GPU-0"] = {{"ml", "trainer-a", "main", "1"},
                                   {"research", "notebook-b", "notebook", "2"},
                                   {"ml", "idle-c", "worker", "3"}};
  snap_.attribution.devices = devs;
  const std::string page = Render();
  EXPECT_THAT(page, HasSubstr(",container=\"main\",namespace=\"ml\",pod=\"trainer-a\",pod_uid=\"" +
                              std::string(kUidA) + "\",vgpu=\"1\"} 40\n"));
  EXPECT_THAT(page, HasSubstr(std::string("DCGM_FI_DEV_GPU_UTIL") + kDev0 +
                              ",container=\"worker\",namespace=\"ml\",pod=\"idle-c\",pod_uid=\"\","
                              "vgpu=\"3\"} 0\n"));
}

// --kubernetes-virtual-gpus without --kubernetes-process-metrics: exactly dcgm-exporter 4.8's
// GPU_UTIL family (the unlabelled device series, then one per pod container with its share and
// pod_uid; sorted by namespace, pod, container), and none of our per-pod or per-GPU families.
TEST_F(PodFamiliesTest, VirtualGpusAloneGivesDcgmSeriesOnly) {
  opts_.pods.families = false;
  auto devs = std::make_shared<model::DeviceAttribution>();
  devs->pods_by_device["GPU-0"] = {{"ml", "trainer-a", "main", "1"},
                                   {"research", "notebook-b", "notebook", "2"}};
  snap_.attribution.devices = devs;
  const std::string page = Render();
  const std::string dev0 = std::string("DCGM_FI_DEV_GPU_UTIL") + kDev0;
  const std::string dev1 =
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",UUID=\"GPU-1\",pci_bus_id=\"00000000:01:00.0\","
      "device=\"nvidia1\",modelName=\"NVIDIA H200\",hostname=\"node1\"} 90\n";
  EXPECT_THAT(page, HasSubstr("# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n" + dev0 + "} 90\n" + dev0 +
                              ",container=\"\",namespace=\"\",pod=\"\",pod_uid=\"" + kUidUnknown +
                              "\"} 2\n" + dev0 +
                              ",container=\"main\",namespace=\"ml\",pod=\"trainer-a\",pod_uid=\"" +
                              kUidA + "\",vgpu=\"1\"} 40\n" + dev0 +
                              ",container=\"sidecar\",namespace=\"ml\",pod=\"trainer-a\","
                              "pod_uid=\"" +
                              kUidA + "\"} 15\n" + dev0 +
                              ",container=\"notebook\",namespace=\"research\",pod=\"notebook-b\","
                              "pod_uid=\"" +
                              kUidB + "\",vgpu=\"2\"} 30\n" + dev1));
  EXPECT_THAT(page, Not(HasSubstr("nvml_exporter_pod_")));
  EXPECT_THAT(page, Not(HasSubstr("nvml_exporter_gpu_process")));
  EXPECT_THAT(page, Not(HasSubstr("nvml_exporter_gpu_unattributed_processes")));
}

TEST_F(PodFamiliesTest, DisabledRendersNothingButErrors) {
  auto errors = std::make_shared<model::SourceErrors>();
  errors->Register("apiserver");
  errors->Register("cgroup");
  errors->Increment("cgroup");
  errors->Increment("cgroup");
  opts_.pods.enabled = false;
  opts_.attribution_errors = errors;
  const std::string page = Render();
  EXPECT_THAT(page, Not(HasSubstr("pod_uid")));
  EXPECT_THAT(page, Not(HasSubstr("nvml_exporter_pod_gpu")));
  EXPECT_THAT(page, HasSubstr("# TYPE nvml_exporter_attribution_errors_total counter\n"
                              "nvml_exporter_attribution_errors_total{source=\"apiserver\"} 0\n"
                              "nvml_exporter_attribution_errors_total{source=\"cgroup\"} 2\n"));
}

TEST_F(PodFamiliesTest, NoAttributionYetCountsEverythingUnattributed) {
  snap_.attribution = {};
  const std::string page = Render();
  const std::string dev0 = std::string(kOwn0) + "}";
  EXPECT_EQ(Samples(page, "nvml_exporter_gpu_unattributed_processes").at(dev0), 6);
  EXPECT_TRUE(Samples(page, "nvml_exporter_pod_gpu_processes").empty());
}

}  // namespace
}  // namespace nvmlx::render
