#include "render/series.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "plan/plan_test_util.h"
#include "render/prometheus.h"

namespace nvmlx::render {
namespace {

using config::CollectorEntry;
using config::MetricType;
using model::DeviceIdentity;
using model::DeviceSnapshot;
using model::Snapshot;

struct SeriesFixture {
  std::vector<std::unique_ptr<fields::FieldDef>> defs;
  std::vector<CollectorEntry> entries;  // the collectors rows, planned into snapshot.plan
  SeriesOptions options;
  Snapshot snapshot;
  std::shared_ptr<std::vector<DeviceIdentity>> ids =
      std::make_shared<std::vector<DeviceIdentity>>();

  void Add(int id, const std::string& name, MetricType type) {
    auto d = std::make_unique<fields::FieldDef>();
    d->id = id;
    d->read = plan::testing::UnusedRead;
    CollectorEntry e;
    e.field = d.get();
    e.name = name;
    e.type = type;
    entries.push_back(e);
    defs.push_back(std::move(d));
    snapshot.plan = plan::testing::PlanOf(entries);
  }
};

std::vector<std::string> Names(const Labels& labels) {
  std::vector<std::string> out;
  for (const auto& [k, v] : labels) out.push_back(k);
  return out;
}

Labels Owned(std::span<const LabelView> set) {
  Labels out;
  for (const auto& [k, v] : set) out.emplace_back(k, v);
  return out;
}

// What one writer sees of a model: per label set with points for it, in creation order, its
// points in family order.
struct Group {
  Labels labels;
  std::vector<std::pair<const SeriesFamily*, SeriesPoint>> values;
};
std::vector<Group> GroupsFor(const SeriesModel& m, uint8_t writer) {
  std::vector<Group> groups(m.label_set_count());
  for (size_t i = 0; i < groups.size(); ++i) groups[i].labels = Owned(m.label_set(i));
  for (const SeriesFamily& f : m.families) {
    for (const SeriesPoint& p : f.points) {
      if (p.writers & writer) groups[p.label_set].values.emplace_back(&f, p);
    }
  }
  std::erase_if(groups, [](const Group& g) { return g.values.empty(); });
  return groups;
}
// The EMF writer's view: DCGM families only.
std::vector<Group> EmfGroups(const SeriesModel& m) {
  std::vector<Group> groups = GroupsFor(m, kToEmf);
  for (Group& g : groups) {
    std::erase_if(g.values, [](const auto& v) { return v.first->entry == nullptr; });
  }
  std::erase_if(groups, [](const Group& g) { return g.values.empty(); });
  return groups;
}

TEST(BuildSeriesTest, DcgmLabelOrderWithMigPodsAndXid) {
  SeriesFixture f;
  f.Add(230, "DCGM_FI_DEV_XID_ERRORS", MetricType::kGauge);
  f.Add(203, "DCGM_FI_DEV_GPU_UTIL", MetricType::kGauge);
  f.Add(1, "DCGM_FI_DRIVER_VERSION", MetricType::kLabel);
  f.Add(9001, "DCGM_EXP_XID_ERRORS_COUNT", MetricType::kGauge);
  f.Add(156, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", MetricType::kCounter);
  f.Add(203, "DCGM_FI_DEV_GPU_UTIL", MetricType::kGauge);  // repeated name: first row wins
  f.options.hostname = "node1";
  DeviceIdentity id;
  id.index = 3;
  id.uuid = "GPU-3";
  id.pci_bus_id = "00000000:3B:00.0";
  id.model_name = "NVIDIA H200";
  id.label_values = {{1, "580.159.04"}};
  id.mig = DeviceIdentity::Mig{2, 0, "1g.18gb", "MIG-abc"};
  f.ids->push_back(id);
  f.snapshot.identities = f.ids;
  DeviceSnapshot d;
  d.identity = &(*f.ids)[0];
  d.samples = {{156, int64_t{5}}, {203, int64_t{77}}, {230, int64_t{79}}};
  d.xid_watched = true;
  d.xid_counts = {{13, 2}, {79, 1}};
  f.snapshot.xid_window_ms = 300000;
  f.snapshot.devices.push_back(d);
  auto attribution = std::make_shared<model::DeviceAttribution>();
  attribution->pods_by_device["MIG-abc"] = {{"ns", "p", "c", ""}};
  f.snapshot.attribution.devices = attribution;

  SeriesModel model;
  BuildSeries(f.snapshot, f.options, &model);
  // Families: ascending id, the repeated name once, then our own (self metrics only here).
  ASSERT_GE(model.families.size(), 4u);
  EXPECT_EQ(model.families[0].name, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION");
  EXPECT_EQ(model.families[0].type, "counter");
  EXPECT_EQ(model.families[1].name, "DCGM_FI_DEV_GPU_UTIL");
  EXPECT_EQ(model.families[2].name, "DCGM_FI_DEV_XID_ERRORS");
  EXPECT_EQ(model.families[3].name, "DCGM_EXP_XID_ERRORS_COUNT");
  EXPECT_EQ(model.families[4].name, "nvml_exporter_collect_duration_seconds");
  EXPECT_EQ(model.families[4].entry, nullptr);

  std::vector<Group> groups = EmfGroups(model);
  ASSERT_EQ(groups.size(), 4u);  // plain, XID last, two XID counts
  EXPECT_EQ(Names(groups[0].labels),
            (std::vector<std::string>{"gpu", "UUID", "pci_bus_id", "device", "modelName",
                                      "GPU_I_PROFILE", "GPU_I_ID", "hostname",
                                      "DCGM_FI_DRIVER_VERSION", "container", "namespace", "pod"}));
  EXPECT_EQ(*FindLabel(groups[0].labels, "device"), "nvidia3");
  EXPECT_EQ(*FindLabel(groups[0].labels, "GPU_I_PROFILE"), "1g.18gb");
  EXPECT_EQ(*FindLabel(groups[0].labels, "GPU_I_ID"), "2");
  ASSERT_EQ(groups[0].values.size(), 2u);  // ascending id: energy, util
  EXPECT_EQ(groups[0].values[0].first->name, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION");
  EXPECT_EQ(groups[0].values[1].second.int_value, 77);
  EXPECT_EQ(
      Names(groups[1].labels),
      (std::vector<std::string>{"gpu", "UUID", "pci_bus_id", "device", "modelName", "GPU_I_PROFILE",
                                "GPU_I_ID", "hostname", "DCGM_FI_DRIVER_VERSION", "container",
                                "err_code", "err_msg", "namespace", "pod"}));
  EXPECT_EQ(*FindLabel(groups[1].labels, "err_code"), "79");
  EXPECT_EQ(
      Names(groups[2].labels),
      (std::vector<std::string>{"gpu", "UUID", "pci_bus_id", "device", "modelName", "GPU_I_PROFILE",
                                "GPU_I_ID", "hostname", "DCGM_FI_DRIVER_VERSION",
                                "window_size_in_ms", "xid", "container", "namespace", "pod"}));
  EXPECT_EQ(*FindLabel(groups[3].labels, "xid"), "79");
  EXPECT_EQ(groups[3].values[0].second.int_value, 1);

  // Without attribution: no pod labels; -o spells uuid.
  f.snapshot.attribution.devices = nullptr;
  f.options.use_old_namespace = true;
  f.options.hostname.clear();
  BuildSeries(f.snapshot, f.options, &model);
  groups = EmfGroups(model);
  EXPECT_EQ(Names(groups[0].labels),
            (std::vector<std::string>{"gpu", "uuid", "pci_bus_id", "device", "modelName",
                                      "GPU_I_PROFILE", "GPU_I_ID", "DCGM_FI_DRIVER_VERSION"}));
}

// dcgm-exporter 4.8.3's _TOTAL families: TYPE counter from the row, one series per value seen
// with only xid or clock_event added (no window_size_in_ms), nothing for a device without
// events, and the _COUNT family beside them unchanged.
TEST(BuildSeriesTest, TotalCountersOneSeriesPerValueSeen) {
  SeriesFixture f;
  f.Add(9006, "DCGM_EXP_CLOCK_EVENTS_TOTAL", MetricType::kCounter);
  f.Add(9001, "DCGM_EXP_XID_ERRORS_COUNT", MetricType::kGauge);
  f.Add(9005, "DCGM_EXP_XID_ERRORS_TOTAL", MetricType::kCounter);
  for (unsigned i = 0; i < 2; ++i) {
    DeviceIdentity id;
    id.index = i;
    id.uuid = "GPU-" + std::to_string(i);
    id.model_name = "NVIDIA H200";
    f.ids->push_back(id);
  }
  f.snapshot.identities = f.ids;
  f.snapshot.xid_window_ms = 300000;
  DeviceSnapshot d0;
  d0.identity = &(*f.ids)[0];
  d0.xid_watched = true;
  d0.xid_totals = {{13, 3}, {48, 1}};
  d0.clock_event_totals = {{0x4, 2}, {0x40, 1}};
  DeviceSnapshot d1;  // watched, nothing happened yet
  d1.identity = &(*f.ids)[1];
  d1.xid_watched = true;
  f.snapshot.devices = {d0, d1};

  SeriesModel model;
  BuildSeries(f.snapshot, f.options, &model);
  ASSERT_GE(model.families.size(), 3u);
  EXPECT_EQ(model.families[0].name, "DCGM_EXP_XID_ERRORS_COUNT");
  EXPECT_EQ(model.families[0].type, "gauge");
  EXPECT_EQ(model.families[0].points.size(), 2u) << "one 0 series per watched GPU";
  EXPECT_EQ(model.families[1].name, "DCGM_EXP_XID_ERRORS_TOTAL");
  EXPECT_EQ(model.families[1].type, "counter");
  EXPECT_EQ(model.families[2].name, "DCGM_EXP_CLOCK_EVENTS_TOTAL");
  EXPECT_EQ(model.families[2].type, "counter");

  std::string page;
  RenderPrometheus(model, &page);
  EXPECT_NE(page.find("# TYPE DCGM_EXP_XID_ERRORS_TOTAL counter\n"), std::string::npos) << page;
  EXPECT_NE(page.find("# TYPE DCGM_EXP_CLOCK_EVENTS_TOTAL counter\n"), std::string::npos) << page;
  const std::string base =
      "{gpu=\"0\",UUID=\"GPU-0\",pci_bus_id=\"\",device=\"nvidia0\",modelName=\"NVIDIA H200\",";
  for (const std::string& line :
       {"DCGM_EXP_XID_ERRORS_TOTAL" + base + "xid=\"13\"} 3\n",
        "DCGM_EXP_XID_ERRORS_TOTAL" + base + "xid=\"48\"} 1\n",
        "DCGM_EXP_CLOCK_EVENTS_TOTAL" + base + "clock_event=\"power_cap\"} 2\n",
        "DCGM_EXP_CLOCK_EVENTS_TOTAL" + base + "clock_event=\"hw_thermal\"} 1\n"}) {
    EXPECT_NE(page.find(line), std::string::npos) << line << page;
  }
  EXPECT_EQ(page.find("DCGM_EXP_XID_ERRORS_TOTAL{gpu=\"1\""), std::string::npos)
      << "no series before the first Xid";
  EXPECT_EQ(page.find("DCGM_EXP_CLOCK_EVENTS_TOTAL{gpu=\"1\""), std::string::npos);

  // Nothing seen anywhere: both families are left out, HELP and TYPE included.
  f.snapshot.devices = {d1};
  BuildSeries(f.snapshot, f.options, &model);
  RenderPrometheus(model, &page);
  EXPECT_EQ(page.find("DCGM_EXP_XID_ERRORS_TOTAL"), std::string::npos) << page;
  EXPECT_EQ(page.find("DCGM_EXP_CLOCK_EVENTS_TOTAL"), std::string::npos) << page;
  EXPECT_NE(page.find("DCGM_EXP_XID_ERRORS_COUNT{"), std::string::npos);
}

TEST(BuildSeriesTest, SharedGpuGetsOneCopyPerPodAndStringsAreSkipped) {
  SeriesFixture f;
  f.Add(203, "DCGM_FI_DEV_GPU_UTIL", MetricType::kGauge);
  f.Add(50, "DCGM_FI_DEV_NAME", MetricType::kGauge);  // a string value in a metric row
  DeviceIdentity id;
  id.uuid = "GPU-0";
  f.ids->push_back(id);
  f.snapshot.identities = f.ids;
  DeviceSnapshot d;
  d.identity = &(*f.ids)[0];
  d.samples = {{50, std::string("H200")}, {203, 1.5}};
  f.snapshot.devices.push_back(d);
  auto attribution = std::make_shared<model::DeviceAttribution>();
  attribution->pods_by_device["GPU-0"] = {{"a", "p1", "c", "0"}, {"b", "p2", "c", "1"}};
  f.snapshot.attribution.devices = attribution;
  SeriesModel model;
  BuildSeries(f.snapshot, f.options, &model);
  EXPECT_EQ(model.families[0].name, "DCGM_FI_DEV_GPU_UTIL");  // DCGM_FI_DEV_NAME: no series
  EXPECT_EQ(model.families[1].entry, nullptr);
  std::vector<Group> groups = EmfGroups(model);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(*FindLabel(groups[0].labels, "pod"), "p1");
  EXPECT_EQ(*FindLabel(groups[1].labels, "namespace"), "b");
  ASSERT_EQ(groups[1].values.size(), 1u);
  EXPECT_FALSE(groups[1].values[0].second.is_integer());
  EXPECT_DOUBLE_EQ(groups[1].values[0].second.AsDouble(), 1.5);
  f.snapshot.devices[0].up = false;
  BuildSeries(f.snapshot, f.options, &model);
  EXPECT_TRUE(EmfGroups(model).empty());
}

// DRA holders (--kubernetes-enable-dra): dcgm-exporter's attributes, sorted byte-wise among
// container/namespace/pod, the two MIG ones only for a MIG device; no vgpu; pod_uid (with
// --kubernetes-enable-pod-uid) and the pod labels (with --kubernetes-enable-pod-labels) as on a
// device-plugin holder, as dcgm-exporter 4.8.4 (upstream #718).
TEST(BuildSeriesTest, DraHoldersGetTheDraLabels) {
  SeriesFixture f;
  f.Add(203, "DCGM_FI_DEV_GPU_UTIL", MetricType::kGauge);
  f.options.device_pod_uid = true;
  DeviceIdentity gpu;
  gpu.index = 0;
  gpu.uuid = "GPU-0";
  f.ids->push_back(gpu);
  DeviceIdentity mig;
  mig.index = 1;
  mig.uuid = "GPU-1";
  mig.mig = DeviceIdentity::Mig{3, 0, "1g.18gb", "MIG-1"};
  f.ids->push_back(mig);
  f.snapshot.identities = f.ids;
  for (size_t i = 0; i < f.ids->size(); ++i) {
    DeviceSnapshot d;
    d.identity = &(*f.ids)[i];
    d.samples = {{203, int64_t{static_cast<int64_t>(10 + i)}}};
    f.snapshot.devices.push_back(d);
  }
  auto attribution = std::make_shared<model::DeviceAttribution>();
  model::PodRef whole{"ns", "train", "main", "", model::DraAllocation{}};
  whole.dra = model::DraAllocation{"gpu-claim", "ns", "gpu.nvidia.com", "node1", "gpu-0", "", ""};
  model::PodRef part{"ns2", "infer", "c", "", std::nullopt};
  part.dra = model::DraAllocation{"mig-claim",   "ns2",     "gpu.nvidia.com", "node1",
                                  "gpu-1-mig-3", "1g.18gb", "MIG-1"};
  attribution->pods_by_device["GPU-0"] = {whole};
  attribution->pods_by_device["MIG-1"] = {part};
  f.snapshot.attribution.devices = attribution;
  auto metadata = std::make_shared<model::PodMetadata>();
  metadata->uid_by_name["ns/train"] = "uid-1";
  metadata->by_uid["uid-1"] = {"ns", "train", "uid-1", {{"app", "x"}}, {}};
  f.snapshot.attribution.metadata = metadata;
  f.options.pod_labels = true;

  SeriesModel model;
  BuildSeries(f.snapshot, f.options, &model);
  std::vector<Group> groups = EmfGroups(model);
  ASSERT_EQ(groups.size(), 2u);
  // The pod label sorts with the CSV labels, before the attributes; pod_uid among them.
  EXPECT_EQ(Names(groups[0].labels),
            (std::vector<std::string>{"gpu", "UUID", "pci_bus_id", "device", "modelName", "app",
                                      "container", "dra_claim_name", "dra_claim_namespace",
                                      "dra_device_name", "dra_driver_name", "dra_pool_name",
                                      "namespace", "pod", "pod_uid"}));
  EXPECT_EQ(*FindLabel(groups[0].labels, "pod_uid"), "uid-1");
  EXPECT_EQ(*FindLabel(groups[0].labels, "app"), "x");
  EXPECT_EQ(*FindLabel(groups[0].labels, "dra_claim_name"), "gpu-claim");
  EXPECT_EQ(*FindLabel(groups[0].labels, "dra_device_name"), "gpu-0");
  EXPECT_EQ(*FindLabel(groups[0].labels, "pod"), "train");
  EXPECT_EQ(
      Names(groups[1].labels),
      (std::vector<std::string>{"gpu", "UUID", "pci_bus_id", "device", "modelName", "GPU_I_PROFILE",
                                "GPU_I_ID", "container", "dra_claim_name", "dra_claim_namespace",
                                "dra_device_name", "dra_driver_name", "dra_mig_device_uuid",
                                "dra_mig_profile", "dra_pool_name", "namespace", "pod"}));
  EXPECT_EQ(*FindLabel(groups[1].labels, "dra_mig_device_uuid"), "MIG-1");
  EXPECT_EQ(*FindLabel(groups[1].labels, "dra_mig_profile"), "1g.18gb");
  EXPECT_EQ(*FindLabel(groups[1].labels, "dra_claim_namespace"), "ns2");
  EXPECT_EQ(groups[1].values[0].second.AsDouble(), 11);

  // Both off: the DRA copy has neither (the API server's metadata alone adds nothing).
  f.options.device_pod_uid = false;
  f.options.pod_labels = false;
  BuildSeries(f.snapshot, f.options, &model);
  groups = EmfGroups(model);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(FindLabel(groups[0].labels, "pod_uid"), nullptr);
  EXPECT_EQ(FindLabel(groups[0].labels, "app"), nullptr);
  EXPECT_NE(FindLabel(groups[0].labels, "dra_claim_name"), nullptr);
  f.options.device_pod_uid = true;
  f.options.pod_labels = true;

  // The same holder through the device plugin gets pod_uid and its pod labels.
  whole.dra.reset();
  attribution->pods_by_device["GPU-0"] = {whole};
  BuildSeries(f.snapshot, f.options, &model);
  groups = EmfGroups(model);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(FindLabel(groups[0].labels, "dra_claim_name"), nullptr);
  ASSERT_NE(FindLabel(groups[0].labels, "pod_uid"), nullptr);
  EXPECT_EQ(*FindLabel(groups[0].labels, "pod_uid"), "uid-1");
}

// dcgm-exporter 4.8's per-pod GPU_UTIL/FB_USED: on the Prometheus page the device series has no
// attributes and each pod gets its share; EMF keeps the device value per attribute set.
TEST(BuildSeriesTest, PerPodSeriesArePrometheusOnly) {
  SeriesFixture f;
  f.Add(203, "DCGM_FI_DEV_GPU_UTIL", MetricType::kGauge);
  f.Add(150, "DCGM_FI_DEV_GPU_TEMP", MetricType::kGauge);
  f.options.pods.enabled = true;
  f.options.pods.dcgm_per_pod_series = true;
  f.options.pods.families = true;
  DeviceIdentity id;
  id.uuid = "GPU-0";
  f.ids->push_back(id);
  id.index = 1;
  id.uuid = "GPU-1";
  f.ids->push_back(id);
  f.snapshot.identities = f.ids;
  for (unsigned g = 0; g < 2; ++g) {
    DeviceSnapshot d;
    d.identity = &(*f.ids)[g];
    d.samples = {{150, int64_t{40 + g}}, {203, int64_t{90 + g}}};
    f.snapshot.devices.push_back(d);
  }
  f.snapshot.devices[0].processes = {{100, 1 << 20, true, 30, 0}, {200, 2 << 20, true, 50, 0}};
  auto pods = std::make_shared<model::DeviceAttribution>();
  pods->pods_by_device["GPU-0"] = {{"a", "p1", "c", "0"}, {"b", "p2", "c", "1"}};
  f.snapshot.attribution.devices = pods;
  SeriesModel model;
  BuildSeries(f.snapshot, f.options, &model);

  // EMF: per attribute set of GPU-0 both fields with the device value; GPU-1 plain.
  std::vector<Group> emf = EmfGroups(model);
  ASSERT_EQ(emf.size(), 3u);
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_EQ(emf[i].values.size(), 2u);
    EXPECT_EQ(emf[i].values[0].first->name, "DCGM_FI_DEV_GPU_TEMP");
    EXPECT_EQ(emf[i].values[1].first->name, "DCGM_FI_DEV_GPU_UTIL");
    EXPECT_EQ(emf[i].values[1].second.int_value, 90);
  }
  EXPECT_EQ(*FindLabel(emf[1].labels, "pod"), "p2");
  EXPECT_EQ(FindLabel(emf[2].labels, "pod"), nullptr);
  EXPECT_EQ(emf[2].values[1].second.int_value, 91);

  // Prometheus: GPU_UTIL of GPU-0 once without attributes, then one series per pod (0 SM %:
  // the processes are not attributed), then GPU-1's.
  const SeriesFamily& util = model.families[1];
  ASSERT_EQ(util.name, "DCGM_FI_DEV_GPU_UTIL");
  std::vector<const SeriesPoint*> page;
  for (const SeriesPoint& p : util.points) {
    if (p.writers & kToPrometheus) page.push_back(&p);
  }
  ASSERT_EQ(page.size(), 4u);
  EXPECT_EQ(Names(Owned(model.label_set(page[0]->label_set))),
            (std::vector<std::string>{"gpu", "UUID", "pci_bus_id", "device", "modelName"}));
  EXPECT_EQ(page[0]->int_value, 90);
  EXPECT_EQ(*FindLabel(Owned(model.label_set(page[1]->label_set)), "pod_uid"), "");
  EXPECT_EQ(*FindLabel(Owned(model.label_set(page[2]->label_set)), "vgpu"), "1");
  EXPECT_EQ(page[2]->kind, SeriesPoint::Kind::kUint);
  EXPECT_EQ(page[3]->int_value, 91);
  EXPECT_EQ(page[3]->writers, kToBoth);  // GPU-1's plain label set is its bare one

  // Our own families follow, none of them for EMF.
  bool pod_family = false;
  for (const SeriesFamily& fam : model.families) {
    if (fam.name == "nvml_exporter_pod_gpu_processes") pod_family = true;
    if (fam.entry == nullptr) {
      for (const SeriesPoint& p : fam.points) EXPECT_EQ(p.writers, kToPrometheus) << fam.name;
    }
  }
  EXPECT_TRUE(pod_family);

  // --kubernetes-virtual-gpus without our flag: the same DCGM points, none of our pod families.
  f.options.pods.families = false;
  SeriesModel alone;
  BuildSeries(f.snapshot, f.options, &alone);
  ASSERT_FALSE(alone.families.empty());
  EXPECT_EQ(alone.families[0].points.size(), model.families[0].points.size());
  for (const SeriesFamily& fam : alone.families) {
    EXPECT_EQ(fam.name.find("nvml_exporter_pod_"), std::string_view::npos) << fam.name;
    EXPECT_NE(fam.name, "nvml_exporter_gpu_processes");
  }
}

// Two MIG-enabled GPUs in dcgm-exporter's MIG shape, each instance with a process: our per-GPU
// process families name each instance's own GPU. (Each instance's series are built from a view
// of it with its GPU's fields; the per-pod families read those views after all devices, so each
// instance needs a view of its own: one view reused for every instance gave all of them the
// last instance's gpu label.)
TEST(BuildSeriesTest, EachMigInstanceKeepsItsOwnGpuInThePodFamilies) {
  SeriesFixture f;
  f.Add(150, "DCGM_FI_DEV_GPU_TEMP", MetricType::kGauge);
  f.options.pods.enabled = true;
  f.options.pods.families = true;
  for (unsigned g = 0; g < 2; ++g) {
    DeviceIdentity gpu;
    gpu.index = g;
    gpu.uuid = "GPU-" + std::to_string(g);
    f.ids->push_back(gpu);
    DeviceIdentity inst = gpu;
    inst.mig = DeviceIdentity::Mig{1, 0, "1g.18gb", "MIG-" + std::to_string(g)};
    f.ids->push_back(inst);
  }
  f.snapshot.identities = f.ids;
  for (size_t i = 0; i < f.ids->size(); ++i) {
    DeviceSnapshot d;
    d.identity = &(*f.ids)[i];
    if (i % 2 == 0) {
      d.samples = {{150, int64_t{40}}};  // the GPU: GPU-wide fields
    } else {
      d.processes = {{static_cast<unsigned>(100 + i), 1 << 20, true, 10, 0}};
    }
    f.snapshot.devices.push_back(d);
  }
  SeriesModel model;
  BuildSeries(f.snapshot, f.options, &model);
  const SeriesFamily* processes = nullptr;
  for (const SeriesFamily& fam : model.families) {
    if (fam.name == "nvml_exporter_gpu_processes") processes = &fam;
  }
  ASSERT_NE(processes, nullptr);
  // One point per live device, in Snapshot order: GPU 0, its instance, GPU 1, its instance.
  ASSERT_EQ(processes->points.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    const Labels labels = Owned(model.label_set(processes->points[i].label_set));
    EXPECT_EQ(*FindLabel(labels, "gpu"), std::to_string(i / 2)) << "device " << i;
    EXPECT_EQ(*FindLabel(labels, "UUID"), "GPU-" + std::to_string(i / 2)) << "device " << i;
    EXPECT_EQ(processes->points[i].uint_value, i % 2) << "device " << i;
  }
}

TEST(SeriesModelTest, InternedTextStaysValidAsTheArenaGrows) {
  SeriesModel m;
  std::vector<std::string_view> views;
  std::vector<std::string> want;
  for (int i = 0; i < 3000; ++i) {
    want.push_back(std::string(static_cast<size_t>(i % 37), 'x') + std::to_string(i));
    views.push_back(m.Intern(want.back()));
  }
  views.push_back(m.Intern(std::string(10000, 'y')));  // larger than a chunk
  want.push_back(std::string(10000, 'y'));
  for (size_t i = 0; i < views.size(); ++i) ASSERT_EQ(views[i], want[i]);
  const LabelView a[] = {{"a", m.InternInt(-12)}};
  const LabelView b[] = {{"b", "1"}, {"c", "2"}};
  EXPECT_EQ(m.AddLabelSet(a), 0u);
  EXPECT_EQ(m.AddLabelSet({}), 1u);
  EXPECT_EQ(m.AddLabelSet(b), 2u);
  EXPECT_EQ(m.label_set(0)[0].second, "-12");
  EXPECT_TRUE(m.label_set(1).empty());
  EXPECT_EQ(m.label_set(2).size(), 2u);
  m.Clear();
  EXPECT_EQ(m.label_set_count(), 0u);
  EXPECT_EQ(m.Intern("again"), "again");
}

}  // namespace
}  // namespace nvmlx::render
