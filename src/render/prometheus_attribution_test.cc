// The Prometheus renderer's attribution tests: pods, HPC jobs, per-process shares and MIG
// instances as dcgm-exporter "attributes" after the labels (render/prometheus.h).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "render/prometheus.h"
#include "render/prometheus_test_fixture.h"

namespace nvmlx::render {
namespace {

using config::MetricType;
using fields::ValueKind;
using model::DeviceIdentity;
using model::DeviceSnapshot;
using test::Fixture;
using test::MakeIdentity;

// Pods and HPC jobs are dcgm-exporter "attributes": after every label, sorted by name with
// err_code/err_msg; one series per (pod, job); free devices keep their bare series.
Fixture AttributionFixture() {
  Fixture f;
  f.AddEntry(203, "DCGM_FI_DEV_GPU_UTIL", MetricType::kGauge, "Util.");
  f.AddEntry(230, "DCGM_FI_DEV_XID_ERRORS", MetricType::kGauge, "Last XID.");
  f.AddEntry(9001, "DCGM_EXP_XID_ERRORS_COUNT", MetricType::kCounter, "XIDs.");
  f.AddEntry(1, "DCGM_FI_DRIVER_VERSION", MetricType::kLabel, "Driver.", ValueKind::kString);
  f.SetIdentities({MakeIdentity(0), MakeIdentity(1)});
  f.snapshot.xid_window_ms = 1000;
  for (DeviceSnapshot& d : f.snapshot.devices) {
    d.samples = {{203, int64_t{5}}, {230, int64_t{13}}};
    d.xid_watched = true;
  }
  return f;
}

const char kLabels0[] =
    "{gpu=\"0\",UUID=\"GPU-a1b2c3d4-1c2d-3e4f-5a6b-7c8d9e0f0000\",pci_bus_id=\"00000000:18:00.0\","
    "device=\"nvidia0\",modelName=\"NVIDIA H200\",DCGM_FI_DRIVER_VERSION=\"580.159.04\"";

std::shared_ptr<model::DeviceAttribution> PodsOn(const std::string& key,
                                                 std::vector<model::PodRef> pods) {
  auto a = std::make_shared<model::DeviceAttribution>();
  a->pods_by_device[key] = std::move(pods);
  return a;
}

TEST(RenderPrometheusTest, PodAttributesFollowTheLabels) {
  Fixture f = AttributionFixture();
  f.snapshot.attribution.devices =
      PodsOn(f.snapshot.identities->at(0).uuid, {{"team-a", "trainer-0", "main", ""}});
  const std::string out = f.Render();
  const std::string l0 = kLabels0;
  EXPECT_NE(out.find("DCGM_FI_DEV_GPU_UTIL" + l0 +
                     ",container=\"main\",namespace=\"team-a\",pod=\"trainer-0\"} 5\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("DCGM_FI_DEV_XID_ERRORS" + l0 +
                     ",container=\"main\",err_code=\"13\",err_msg=\"Graphics Engine Exception\","
                     "namespace=\"team-a\",pod=\"trainer-0\"} 13\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("DCGM_EXP_XID_ERRORS_COUNT" + l0 +
                     ",window_size_in_ms=\"1000\",container=\"main\",namespace=\"team-a\","
                     "pod=\"trainer-0\"} 0\n"),
            std::string::npos)
      << out;
  // GPU 1 is free: no pod labels at all.
  EXPECT_NE(out.find("DCGM_FI_DEV_GPU_UTIL{gpu=\"1\""), std::string::npos);
  EXPECT_EQ(out.find("pod=\"\""), std::string::npos);
  const size_t gpu1 = out.find("DCGM_FI_DEV_GPU_UTIL{gpu=\"1\"");
  EXPECT_EQ(out.substr(gpu1, out.find('\n', gpu1) - gpu1).find("pod="), std::string::npos);
}

TEST(RenderPrometheusTest, OldNamespacePodAttributeNames) {
  Fixture f = AttributionFixture();
  f.options.use_old_namespace = true;
  f.snapshot.attribution.devices =
      PodsOn(f.snapshot.identities->at(0).uuid, {{"team-a", "trainer-0", "main", ""}});
  const std::string out = f.Render();
  EXPECT_NE(
      out.find(",container_name=\"main\",pod_name=\"trainer-0\",pod_namespace=\"team-a\"} 5\n"),
      std::string::npos)
      << out;
  EXPECT_EQ(out.find("namespace=\"team-a\",pod="), std::string::npos);
}

TEST(RenderPrometheusTest, SharedGpuGetsOneSeriesPerPodWithVgpu) {
  Fixture f = AttributionFixture();
  f.snapshot.attribution.devices =
      PodsOn(f.snapshot.identities->at(0).uuid, {{"ns", "a", "c", "0"}, {"ns", "b", "c", "1"}});
  const std::string out = f.Render();
  const std::string l0 = kLabels0;
  const std::string expected = "DCGM_FI_DEV_GPU_UTIL" + l0 +
                               ",container=\"c\",namespace=\"ns\",pod=\"a\",vgpu=\"0\"} 5\n"
                               "DCGM_FI_DEV_GPU_UTIL" +
                               l0 + ",container=\"c\",namespace=\"ns\",pod=\"b\",vgpu=\"1\"} 5\n";
  EXPECT_NE(out.find(expected), std::string::npos) << out;
}

TEST(RenderPrometheusTest, HpcJobsTimesPods) {
  Fixture f = AttributionFixture();
  const std::string uuid0 = f.snapshot.identities->at(0).uuid;
  const std::string uuid1 = f.snapshot.identities->at(1).uuid;
  f.snapshot.attribution.devices = PodsOn(uuid0, {{"ns", "a", "c", ""}});
  auto hpc = std::make_shared<model::HpcJobs>();
  hpc->jobs_by_device[uuid0] = {"j1", "j2"};
  hpc->jobs_by_device[uuid1] = {"j3"};
  f.snapshot.attribution.hpc = hpc;
  const std::string out = f.Render();
  const std::string l0 = kLabels0;
  EXPECT_NE(out.find("DCGM_FI_DEV_GPU_UTIL" + l0 +
                     ",container=\"c\",hpc_job=\"j1\",namespace=\"ns\",pod=\"a\"} 5\n"
                     "DCGM_FI_DEV_GPU_UTIL" +
                     l0 + ",container=\"c\",hpc_job=\"j2\",namespace=\"ns\",pod=\"a\"} 5\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(",DCGM_FI_DRIVER_VERSION=\"580.159.04\",hpc_job=\"j3\"} 5\n"),
            std::string::npos)
      << out;
}

// --container-labels (dcgm-exporter 4.8.3's containerMapper): each series of a device stays, and
// is followed by one copy per engine container using the device, with container="<name>" among
// the attributes (also under -o); HPC jobs keep theirs on the copies.
TEST(RenderPrometheusTest, RuntimeContainersCopyEachSeries) {
  Fixture f = AttributionFixture();
  f.options.use_old_namespace = true;
  const std::string uuid0 = f.snapshot.identities->at(0).uuid;
  const std::string uuid1 = f.snapshot.identities->at(1).uuid;
  auto containers = std::make_shared<model::RuntimeContainers>();
  containers->names_by_device[uuid0] = {"trainer", "all-gpus"};
  containers->names_by_device[uuid1] = {"all-gpus"};
  containers->dropped = 7;
  f.snapshot.attribution.containers = containers;
  auto hpc = std::make_shared<model::HpcJobs>();
  hpc->jobs_by_device[uuid1] = {"j3"};
  f.snapshot.attribution.hpc = hpc;
  const std::string out = f.Render();
  const std::string l0 =
      std::string(kLabels0).replace(std::string(kLabels0).find("UUID"), 4, "uuid");
  EXPECT_NE(out.find("DCGM_FI_DEV_GPU_UTIL" + l0 + "} 5\n" + "DCGM_FI_DEV_GPU_UTIL" + l0 +
                     ",container=\"trainer\"} 5\n" + "DCGM_FI_DEV_GPU_UTIL" + l0 +
                     ",container=\"all-gpus\"} 5\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("DCGM_FI_DEV_XID_ERRORS" + l0 +
                     ",container=\"trainer\",err_code=\"13\",err_msg=\"Graphics Engine "
                     "Exception\"} 13\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(",DCGM_FI_DRIVER_VERSION=\"580.159.04\",hpc_job=\"j3\"} 5\n"
                     "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\""),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(",DCGM_FI_DRIVER_VERSION=\"580.159.04\",container=\"all-gpus\","
                     "hpc_job=\"j3\"} 5\n"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("container_name="), std::string::npos);
  // The containers left out by the per-GPU cap (attribute::kMaxContainerLabelsPerDevice).
  EXPECT_NE(out.find("# TYPE nvml_exporter_container_labels_dropped gauge\n"
                     "nvml_exporter_container_labels_dropped 7\n"),
            std::string::npos)
      << out;
}

// --kubernetes-enable-pod-uid with -k: pod_uid (from the API server's metadata, joined by
// namespace/pod) is an attribute, sorted between pod and vgpu; a pod the metadata does not know,
// or no metadata at all, gets no pod_uid rather than an empty one.
TEST(RenderPrometheusTest, DevicePodUidFromTheApiServerMetadata) {
  Fixture f = AttributionFixture();
  f.snapshot.attribution.devices =
      PodsOn(f.snapshot.identities->at(0).uuid, {{"ns", "a", "c", "0"}, {"ns", "b", "c", "1"}});
  auto meta = std::make_shared<model::PodMetadata>();
  meta->uid_by_name["ns/a"] = "0b3e6c1a-1111-2222-3333-444455556666";
  f.snapshot.attribution.metadata = meta;
  const std::string l0 = kLabels0;
  const std::string with_uid = "DCGM_FI_DEV_GPU_UTIL" + l0 +
                               ",container=\"c\",namespace=\"ns\",pod=\"a\","
                               "pod_uid=\"0b3e6c1a-1111-2222-3333-444455556666\",vgpu=\"0\"} 5\n"
                               "DCGM_FI_DEV_GPU_UTIL" +
                               l0 + ",container=\"c\",namespace=\"ns\",pod=\"b\",vgpu=\"1\"} 5\n";
  // Off by default: the metadata alone adds nothing.
  std::string out = f.Render();
  EXPECT_EQ(out.find("pod_uid"), std::string::npos) << out;
  f.options.device_pod_uid = true;
  out = f.Render();
  EXPECT_NE(out.find(with_uid), std::string::npos) << out;
  EXPECT_NE(out.find("DCGM_FI_DEV_XID_ERRORS" + l0 +
                     ",container=\"c\",err_code=\"13\",err_msg=\"Graphics Engine Exception\","
                     "namespace=\"ns\",pod=\"a\",pod_uid=\"0b3e6c1a-1111-2222-3333-444455556666\","
                     "vgpu=\"0\"} 13\n"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("pod_uid=\"\""), std::string::npos) << out;
  f.snapshot.attribution.metadata = nullptr;  // API server not answered yet
  out = f.Render();
  EXPECT_EQ(out.find("pod_uid"), std::string::npos) << out;
}

// --kubernetes-enable-pod-labels: the pod's labels (from the API server's metadata) join the
// CSV's label fields, sorted together byte-wise, before the attributes, as dcgm-exporter's
// template prints its Labels map; a label named like an attribute is dropped. The
// Xid families carry them too; a pod the metadata does not know gets none.
TEST(RenderPrometheusTest, PodLabelsOnDeviceSeries) {
  Fixture f = AttributionFixture();
  f.snapshot.attribution.devices =
      PodsOn(f.snapshot.identities->at(0).uuid, {{"ns", "a", "c", "0"}, {"ns", "b", "c", "1"}});
  auto meta = std::make_shared<model::PodMetadata>();
  meta->uid_by_name["ns/a"] = "uid-a";
  meta->by_uid["uid-a"].labels = {
      {"AAA_first", "x"}, {"app", "trainer"}, {"pod", "collides"}, {"team", "ml"}};
  f.snapshot.attribution.metadata = meta;
  const std::string fixed =
      "{gpu=\"0\",UUID=\"GPU-a1b2c3d4-1c2d-3e4f-5a6b-7c8d9e0f0000\",pci_bus_id=\"00000000:18:00."
      "0\","
      "device=\"nvidia0\",modelName=\"NVIDIA H200\"";
  const std::string a = "DCGM_FI_DEV_GPU_UTIL" + fixed +
                        ",AAA_first=\"x\",DCGM_FI_DRIVER_VERSION=\"580.159.04\",app=\"trainer\","
                        "team=\"ml\",container=\"c\",namespace=\"ns\",pod=\"a\",vgpu=\"0\"} 5\n";
  const std::string b = "DCGM_FI_DEV_GPU_UTIL" + std::string(kLabels0) +
                        ",container=\"c\",namespace=\"ns\",pod=\"b\",vgpu=\"1\"} 5\n";
  // Off by default.
  std::string out = f.Render();
  EXPECT_EQ(out.find("app=\"trainer\""), std::string::npos) << out;
  f.options.pod_labels = true;
  out = f.Render();
  EXPECT_NE(out.find(a + b), std::string::npos) << out;
  EXPECT_EQ(out.find("collides"), std::string::npos) << out;
  EXPECT_NE(
      out.find("DCGM_FI_DEV_XID_ERRORS" + fixed +
               ",AAA_first=\"x\",DCGM_FI_DRIVER_VERSION=\"580.159.04\",app=\"trainer\","
               "team=\"ml\",container=\"c\",err_code=\"13\","
               "err_msg=\"Graphics Engine Exception\",namespace=\"ns\",pod=\"a\",vgpu=\"0\"} 13\n"),
      std::string::npos)
      << out;
  EXPECT_NE(out.find("DCGM_EXP_XID_ERRORS_COUNT" + fixed +
                     ",AAA_first=\"x\",DCGM_FI_DRIVER_VERSION=\"580.159.04\",app=\"trainer\","
                     "team=\"ml\",window_size_in_ms=\"1000\",container=\"c\",namespace=\"ns\","
                     "pod=\"a\",vgpu=\"0\"} 0\n"),
            std::string::npos)
      << out;
  f.snapshot.attribution.metadata = nullptr;  // API server not answered yet
  out = f.Render();
  EXPECT_EQ(out.find("app=\"trainer\""), std::string::npos) << out;
}

// A MIG instance is attributed by its MIG UUID (DeviceKey), not by its parent GPU's UUID.
TEST(RenderPrometheusTest, MigInstanceAttributedByItsOwnUuid) {
  Fixture f = AttributionFixture();
  DeviceIdentity parent = MakeIdentity(0);
  DeviceIdentity mig = parent;
  mig.mig = DeviceIdentity::Mig{2, 0, "1g.18gb", "MIG-0f0f0f0f-0000-1111-2222-333333333333"};
  f.SetIdentities({parent, mig});
  for (DeviceSnapshot& d : f.snapshot.devices) d.samples = {{203, int64_t{5}}};
  f.snapshot.attribution.devices = PodsOn(mig.mig->uuid, {{"ns", "on-mig", "c", ""}});
  f.options.mig_gpu_fields_on_parent = true;  // the GPU's own series too
  const std::string out = f.Render();
  size_t first = out.find("DCGM_FI_DEV_GPU_UTIL{");
  size_t second = out.find("DCGM_FI_DEV_GPU_UTIL{", first + 1);
  ASSERT_NE(second, std::string::npos) << out;
  EXPECT_EQ(out.substr(first, second - first).find("pod="), std::string::npos) << out;
  EXPECT_NE(out.substr(second, out.find('\n', second) - second)
                .find(",container=\"c\",namespace=\"ns\",pod=\"on-mig\"} 5"),
            std::string::npos)
      << out;
}

// dcgm-exporter's MIG shape (the default): a MIG-enabled GPU's GPU-wide fields (here its
// temperature and last Xid) are repeated on each instance's series, with GPU_I_* and that
// instance's pod; the GPU has no DCGM series of its own (nvml_exporter_gpu_up stays per GPU).
// --mig-gpu-fields-on-parent gives them once, on the GPU.
TEST(RenderPrometheusTest, MigGpuWideFieldsOnEveryInstance) {
  Fixture f;
  f.AddEntry(150, "DCGM_FI_DEV_GPU_TEMP", MetricType::kGauge, "Temp.");
  f.AddEntry(230, "DCGM_FI_DEV_XID_ERRORS", MetricType::kGauge, "Last XID.");
  f.AddEntry(252, "DCGM_FI_DEV_FB_USED", MetricType::kGauge, "FB used.");
  f.AddEntry(9003, "DCGM_EXP_GPU_HEALTH_STATUS", MetricType::kGauge, "Health.");
  DeviceIdentity gpu = MakeIdentity(0);
  DeviceIdentity a = gpu, b = gpu;
  a.mig = DeviceIdentity::Mig{1, 0, "3g.71gb", "MIG-aaaaaaaa-0000-1111-2222-333333333333"};
  b.mig = DeviceIdentity::Mig{7, 0, "1g.18gb", "MIG-bbbbbbbb-0000-1111-2222-333333333333"};
  f.SetIdentities({gpu, a, b, MakeIdentity(1)});
  f.snapshot.devices[0].samples = {{150, int64_t{41}}, {230, int64_t{0}}};
  f.snapshot.devices[0].health = {{"MEM", "DCGM_FR_OK", 0}};
  f.snapshot.devices[1].samples = {{252, int64_t{2000}}};
  f.snapshot.devices[2].samples = {{252, int64_t{1000}}};
  f.snapshot.devices[3].samples = {{150, int64_t{38}}, {230, int64_t{0}}, {252, int64_t{7}}};
  f.snapshot.attribution.devices = PodsOn(b.mig->uuid, {{"ns", "on-b", "c", ""}});
  const std::string gpu0 =
      "{gpu=\"0\",UUID=\"GPU-a1b2c3d4-1c2d-3e4f-5a6b-7c8d9e0f0000\",pci_bus_id=\"00000000:18:00."
      "0\","
      "device=\"nvidia0\",modelName=\"NVIDIA H200\"";
  const std::string gi1 = gpu0 + ",GPU_I_PROFILE=\"3g.71gb\",GPU_I_ID=\"1\"";
  const std::string gi7 = gpu0 + ",GPU_I_PROFILE=\"1g.18gb\",GPU_I_ID=\"7\"";
  const std::string pod = ",container=\"c\",namespace=\"ns\",pod=\"on-b\"";
  std::string out = f.Render();
  EXPECT_NE(
      out.find("DCGM_FI_DEV_GPU_TEMP" + gi1 + "} 41\nDCGM_FI_DEV_GPU_TEMP" + gi7 + pod + "} 41\n"),
      std::string::npos)
      << out;
  EXPECT_NE(out.find("DCGM_FI_DEV_XID_ERRORS" + gi7 +
                     ",container=\"c\",err_code=\"0\",err_msg=\"No Error\",namespace=\"ns\","
                     "pod=\"on-b\"} 0\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("DCGM_FI_DEV_FB_USED" + gi7 + pod + "} 1000\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("DCGM_FI_DEV_GPU_TEMP" + gpu0 + "}"), std::string::npos) << out;
  EXPECT_NE(out.find("DCGM_FI_DEV_GPU_TEMP{gpu=\"1\""), std::string::npos) << "no MIG: as before";
  EXPECT_NE(out.find("nvml_exporter_gpu_up{gpu=\"0\""), std::string::npos) << out;
  // Health (and P2P) status stay on the GPU, as upstream's per-GPU collectors give them.
  EXPECT_NE(out.find("DCGM_EXP_GPU_HEALTH_STATUS" + gpu0 +
                     ",health_error_code=\"DCGM_FR_OK\",health_watch=\"MEM\"} 0\n"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("DCGM_EXP_GPU_HEALTH_STATUS" + gi1), std::string::npos) << out;

  f.options.mig_gpu_fields_on_parent = true;
  out = f.Render();
  EXPECT_NE(out.find("DCGM_FI_DEV_GPU_TEMP" + gpu0 + "} 41\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("DCGM_FI_DEV_GPU_TEMP" + gi1), std::string::npos) << out;
  EXPECT_NE(out.find("DCGM_FI_DEV_FB_USED" + gi1 + "} 2000\n"), std::string::npos) << out;
}

TEST(RenderPrometheusTest, AttributionErrorsFamily) {
  Fixture f = AttributionFixture();
  EXPECT_EQ(f.Render().find("nvml_exporter_attribution_errors_total"), std::string::npos);
  auto errors = std::make_shared<model::SourceErrors>();
  errors->Register("kubelet");
  errors->Increment("cgroup");
  errors->Increment("cgroup");
  f.options.attribution_errors = errors;
  EXPECT_NE(f.Render().find("# TYPE nvml_exporter_attribution_errors_total counter\n"
                            "nvml_exporter_attribution_errors_total{source=\"cgroup\"} 2\n"
                            "nvml_exporter_attribution_errors_total{source=\"kubelet\"} 0\n"),
            std::string::npos);
}

// Kubelet pods and per-process shares together (--kubernetes-virtual-gpus with process metrics):
// GPU_UTIL gets the bare device series plus each pod's own share (with pod_uid), never the
// device value copied per pod; other families keep one series per sharing pod.
TEST(RenderPrometheusTest, SharedGpuUtilIsPerPodShareNotCopies) {
  Fixture f = AttributionFixture();
  const std::string uuid = f.snapshot.identities->at(0).uuid;
  f.snapshot.attribution.devices =
      PodsOn(uuid, {{"ml", "a", "main", "0"}, {"ml", "b", "main", "1"}});
  f.snapshot.devices[0].processes = {{100, 1 << 20, true, 30, 0}, {200, 2 << 20, true, 10, 0}};
  auto procs = std::make_shared<model::ProcessAttribution>();
  procs->by_pid[100] = {"11111111-1111-1111-1111-111111111111", std::string(64, 'a')};
  procs->by_pid[200] = {"22222222-2222-2222-2222-222222222222", std::string(64, 'b')};
  f.snapshot.attribution.processes = procs;
  auto meta = std::make_shared<model::PodMetadata>();
  for (const auto& [name, uid, cid] :
       {std::tuple{"a", "11111111-1111-1111-1111-111111111111", std::string(64, 'a')},
        std::tuple{"b", "22222222-2222-2222-2222-222222222222", std::string(64, 'b')}}) {
    model::PodMeta m{"ml", name, uid, {}, {{cid, "main"}}};
    meta->uid_by_name[std::string("ml/") + name] = uid;
    meta->by_uid[uid] = std::move(m);
  }
  f.snapshot.attribution.metadata = meta;
  f.options.pods.enabled = true;
  f.options.pods.dcgm_per_pod_series = true;
  const std::string out = f.Render();
  const std::string l0 = kLabels0;
  EXPECT_NE(out.find("DCGM_FI_DEV_GPU_UTIL" + l0 + "} 5\n"), std::string::npos) << out;
  EXPECT_NE(out.find("DCGM_FI_DEV_GPU_UTIL" + l0 +
                     ",container=\"main\",namespace=\"ml\",pod=\"a\",pod_uid=\"11111111-1111-"
                     "1111-1111-111111111111\",vgpu=\"0\"} 30\n"),
            std::string::npos)
      << out;
  EXPECT_NE(
      out.find(",pod=\"b\",pod_uid=\"22222222-2222-2222-2222-222222222222\",vgpu=\"1\"} 10\n"),
      std::string::npos)
      << out;
  EXPECT_EQ(out.find("DCGM_FI_DEV_GPU_UTIL" + l0 +
                     ",container=\"main\",namespace=\"ml\",pod=\"a\""
                     ",vgpu=\"0\"} 5"),
            std::string::npos)
      << out;
  // Other families: one series per sharing pod, as dcgm-exporter's virtual GPUs.
  EXPECT_NE(out.find("DCGM_FI_DEV_XID_ERRORS" + l0 + ",container=\"main\",err_code=\"13\""),
            std::string::npos)
      << out;
}
}  // namespace
}  // namespace nvmlx::render
