#include "render/series.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "fields/catalog.h"
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
  SeriesOptions options;
  Snapshot snapshot;
  std::shared_ptr<std::vector<DeviceIdentity>> ids =
      std::make_shared<std::vector<DeviceIdentity>>();

  void Add(int id, const std::string& name, MetricType type) {
    auto d = std::make_unique<fields::FieldDef>();
    d->id = id;
    CollectorEntry e;
    e.field = d.get();
    e.name = name;
    e.type = type;
    options.entries.push_back(e);
    defs.push_back(std::move(d));
  }
};

std::vector<std::string> Names(const Labels& labels) {
  std::vector<std::string> out;
  for (const auto& [k, v] : labels) out.push_back(k);
  return out;
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

  std::vector<SeriesGroup> groups;
  BuildSeries(f.snapshot, f.options, &groups);
  ASSERT_EQ(groups.size(), 4u);  // plain, XID last, two XID counts
  EXPECT_EQ(Names(groups[0].labels),
            (std::vector<std::string>{"gpu", "UUID", "pci_bus_id", "device", "modelName",
                                      "GPU_I_PROFILE", "GPU_I_ID", "Hostname",
                                      "DCGM_FI_DRIVER_VERSION", "container", "namespace", "pod"}));
  EXPECT_EQ(*FindLabel(groups[0].labels, "device"), "nvidia3");
  EXPECT_EQ(*FindLabel(groups[0].labels, "GPU_I_PROFILE"), "1g.18gb");
  EXPECT_EQ(*FindLabel(groups[0].labels, "GPU_I_ID"), "2");
  ASSERT_EQ(groups[0].values.size(), 2u);  // ascending id: energy, util
  EXPECT_EQ(groups[0].values[0].entry->name, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION");
  EXPECT_TRUE(groups[0].values[0].counter());
  EXPECT_EQ(groups[0].values[1].int_value, 77);
  EXPECT_EQ(
      Names(groups[1].labels),
      (std::vector<std::string>{"gpu", "UUID", "pci_bus_id", "device", "modelName", "GPU_I_PROFILE",
                                "GPU_I_ID", "Hostname", "DCGM_FI_DRIVER_VERSION", "container",
                                "err_code", "err_msg", "namespace", "pod"}));
  EXPECT_EQ(*FindLabel(groups[1].labels, "err_code"), "79");
  EXPECT_EQ(
      Names(groups[2].labels),
      (std::vector<std::string>{"gpu", "UUID", "pci_bus_id", "device", "modelName", "GPU_I_PROFILE",
                                "GPU_I_ID", "Hostname", "DCGM_FI_DRIVER_VERSION",
                                "window_size_in_ms", "xid", "container", "namespace", "pod"}));
  EXPECT_EQ(*FindLabel(groups[3].labels, "xid"), "79");
  EXPECT_EQ(groups[3].values[0].int_value, 1);

  // Without attribution: no pod labels; -o spells uuid.
  f.snapshot.attribution.devices = nullptr;
  f.options.use_old_namespace = true;
  f.options.hostname.clear();
  BuildSeries(f.snapshot, f.options, &groups);
  EXPECT_EQ(Names(groups[0].labels),
            (std::vector<std::string>{"gpu", "uuid", "pci_bus_id", "device", "modelName",
                                      "GPU_I_PROFILE", "GPU_I_ID", "DCGM_FI_DRIVER_VERSION"}));
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
  std::vector<SeriesGroup> groups;
  BuildSeries(f.snapshot, f.options, &groups);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(*FindLabel(groups[0].labels, "pod"), "p1");
  EXPECT_EQ(*FindLabel(groups[1].labels, "namespace"), "b");
  ASSERT_EQ(groups[1].values.size(), 1u);
  EXPECT_FALSE(groups[1].values[0].is_integer);
  EXPECT_DOUBLE_EQ(groups[1].values[0].value, 1.5);
  f.snapshot.devices[0].up = false;
  BuildSeries(f.snapshot, f.options, &groups);
  EXPECT_TRUE(groups.empty());
}

// The two renderers must agree on what a series is: every sample line of the Prometheus page
// (families of the default CSV, with XID families and counts) is a series of BuildSeries with
// the same name, the same labels in the same order, and the same value, and nothing more. When
// pod or MIG labels are added to one renderer, this fails until the other has them too.
struct Line {
  std::string name;
  Labels labels;
  double value = 0;
};

std::vector<Line> ParsePage(const std::string& page) {
  std::vector<Line> out;
  std::istringstream in(page);
  std::string l;
  while (std::getline(in, l)) {
    if (l.empty() || l[0] == '#' || l.rfind("nvml_exporter_", 0) == 0) continue;
    Line line;
    const size_t brace = l.find('{');
    const size_t close = l.rfind('}');
    line.name = l.substr(0, brace);
    std::string body = l.substr(brace + 1, close - brace - 1);
    size_t at = 0;
    while (at < body.size()) {
      const size_t eq = body.find("=\"", at);
      const size_t end = body.find('"', eq + 2);  // the fixture has no escaped quotes
      line.labels.emplace_back(body.substr(at, eq - at), body.substr(eq + 2, end - eq - 2));
      at = end + 2;  // past `",`
    }
    line.value = std::stod(l.substr(close + 2));
    out.push_back(std::move(line));
  }
  return out;
}

TEST(BuildSeriesTest, AgreesWithThePrometheusRenderer) {
  SeriesFixture f;
  auto rows = config::LoadCollectorsCsv(NVMLX_SOURCE_DIR "/etc/default-counters.csv");
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  f.options.entries = *rows;
  CollectorEntry counts;  // commented out in the default CSV; its series have their own labels
  counts.field = fields::FindByName("DCGM_EXP_XID_ERRORS_COUNT");
  ASSERT_NE(counts.field, nullptr);
  counts.name = "DCGM_EXP_XID_ERRORS_COUNT";
  f.options.entries.push_back(counts);
  CollectorEntry events;  // likewise: clock_event and window_size_in_ms
  events.field = fields::FindByName("DCGM_EXP_CLOCK_EVENTS_COUNT");
  ASSERT_NE(events.field, nullptr);
  events.name = "DCGM_EXP_CLOCK_EVENTS_COUNT";
  f.options.entries.push_back(events);
  for (unsigned g = 0; g < 4; ++g) {
    DeviceIdentity id;
    id.index = g;
    id.uuid = "GPU-" + std::to_string(g);
    id.pci_bus_id = "00000000:1" + std::to_string(g) + ":00.0";
    id.model_name = "NVIDIA H200";
    id.label_values = {{1, "580.159.04"}};
    // The fourth is a MIG instance of the third GPU (its parent's first five labels).
    if (g == 3) {
      id.index = 2;
      id.uuid = "GPU-2";
      id.pci_bus_id = "00000000:12:00.0";
      id.mig = DeviceIdentity::Mig{5, 0, "3g.71gb", "MIG-5"};
    }
    f.ids->push_back(id);
  }
  f.snapshot.identities = f.ids;
  f.snapshot.xid_window_ms = 300000;
  f.snapshot.clock_events_window_ms = 60000;
  for (unsigned g = 0; g < 4; ++g) {
    DeviceSnapshot d;
    d.identity = &(*f.ids)[g];
    for (const auto& row : f.options.entries) {
      if (row.type == MetricType::kLabel || row.field->id >= 9001) continue;
      if (row.field->kind == fields::ValueKind::kDouble) {
        d.samples.push_back({row.field->id, 1.5 + g});
      } else {
        d.samples.push_back({row.field->id, int64_t{row.field->id % 97 + g}});
      }
    }
    std::sort(d.samples.begin(), d.samples.end(),
              [](const auto& a, const auto& b) { return a.field_id < b.field_id; });
    d.xid_watched = g != 1;
    if (g == 2) d.xid_counts = {{13, 4}, {79, 1}};
    // Clock events: reasons seen (0), watched without a sample (2), sampled with none active
    // (3: no series), not watched (1).
    d.clock_events_watched = g != 1;
    d.clock_events_sampled = g != 2;
    if (g == 0) d.clock_event_counts = {{0x1, 7}, {0x4, 2}};
    f.snapshot.devices.push_back(std::move(d));
  }
  // GPU-0 shared by two pods (vgpu replicas); GPU-1 held by one pod and listed for two HPC jobs
  // (one series per (pod, job)); GPU-2 unattributed; the MIG instance held by a pod and a job.
  auto pods = std::make_shared<model::DeviceAttribution>();
  pods->pods_by_device["GPU-0"] = {{"ns-a", "pod-a", "main", "0"}, {"ns-b", "pod-b", "side", "1"}};
  pods->pods_by_device["GPU-1"] = {{"ns-c", "pod-c", "train", ""}};
  pods->pods_by_device["MIG-5"] = {{"ns-d", "pod-d", "infer", ""}};
  auto hpc = std::make_shared<model::HpcJobs>();
  hpc->jobs_by_device["GPU-1"] = {"job-1", "job-2"};
  hpc->jobs_by_device["MIG-5"] = {"job-3"};
  f.snapshot.attribution.devices = pods;
  f.snapshot.attribution.hpc = hpc;
  // --kubernetes-enable-pod-uid: pod_uid from the API server's metadata (pod-b unknown to it).
  auto meta = std::make_shared<model::PodMetadata>();
  meta->uid_by_name["ns-a/pod-a"] = "uid-a";
  meta->uid_by_name["ns-d/pod-d"] = "uid-d";
  f.snapshot.attribution.metadata = meta;
  f.options.pod_uid = true;
  for (bool old_namespace : {false, true}) {
    for (const char* hostname : {"node1", ""}) {
      f.options.use_old_namespace = old_namespace;
      f.options.hostname = hostname;
      PrometheusOptions p;
      p.entries = f.options.entries;
      p.hostname = f.options.hostname;
      p.use_old_namespace = old_namespace;
      p.device_pod_uid = f.options.pod_uid;
      std::string page;
      RenderPrometheus(f.snapshot, p, &page);
      std::vector<Line> lines = ParsePage(page);
      std::vector<SeriesGroup> groups;
      BuildSeries(f.snapshot, f.options, &groups);
      std::vector<Line> series;
      for (const SeriesGroup& g : groups) {
        for (const SeriesValue& v : g.values) series.push_back({v.entry->name, g.labels, v.value});
      }
      auto key = [](const Line& l) {
        std::string k = l.name;
        for (const auto& [n, v] : l.labels) k += "|" + n + "=" + v;
        return k;
      };
      std::map<std::string, double> a, b;
      for (const Line& l : lines) a[key(l)] = l.value;
      for (const Line& l : series) b[key(l)] = l.value;
      ASSERT_GT(a.size(), 50u);
      EXPECT_EQ(lines.size(), a.size());  // no duplicates
      EXPECT_EQ(series.size(), b.size());
      for (const auto& [k, v] : a) {
        auto it = b.find(k);
        ASSERT_NE(it, b.end()) << "only on the Prometheus page: " << k;
        EXPECT_NEAR(it->second, v, 1e-6) << k;
      }
      for (const auto& [k, v] : b) EXPECT_TRUE(a.count(k)) << "only in BuildSeries: " << k;
      // The cases above are really there (a fixture change must not make the test vacuous).
      auto has = [&](const std::string& part) {
        return std::any_of(a.begin(), a.end(), [&](const auto& kv) {
          return kv.first.find(part) != std::string::npos;
        });
      };
      EXPECT_TRUE(has("|vgpu=1"));
      EXPECT_TRUE(has("|pod_uid=uid-a|vgpu=0"));
      EXPECT_TRUE(has("|hpc_job=job-2"));
      EXPECT_TRUE(has("|GPU_I_PROFILE=3g.71gb|GPU_I_ID=5"));
      EXPECT_TRUE(has("|clock_event=power_cap|window_size_in_ms=60000"));
      EXPECT_TRUE(has(old_namespace ? "|pod_name=pod-d" : "|pod=pod-d"));
    }
  }
}

}  // namespace
}  // namespace nvmlx::render
