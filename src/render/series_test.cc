#include "render/series.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace nvmlx::render {
namespace {

using collect::DeviceIdentity;
using collect::DeviceSnapshot;
using collect::Snapshot;
using config::CollectorEntry;
using config::MetricType;

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
  auto attribution = std::make_shared<attribute::DeviceAttribution>();
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
  auto attribution = std::make_shared<attribute::DeviceAttribution>();
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

}  // namespace
}  // namespace nvmlx::render
