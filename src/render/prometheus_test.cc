#include "render/prometheus.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "fields/xid_text.h"
#include "render/text_format.h"

namespace nvmlx::render {
namespace {

using config::CollectorEntry;
using config::MetricType;
using fields::FieldDef;
using fields::ValueKind;
using model::DeviceIdentity;
using model::DeviceSnapshot;
using model::Snapshot;

// The 26 active rows of dcgm-exporter's etc/default-counters.csv, in the file's order (which is
// not ascending id: 526 precedes 393, and the label row sits in the middle). FieldDefs are made
// by hand so these tests depend on the catalog's ids only, not on its implementation.
struct Row {
  int id;
  const char* name;
  MetricType type;
  ValueKind kind;
  const char* help;
};
constexpr Row kDefaultRows[] = {
    {100, "DCGM_FI_DEV_SM_CLOCK", MetricType::kGauge, ValueKind::kInt64,
     "SM clock frequency (in MHz)."},
    {101, "DCGM_FI_DEV_MEM_CLOCK", MetricType::kGauge, ValueKind::kInt64,
     "Memory clock frequency (in MHz)."},
    {140, "DCGM_FI_DEV_MEMORY_TEMP", MetricType::kGauge, ValueKind::kInt64,
     "Memory temperature (in C)."},
    {150, "DCGM_FI_DEV_GPU_TEMP", MetricType::kGauge, ValueKind::kInt64, "GPU temperature (in C)."},
    {155, "DCGM_FI_DEV_POWER_USAGE", MetricType::kGauge, ValueKind::kDouble, "Power draw (in W)."},
    {156, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", MetricType::kCounter, ValueKind::kInt64,
     "Total energy consumption since boot (in mJ)."},
    {202, "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", MetricType::kCounter, ValueKind::kInt64,
     "Total number of PCIe retries."},
    {203, "DCGM_FI_DEV_GPU_UTIL", MetricType::kGauge, ValueKind::kInt64, "GPU utilization (in %)."},
    {204, "DCGM_FI_DEV_MEM_COPY_UTIL", MetricType::kGauge, ValueKind::kInt64,
     "Memory utilization (in %)."},
    {206, "DCGM_FI_DEV_ENC_UTIL", MetricType::kGauge, ValueKind::kInt64,
     "Encoder utilization (in %)."},
    {207, "DCGM_FI_DEV_DEC_UTIL", MetricType::kGauge, ValueKind::kInt64,
     "Decoder utilization (in %)."},
    {230, "DCGM_FI_DEV_XID_ERRORS", MetricType::kGauge, ValueKind::kInt64,
     "Value of the last XID error encountered."},
    {251, "DCGM_FI_DEV_FB_FREE", MetricType::kGauge, ValueKind::kInt64,
     "Framebuffer memory free (in MiB)."},
    {252, "DCGM_FI_DEV_FB_USED", MetricType::kGauge, ValueKind::kInt64,
     "Framebuffer memory used (in MiB)."},
    {253, "DCGM_FI_DEV_FB_RESERVED", MetricType::kGauge, ValueKind::kInt64,
     "Framebuffer memory reserved (in MiB)."},
    {449, "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", MetricType::kCounter, ValueKind::kInt64,
     "Total number of NVLink bandwidth counters for all lanes."},
    {526, "DCGM_FI_DEV_VGPU_LICENSE_STATUS", MetricType::kGauge, ValueKind::kInt64,
     "vGPU License status"},
    {393, "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", MetricType::kCounter, ValueKind::kInt64,
     "Number of remapped rows for uncorrectable errors"},
    {394, "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", MetricType::kCounter, ValueKind::kInt64,
     "Number of remapped rows for correctable errors"},
    {395, "DCGM_FI_DEV_ROW_REMAP_FAILURE", MetricType::kGauge, ValueKind::kInt64,
     "Whether remapping of rows has failed"},
    {1, "DCGM_FI_DRIVER_VERSION", MetricType::kLabel, ValueKind::kString, "Driver Version"},
    {1001, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", MetricType::kGauge, ValueKind::kDouble,
     "Ratio of time the graphics engine is active."},
    {1004, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", MetricType::kGauge, ValueKind::kDouble,
     "Ratio of cycles the tensor (HMMA) pipe is active."},
    {1005, "DCGM_FI_PROF_DRAM_ACTIVE", MetricType::kGauge, ValueKind::kDouble,
     "Ratio of cycles the device memory interface is active sending or receiving data."},
    {1009, "DCGM_FI_PROF_PCIE_TX_BYTES", MetricType::kGauge, ValueKind::kInt64,
     "The rate of data transmitted over the PCIe bus - including both protocol headers and data "
     "payloads - in bytes per second."},
    {1010, "DCGM_FI_PROF_PCIE_RX_BYTES", MetricType::kGauge, ValueKind::kInt64,
     "The rate of data received over the PCIe bus - including both protocol headers and data "
     "payloads - in bytes per second."},
};
constexpr size_t kNumRows = sizeof(kDefaultRows) / sizeof(kDefaultRows[0]);
static_assert(kNumRows == 26);

// Owns everything a render needs; the FieldDefs must outlive the entries that point at them.
struct Fixture {
  std::vector<std::unique_ptr<FieldDef>> defs;
  PrometheusOptions options;
  Snapshot snapshot;

  const FieldDef* Def(int id, ValueKind kind) {
    for (const auto& d : defs) {
      if (d->id == id) return d.get();
    }
    auto d = std::make_unique<FieldDef>();
    d->id = id;
    d->kind = kind;
    defs.push_back(std::move(d));
    return defs.back().get();
  }
  void AddEntry(int id, std::string name, MetricType type, std::string help,
                ValueKind kind = ValueKind::kInt64) {
    CollectorEntry e;
    e.field = Def(id, kind);
    e.name = std::move(name);
    e.type = type;
    e.help = std::move(help);
    options.entries.push_back(std::move(e));
  }
  void SetIdentities(std::vector<DeviceIdentity> ids) {
    auto shared = std::make_shared<const std::vector<DeviceIdentity>>(std::move(ids));
    snapshot.identities = shared;
    snapshot.devices.clear();
    for (const DeviceIdentity& id : *shared) {
      DeviceSnapshot d;
      d.identity = &id;
      snapshot.devices.push_back(std::move(d));
    }
  }
  std::string Render() const {
    std::string out = "garbage that must be cleared";
    RenderPrometheus(snapshot, options, &out);
    return out;
  }
};

DeviceIdentity MakeIdentity(unsigned index) {
  DeviceIdentity id;
  id.index = index;
  char uuid[64];
  std::snprintf(uuid, sizeof(uuid), "GPU-%08x-1c2d-3e4f-5a6b-7c8d9e0f%04x", 0xa1b2c3d4u + index,
                index);
  id.uuid = uuid;
  char bus[32];
  std::snprintf(bus, sizeof(bus), "00000000:%02X:00.0", 0x18 + 0x10 * index);
  id.pci_bus_id = bus;
  id.model_name = "NVIDIA H200";
  id.minor_number = index;
  id.label_values = {{1, "580.159.04"}};
  return id;
}

// The default CSV on `gpus` GPUs with deterministic values of every shape the renderer prints:
// small and large integers, doubles with and without a fraction, ratios.
Fixture DefaultFixture(unsigned gpus) {
  Fixture f;
  for (const Row& r : kDefaultRows) f.AddEntry(r.id, r.name, r.type, r.help, r.kind);
  std::vector<DeviceIdentity> ids;
  for (unsigned g = 0; g < gpus; ++g) ids.push_back(MakeIdentity(g));
  f.SetIdentities(std::move(ids));
  std::vector<const Row*> by_id;
  for (const Row& r : kDefaultRows) by_id.push_back(&r);
  std::sort(by_id.begin(), by_id.end(), [](const Row* a, const Row* b) { return a->id < b->id; });
  for (unsigned g = 0; g < gpus; ++g) {
    DeviceSnapshot& d = f.snapshot.devices[g];
    int k = 0;
    for (const Row* r : by_id) {
      ++k;
      if (r->type == MetricType::kLabel) continue;
      if (r->kind == ValueKind::kDouble) {
        d.samples.push_back({r->id, 0.0625 * k + 1.1 * g + (r->id == 155 ? 299.437 : 0.0)});
      } else if (r->id == 156) {
        d.samples.push_back({r->id, int64_t{123456789012345} + g});  // beyond 32 bits
      } else {
        d.samples.push_back({r->id, int64_t{k * 10 + static_cast<int>(g)}});
      }
    }
  }
  f.options.hostname = "node1";
  f.options.build = {"0.1.0", "abc1234", "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
                     "580.159.04"};
  f.snapshot.time = std::chrono::system_clock::time_point(std::chrono::milliseconds(1700000000123));
  f.snapshot.collect_seconds = 0.012345;
  return f;
}

std::string GoldenPath(const std::string& name) {
  return std::string(NVMLX_SOURCE_DIR) + "/testdata/golden/" + name;
}

// Compares with the golden file; NVMLX_UPDATE_GOLDEN=1 rewrites it instead.
void ExpectGolden(const std::string& actual, const std::string& name) {
  const std::string path = GoldenPath(name);
  const char* update = std::getenv("NVMLX_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    GTEST_SKIP() << "rewrote " << path;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << "missing golden file " << path << " (run with NVMLX_UPDATE_GOLDEN=1)";
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string expected = ss.str();
  if (expected == actual) return;
  // Point at the first differing line: a full dump of 8 GPUs is unreadable.
  std::istringstream e(expected), a(actual);
  std::string el, al;
  int line = 1;
  while (true) {
    bool he = static_cast<bool>(std::getline(e, el));
    bool ha = static_cast<bool>(std::getline(a, al));
    if (!he && !ha) break;
    if (!he || !ha || el != al) {
      ADD_FAILURE() << path << ":" << line << " differs\n  expected: " << (he ? el : "<eof>")
                    << "\n  actual:   " << (ha ? al : "<eof>");
      return;
    }
    ++line;
  }
  ADD_FAILURE() << path << " differs (trailing newline?)";
}

TEST(RenderPrometheusTest, GoldenOneGpu) {
  ExpectGolden(DefaultFixture(1).Render(), "prometheus_1gpu.txt");
}

TEST(RenderPrometheusTest, GoldenEightGpus) {
  ExpectGolden(DefaultFixture(8).Render(), "prometheus_8gpu.txt");
}

// The golden comparison is only worth something if a one-byte change shows up.
TEST(RenderPrometheusTest, GoldenDetectsChange) {
  Fixture f = DefaultFixture(8);
  const std::string good = f.Render();
  f.snapshot.devices[7].samples.back().value = int64_t{999};
  EXPECT_NE(f.Render(), good);
}

TEST(RenderPrometheusTest, OneGpuLayout) {
  const std::string out = DefaultFixture(1).Render();
  const std::string labels =
      "{gpu=\"0\",UUID=\"GPU-a1b2c3d4-1c2d-3e4f-5a6b-7c8d9e0f0000\",pci_bus_id=\"00000000:18:00."
      "0\","
      "device=\"nvidia0\",modelName=\"NVIDIA H200\",Hostname=\"node1\","
      "DCGM_FI_DRIVER_VERSION=\"580.159.04\"}";
  EXPECT_EQ(out.rfind("# HELP DCGM_FI_DEV_SM_CLOCK SM clock frequency (in MHz).\n"
                      "# TYPE DCGM_FI_DEV_SM_CLOCK gauge\n"
                      "DCGM_FI_DEV_SM_CLOCK" +
                          labels + " 20\n",
                      0),
            0u)
      << out.substr(0, 400);
  EXPECT_NE(out.find("# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n"
                     "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" +
                     labels + " 123456789012345\n"),
            std::string::npos);
  // Label rows make no family.
  EXPECT_EQ(out.find("# HELP DCGM_FI_DRIVER_VERSION"), std::string::npos);
  EXPECT_EQ(out.find("\n\n"), std::string::npos);
  EXPECT_EQ(out.back(), '\n');
  // Ascending field id: 393 before 526 although the CSV lists 526 first.
  EXPECT_LT(out.find("# HELP DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS"),
            out.find("# HELP DCGM_FI_DEV_VGPU_LICENSE_STATUS"));
}

TEST(RenderPrometheusTest, SelfMetrics) {
  Fixture f = DefaultFixture(2);
  f.snapshot.devices[1].up = false;
  f.snapshot.devices[1].stale = true;  // a read stuck in the driver
  const std::string out = f.Render();
  const std::string tail =
      "# HELP nvml_exporter_collect_duration_seconds Time the last collection of all devices "
      "took, in seconds.\n"
      "# TYPE nvml_exporter_collect_duration_seconds gauge\n"
      "nvml_exporter_collect_duration_seconds 0.012345\n"
      "# HELP nvml_exporter_last_collect_timestamp_seconds Unix time when the last collection "
      "started, in seconds.\n"
      "# TYPE nvml_exporter_last_collect_timestamp_seconds gauge\n"
      "nvml_exporter_last_collect_timestamp_seconds 1700000000.123\n"
      "# HELP nvml_exporter_gpu_up 1 if the last collection could read the GPU, 0 if it is lost, "
      "stale (a read stuck in the driver) or every read failed.\n"
      "# TYPE nvml_exporter_gpu_up gauge\n"
      "nvml_exporter_gpu_up{gpu=\"0\",UUID=\"GPU-a1b2c3d4-1c2d-3e4f-5a6b-7c8d9e0f0000\"} 1\n"
      "nvml_exporter_gpu_up{gpu=\"1\",UUID=\"GPU-a1b2c3d5-1c2d-3e4f-5a6b-7c8d9e0f0001\"} 0\n"
      "# HELP nvml_exporter_gpu_stale 1 if the GPU's reads (fast: gauges, slow: energy, PCIe, "
      "violations) did not finish within the read deadline (a call stuck in the driver); their "
      "series are left out meanwhile.\n"
      "# TYPE nvml_exporter_gpu_stale gauge\n"
      "nvml_exporter_gpu_stale{gpu=\"0\",UUID=\"GPU-a1b2c3d4-1c2d-3e4f-5a6b-7c8d9e0f0000\","
      "reads=\"fast\"} 0\n"
      "nvml_exporter_gpu_stale{gpu=\"0\",UUID=\"GPU-a1b2c3d4-1c2d-3e4f-5a6b-7c8d9e0f0000\","
      "reads=\"slow\"} 0\n"
      "nvml_exporter_gpu_stale{gpu=\"1\",UUID=\"GPU-a1b2c3d5-1c2d-3e4f-5a6b-7c8d9e0f0001\","
      "reads=\"fast\"} 1\n"
      "nvml_exporter_gpu_stale{gpu=\"1\",UUID=\"GPU-a1b2c3d5-1c2d-3e4f-5a6b-7c8d9e0f0001\","
      "reads=\"slow\"} 0\n"
      "# HELP nvml_exporter_build_info Build and runtime information of nvml-exporter; the value "
      "is always 1.\n"
      "# TYPE nvml_exporter_build_info gauge\n"
      "nvml_exporter_build_info{version=\"0.1.0\",revision=\"abc1234\","
      "nvml_library=\"/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1\",driver_version=\"580.159.04\"}"
      " 1\n";
  ASSERT_GE(out.size(), tail.size());
  EXPECT_EQ(out.substr(out.size() - tail.size()), tail);
}

// Defect 4 of the hardening issue: a UUID that could not be read was rendered as UUID="".
TEST(RenderPrometheusTest, UnreadableUuidLeavesTheLabelOut) {
  Fixture f = DefaultFixture(1);
  auto ids = std::make_shared<std::vector<model::DeviceIdentity>>(*f.snapshot.identities);
  (*ids)[0].uuid.clear();
  f.snapshot.identities = ids;
  f.snapshot.devices[0].identity = &(*ids)[0];
  const std::string out = f.Render();
  EXPECT_EQ(out.find("UUID=\"\""), std::string::npos) << out;
  EXPECT_NE(out.find("nvml_exporter_gpu_up{gpu=\"0\"} 1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("{gpu=\"0\",pci_bus_id="), std::string::npos) << out;
}

TEST(RenderPrometheusTest, TimestampMillisecondsPadded) {
  Fixture f = DefaultFixture(1);
  f.snapshot.time = std::chrono::system_clock::time_point(std::chrono::milliseconds(1700000000007));
  EXPECT_NE(f.Render().find("nvml_exporter_last_collect_timestamp_seconds 1700000000.007\n"),
            std::string::npos);
}

TEST(RenderPrometheusTest, DownGpuHasNoSeries) {
  Fixture f = DefaultFixture(3);
  f.snapshot.devices[1].up = false;
  const std::string out = f.Render();
  EXPECT_EQ(out.find("DCGM_FI_DEV_SM_CLOCK{gpu=\"1\""), std::string::npos);
  EXPECT_NE(out.find("DCGM_FI_DEV_SM_CLOCK{gpu=\"0\""), std::string::npos);
  EXPECT_NE(out.find("DCGM_FI_DEV_SM_CLOCK{gpu=\"2\""), std::string::npos);
  EXPECT_NE(out.find("nvml_exporter_gpu_up{gpu=\"1\",UUID=\"GPU-a1b2c3d5-1c2d-3e4f-5a6b-"
                     "7c8d9e0f0001\"} 0\n"),
            std::string::npos);
}

// A lost GPU with health results (the collector sets them: ALL fails, fallen off the bus) keeps
// exactly its health series; a down GPU without them has none (above).
TEST(RenderPrometheusTest, LostGpuKeepsOnlyItsHealthSeries) {
  Fixture f = DefaultFixture(2);
  f.AddEntry(9003, "DCGM_EXP_GPU_HEALTH_STATUS", MetricType::kGauge, "Health.");
  f.snapshot.devices[0].health = {{"ALL", "DCGM_FR_OK", 0}};
  f.snapshot.devices[1].up = false;
  f.snapshot.devices[1].health = {{"NVLINK", "DCGM_FR_OK", 0},
                                  {"ALL", "DCGM_FR_FALLEN_OFF_BUS", 20}};
  const std::string out = f.Render();
  EXPECT_NE(out.find("DCGM_EXP_GPU_HEALTH_STATUS{gpu=\"1\""), std::string::npos) << out;
  EXPECT_NE(out.find("health_error_code=\"DCGM_FR_FALLEN_OFF_BUS\",health_watch=\"ALL\"} 20\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("health_watch=\"NVLINK\"} 0\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("DCGM_FI_DEV_SM_CLOCK{gpu=\"1\""), std::string::npos) << out;
  EXPECT_NE(out.find("DCGM_FI_DEV_SM_CLOCK{gpu=\"0\""), std::string::npos) << out;
  EXPECT_NE(out.find("nvml_exporter_gpu_up{gpu=\"1\",UUID=\"GPU-a1b2c3d5-1c2d-3e4f-5a6b-"
                     "7c8d9e0f0001\"} 0\n"),
            std::string::npos);
}

TEST(RenderPrometheusTest, AllDevicesDownOmitsFamilies) {
  Fixture f = DefaultFixture(2);
  for (auto& d : f.snapshot.devices) d.up = false;
  const std::string out = f.Render();
  EXPECT_EQ(out.find("DCGM_FI_"), std::string::npos);
  EXPECT_EQ(out.rfind("# HELP nvml_exporter_collect_duration_seconds", 0), 0u);
}

TEST(RenderPrometheusTest, EscapesModelNameAndHelp) {
  Fixture f;
  f.AddEntry(150, "DCGM_FI_DEV_GPU_TEMP", MetricType::kGauge, "a \\ back\nslash \"quoted\" é");
  DeviceIdentity id = MakeIdentity(0);
  id.model_name = "NVIDIA \"H200\" \\ 141GB\nnext ünïcødé";
  id.label_values.clear();
  f.SetIdentities({id});
  f.snapshot.devices[0].samples = {{150, int64_t{33}}};
  const std::string out = f.Render();
  EXPECT_NE(out.find("# HELP DCGM_FI_DEV_GPU_TEMP a \\\\ back\\nslash \"quoted\" é\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(",modelName=\"NVIDIA \\\"H200\\\" \\\\ 141GB\\nnext ünïcødé\"} 33\n"),
            std::string::npos)
      << out;
}

TEST(RenderPrometheusTest, EscapeFunctions) {
  std::string s;
  AppendEscapedLabelValue("a\\b\"c\nd\te", &s);
  EXPECT_EQ(s, "a\\\\b\\\"c\\nd\te");
  s.clear();
  AppendEscapedHelp("a\\b\"c\nd", &s);
  EXPECT_EQ(s, "a\\\\b\"c\\nd");
}

TEST(RenderPrometheusTest, EmptyHelpKeepsTrailingSpace) {
  Fixture f;
  f.AddEntry(150, "DCGM_FI_DEV_GPU_TEMP", MetricType::kGauge, "");
  f.SetIdentities({MakeIdentity(0)});
  f.snapshot.devices[0].samples = {{150, int64_t{33}}};
  EXPECT_EQ(
      f.Render().rfind("# HELP DCGM_FI_DEV_GPU_TEMP \n# TYPE DCGM_FI_DEV_GPU_TEMP gauge\n", 0), 0u);
}

TEST(RenderPrometheusTest, OldNamespaceUuidLabel) {
  Fixture f = DefaultFixture(1);
  f.options.use_old_namespace = true;
  const std::string out = f.Render();
  EXPECT_EQ(out.find("UUID="), std::string::npos);
  EXPECT_NE(out.find("DCGM_FI_DEV_SM_CLOCK{gpu=\"0\",uuid=\"GPU-a1b2c3d4-"), std::string::npos);
  EXPECT_NE(out.find("nvml_exporter_gpu_up{gpu=\"0\",uuid=\"GPU-"), std::string::npos);
}

TEST(RenderPrometheusTest, NoHostnameLabelWhenEmpty) {
  Fixture f = DefaultFixture(1);
  f.options.hostname.clear();
  const std::string out = f.Render();
  EXPECT_EQ(out.find("Hostname="), std::string::npos);
  EXPECT_NE(out.find("modelName=\"NVIDIA H200\",DCGM_FI_DRIVER_VERSION=\"580.159.04\"}"),
            std::string::npos);
}

TEST(RenderPrometheusTest, HostnameLabelSpelling) {
  Fixture f = DefaultFixture(1);
  f.options.hostname_label = "hostname";
  const std::string out = f.Render();
  EXPECT_EQ(out.find("Hostname="), std::string::npos);
  EXPECT_NE(out.find(",hostname=\"node1\",DCGM_FI_DRIVER_VERSION="), std::string::npos);
}

TEST(RenderPrometheusTest, LabelRowsSortedByNameAndMissingOnesOmitted) {
  Fixture f;
  f.AddEntry(150, "DCGM_FI_DEV_GPU_TEMP", MetricType::kGauge, "t");
  f.AddEntry(3, "DCGM_FI_DEV_SERIAL", MetricType::kLabel, "", ValueKind::kString);
  f.AddEntry(1, "DCGM_FI_DRIVER_VERSION", MetricType::kLabel, "", ValueKind::kString);
  f.AddEntry(2, "DCGM_FI_DEV_BRAND", MetricType::kLabel, "", ValueKind::kString);
  DeviceIdentity a = MakeIdentity(0);
  a.label_values = {{1, "580.159.04"}, {3, "1650123456789"}, {2, "NVIDIA"}};
  DeviceIdentity b = MakeIdentity(1);
  b.label_values = {{1, "580.159.04"}};  // serial and brand reads failed
  f.SetIdentities({a, b});
  f.snapshot.devices[0].samples = {{150, int64_t{30}}};
  f.snapshot.devices[1].samples = {{150, int64_t{31}}};
  const std::string out = f.Render();
  EXPECT_EQ(out.find("Hostname="), std::string::npos);  // no hostname set
  EXPECT_NE(out.find("modelName=\"NVIDIA H200\",DCGM_FI_DEV_BRAND=\"NVIDIA\","
                     "DCGM_FI_DEV_SERIAL=\"1650123456789\",DCGM_FI_DRIVER_VERSION=\"580.159.04\"}"
                     " 30\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("modelName=\"NVIDIA H200\",DCGM_FI_DRIVER_VERSION=\"580.159.04\"} 31\n"),
            std::string::npos)
      << out;
}

TEST(RenderPrometheusTest, FamiliesByFieldIdThenCsvOrder) {
  Fixture f;
  f.AddEntry(252, "DCGM_FI_DEV_FB_USED", MetricType::kGauge, "used");
  f.AddEntry(100, "DCGM_FI_DEV_SM_CLOCK", MetricType::kGauge, "sm");
  f.AddEntry(150, "gpu_temp_alias_b", MetricType::kGauge, "b");
  f.AddEntry(150, "gpu_temp_alias_a", MetricType::kGauge, "a");
  f.AddEntry(150, "gpu_temp_alias_b", MetricType::kGauge, "duplicate name: dropped");
  f.SetIdentities({MakeIdentity(0)});
  f.snapshot.devices[0].samples = {{100, int64_t{1}}, {150, int64_t{2}}, {252, int64_t{3}}};
  const std::string out = f.Render();
  std::vector<std::string> helps;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# HELP ", 0) == 0 && line.find("nvml_exporter") == std::string::npos) {
      helps.push_back(line);
    }
  }
  EXPECT_EQ(helps, (std::vector<std::string>{
                       "# HELP DCGM_FI_DEV_SM_CLOCK sm", "# HELP gpu_temp_alias_b b",
                       "# HELP gpu_temp_alias_a a", "# HELP DCGM_FI_DEV_FB_USED used"}));
  EXPECT_NE(out.find("\ngpu_temp_alias_a{gpu=\"0\""), std::string::npos);
}

TEST(RenderPrometheusTest, StringValueInGaugeIsSkipped) {
  Fixture f;
  f.AddEntry(100, "DCGM_FI_DEV_SM_CLOCK", MetricType::kGauge, "sm");
  f.AddEntry(50, "DCGM_FI_DEV_NAME", MetricType::kGauge, "a string field declared gauge",
             ValueKind::kString);
  f.SetIdentities({MakeIdentity(0), MakeIdentity(1)});
  f.snapshot.devices[0].samples = {{50, std::string("NVIDIA H200")}, {100, int64_t{1980}}};
  f.snapshot.devices[1].samples = {{50, std::string("NVIDIA H200")}, {100, int64_t{1755}}};
  const std::string out = f.Render();
  EXPECT_EQ(out.find("DCGM_FI_DEV_NAME"), std::string::npos) << out;  // whole family omitted
  EXPECT_NE(out.find("DCGM_FI_DEV_SM_CLOCK{gpu=\"1\""), std::string::npos);
}

TEST(RenderPrometheusTest, TypesAsWritten) {
  Fixture f;
  f.AddEntry(100, "a", MetricType::kGauge, "");
  f.AddEntry(101, "b", MetricType::kCounter, "");
  f.AddEntry(102, "c", MetricType::kHistogram, "");
  f.AddEntry(103, "d", MetricType::kSummary, "");
  f.SetIdentities({MakeIdentity(0)});
  f.snapshot.devices[0].samples = {
      {100, int64_t{1}}, {101, int64_t{2}}, {102, int64_t{3}}, {103, int64_t{4}}};
  const std::string out = f.Render();
  EXPECT_NE(out.find("# TYPE a gauge\n"), std::string::npos);
  EXPECT_NE(out.find("# TYPE b counter\n"), std::string::npos);
  EXPECT_NE(out.find("# TYPE c histogram\n"), std::string::npos);
  EXPECT_NE(out.find("# TYPE d summary\n"), std::string::npos);
}

TEST(RenderPrometheusTest, MissingSampleOmitsSeries) {
  Fixture f;
  f.AddEntry(100, "DCGM_FI_DEV_SM_CLOCK", MetricType::kGauge, "sm");
  f.SetIdentities({MakeIdentity(0), MakeIdentity(1)});
  f.snapshot.devices[1].samples = {{100, int64_t{7}}};
  const std::string out = f.Render();
  EXPECT_EQ(out.find("DCGM_FI_DEV_SM_CLOCK{gpu=\"0\""), std::string::npos);
  EXPECT_NE(out.find("DCGM_FI_DEV_SM_CLOCK{gpu=\"1\""), std::string::npos);
}

TEST(RenderPrometheusTest, IntegersAsPercentD) {
  Fixture f;
  f.AddEntry(100, "x", MetricType::kGauge, "");
  f.SetIdentities({MakeIdentity(0), MakeIdentity(1), MakeIdentity(2)});
  f.snapshot.devices[0].samples = {{100, int64_t{0}}};
  f.snapshot.devices[1].samples = {{100, std::numeric_limits<int64_t>::min()}};
  f.snapshot.devices[2].samples = {{100, std::numeric_limits<int64_t>::max()}};
  const std::string out = f.Render();
  EXPECT_NE(out.find("\"} 0\n"), std::string::npos);
  EXPECT_NE(out.find("\"} -9223372036854775808\n"), std::string::npos);
  EXPECT_NE(out.find("\"} 9223372036854775807\n"), std::string::npos);
}

struct FixedCase {
  double in;
  const char* want;
};

TEST(AppendGoFixedTest, MatchesGoPercentF) {
  const FixedCase cases[] = {
      {0.1, "0.100000"},
      {299.437, "299.437000"},
      {302.206, "302.206000"},
      {1e20, "100000000000000000000.000000"},
      {-1.5, "-1.500000"},
      {-0.0000004, "-0.000000"},  // Go keeps the sign of a negative value rounding to zero
      {0.0, "0.000000"},
      {0.0000005, "0.000000"},  // 5e-7 is slightly below half in binary
      {0.0000015, "0.000002"},
      {2.5, "2.500000"},
      {0.1234565, "0.123456"},  // exact binary value lies below the tie
      {123456789.123456789, "123456789.123457"},
      {1e-300, "0.000000"},
      {std::numeric_limits<double>::quiet_NaN(), "NaN"},
      {std::numeric_limits<double>::infinity(), "+Inf"},
      {-std::numeric_limits<double>::infinity(), "-Inf"},
  };
  for (const FixedCase& c : cases) {
    std::string s;
    AppendGoFixed(c.in, &s);
    EXPECT_EQ(s, c.want) << "input " << c.in;
  }
  std::string big;
  AppendGoFixed(std::numeric_limits<double>::max(), &big);
  EXPECT_EQ(big.size(), 309u + 7u);
  EXPECT_EQ(big.substr(0, 6), "179769");
  EXPECT_EQ(big.substr(big.size() - 7), ".000000");
}

TEST(RenderPrometheusTest, DoubleSamplesUsePercentF) {
  Fixture f;
  f.AddEntry(155, "DCGM_FI_DEV_POWER_USAGE", MetricType::kGauge, "", ValueKind::kDouble);
  f.SetIdentities({MakeIdentity(0), MakeIdentity(1)});
  f.snapshot.devices[0].samples = {{155, 299.437}};
  f.snapshot.devices[1].samples = {{155, std::numeric_limits<double>::quiet_NaN()}};
  const std::string out = f.Render();
  EXPECT_NE(out.find("\"} 299.437000\n"), std::string::npos);
  EXPECT_NE(out.find("\"} NaN\n"), std::string::npos);
}

// dcgm-exporter's label order: fixed labels, sorted Labels (DCGM_FI_DRIVER_VERSION before the
// lower-case window_size_in_ms and xid), then Attributes (err_code, err_msg).
TEST(RenderPrometheusTest, XidFamiliesLabelsAndOrder) {
  Fixture f;
  f.AddEntry(9001, "DCGM_EXP_XID_ERRORS_COUNT", MetricType::kCounter, "XIDs.");
  f.AddEntry(230, "DCGM_FI_DEV_XID_ERRORS", MetricType::kGauge, "Last XID.");
  f.AddEntry(203, "DCGM_FI_DEV_GPU_UTIL", MetricType::kGauge, "Util.");
  f.AddEntry(1, "DCGM_FI_DRIVER_VERSION", MetricType::kLabel, "Driver.", ValueKind::kString);
  f.SetIdentities({MakeIdentity(0), MakeIdentity(1), MakeIdentity(2)});
  f.snapshot.xid_window_ms = 1000;
  f.snapshot.devices[0].samples = {{203, int64_t{5}}, {230, int64_t{79}}};
  f.snapshot.devices[0].xid_watched = true;
  f.snapshot.devices[0].xid_counts = {{13, 1}, {79, 2}};
  f.snapshot.devices[1].samples = {{203, int64_t{6}}, {230, int64_t{0}}};
  f.snapshot.devices[1].xid_watched = true;
  f.snapshot.devices[2].samples = {{203, int64_t{7}}};  // not watched: no XID series
  const std::string out = f.Render();
  const std::string p0 =
      "{gpu=\"0\",UUID=\"GPU-a1b2c3d4-1c2d-3e4f-5a6b-7c8d9e0f0000\",pci_bus_id=\"00000000:18:00."
      "0\","
      "device=\"nvidia0\",modelName=\"NVIDIA H200\",DCGM_FI_DRIVER_VERSION=\"580.159.04\"";
  const std::string p1 =
      "{gpu=\"1\",UUID=\"GPU-a1b2c3d5-1c2d-3e4f-5a6b-7c8d9e0f0001\",pci_bus_id=\"00000000:28:00."
      "0\","
      "device=\"nvidia1\",modelName=\"NVIDIA H200\",DCGM_FI_DRIVER_VERSION=\"580.159.04\"";
  const std::string expected_xid =
      "# HELP DCGM_FI_DEV_XID_ERRORS Last XID.\n# TYPE DCGM_FI_DEV_XID_ERRORS gauge\n"
      "DCGM_FI_DEV_XID_ERRORS" +
      p0 +
      ",err_code=\"79\",err_msg=\"GPU has fallen off the bus\"} 79\n"
      "DCGM_FI_DEV_XID_ERRORS" +
      p1 + ",err_code=\"0\",err_msg=\"No Error\"} 0\n";
  const std::string expected_count =
      "# HELP DCGM_EXP_XID_ERRORS_COUNT XIDs.\n# TYPE DCGM_EXP_XID_ERRORS_COUNT counter\n"
      "DCGM_EXP_XID_ERRORS_COUNT" +
      p0 +
      ",window_size_in_ms=\"1000\",xid=\"13\"} 1\n"
      "DCGM_EXP_XID_ERRORS_COUNT" +
      p0 +
      ",window_size_in_ms=\"1000\",xid=\"79\"} 2\n"
      "DCGM_EXP_XID_ERRORS_COUNT" +
      p1 + ",window_size_in_ms=\"1000\"} 0\n";
  EXPECT_NE(out.find(expected_xid), std::string::npos) << out;
  EXPECT_NE(out.find(expected_count), std::string::npos) << out;
  // Families by id: GPU_UTIL (203), XID_ERRORS (230), then the DCGM_EXP_* family last.
  EXPECT_LT(out.find("# HELP DCGM_FI_DEV_GPU_UTIL"), out.find("# HELP DCGM_FI_DEV_XID_ERRORS"));
  EXPECT_LT(out.find("# HELP DCGM_FI_DEV_XID_ERRORS"),
            out.find("# HELP DCGM_EXP_XID_ERRORS_COUNT"));
  EXPECT_LT(out.find("# HELP DCGM_EXP_XID_ERRORS_COUNT"), out.find("# HELP nvml_exporter_"));
  EXPECT_EQ(out.find("XID_ERRORS{gpu=\"2\""), std::string::npos) << out;
  EXPECT_EQ(out.find("XID_ERRORS_COUNT{gpu=\"2\""), std::string::npos) << out;
}

// DCGM_EXP_CLOCK_EVENTS_COUNT: one series per reason (ascending bit), clock_event before
// window_size_in_ms; sampled but no reason: no series; never sampled: one 0 without clock_event.
TEST(RenderPrometheusTest, ClockEventCountsLabelsAndQuirks) {
  Fixture f;
  f.AddEntry(9002, "DCGM_EXP_CLOCK_EVENTS_COUNT", MetricType::kCounter, "Clock events.");
  f.AddEntry(1, "DCGM_FI_DRIVER_VERSION", MetricType::kLabel, "Driver.", ValueKind::kString);
  f.SetIdentities({MakeIdentity(0), MakeIdentity(1), MakeIdentity(2), MakeIdentity(3)});
  f.snapshot.clock_events_window_ms = 300000;
  f.snapshot.devices[0].clock_events_watched = true;
  f.snapshot.devices[0].clock_events_sampled = true;
  f.snapshot.devices[0].clock_event_counts = {{0x1, 3}, {0x4, 10}};
  f.snapshot.devices[1].clock_events_watched = true;
  f.snapshot.devices[1].clock_events_sampled = true;  // read, nothing active
  f.snapshot.devices[2].clock_events_watched = true;  // no good read in the window
  // device 3: not watched (e.g. a MIG instance): nothing
  const std::string out = f.Render();
  const std::string p0 =
      "{gpu=\"0\",UUID=\"GPU-a1b2c3d4-1c2d-3e4f-5a6b-7c8d9e0f0000\",pci_bus_id=\"00000000:18:00."
      "0\",device=\"nvidia0\",modelName=\"NVIDIA H200\",DCGM_FI_DRIVER_VERSION=\"580.159.04\"";
  const std::string expected =
      "# HELP DCGM_EXP_CLOCK_EVENTS_COUNT Clock events.\n"
      "# TYPE DCGM_EXP_CLOCK_EVENTS_COUNT counter\n"
      "DCGM_EXP_CLOCK_EVENTS_COUNT" +
      p0 +
      ",clock_event=\"gpu_idle\",window_size_in_ms=\"300000\"} 3\n"
      "DCGM_EXP_CLOCK_EVENTS_COUNT" +
      p0 + ",clock_event=\"power_cap\",window_size_in_ms=\"300000\"} 10\n";
  EXPECT_NE(out.find(expected), std::string::npos) << out;
  EXPECT_EQ(out.find("CLOCK_EVENTS_COUNT{gpu=\"1\""), std::string::npos) << out;
  EXPECT_NE(out.find("DCGM_FI_DRIVER_VERSION=\"580.159.04\",window_size_in_ms=\"300000\"} 0\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("CLOCK_EVENTS_COUNT{gpu=\"2\""), std::string::npos) << out;
  EXPECT_EQ(out.find("CLOCK_EVENTS_COUNT{gpu=\"3\""), std::string::npos) << out;
}

// A MIG instance: the parent's gpu/UUID/pci_bus_id/device/modelName, then GPU_I_PROFILE and
// GPU_I_ID, then Hostname and the label fields. nvml_exporter_gpu_up stays one per GPU.
TEST(RenderPrometheusTest, MigInstanceLabelsAfterParentLabels) {
  Fixture f;
  f.AddEntry(252, "DCGM_FI_DEV_FB_USED", MetricType::kGauge, "FB used.");
  f.AddEntry(1, "DCGM_FI_DRIVER_VERSION", MetricType::kLabel, "Driver.", ValueKind::kString);
  DeviceIdentity inst = MakeIdentity(0);
  inst.mig = DeviceIdentity::Mig{7, 0, "1g.18gb", "MIG-11111111-2222-3333-4444-555555555555"};
  f.SetIdentities({MakeIdentity(0), inst});
  f.options.hostname = "node1";
  f.snapshot.devices[1].samples = {{252, int64_t{1000}}};
  const std::string out = f.Render();
  EXPECT_NE(out.find("DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-a1b2c3d4-1c2d-3e4f-5a6b-"
                     "7c8d9e0f0000\",pci_bus_id=\"00000000:18:00.0\",device=\"nvidia0\","
                     "modelName=\"NVIDIA H200\",GPU_I_PROFILE=\"1g.18gb\",GPU_I_ID=\"7\","
                     "Hostname=\"node1\",DCGM_FI_DRIVER_VERSION=\"580.159.04\"} 1000\n"),
            std::string::npos)
      << out;
  size_t up_lines = 0;
  for (size_t at = out.find("\nnvml_exporter_gpu_up{"); at != std::string::npos;
       at = out.find("\nnvml_exporter_gpu_up{", at + 1)) {
    ++up_lines;
  }
  EXPECT_EQ(up_lines, 1u) << out;
}

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

TEST(XidDescriptionTest, KnownAndUnknown) {
  EXPECT_EQ(fields::XidDescription(0), "No Error");
  EXPECT_EQ(fields::XidDescription(13), "Graphics Engine Exception");
  EXPECT_EQ(fields::XidDescription(79), "GPU has fallen off the bus");
  EXPECT_EQ(fields::XidDescription(95), "Uncontained ECC error");
  EXPECT_EQ(fields::XidDescription(99999), "Unknown Error");
  EXPECT_EQ(fields::XidDescription(-1), "Unknown Error");
}

}  // namespace
}  // namespace nvmlx::render

namespace nvmlx::render {
namespace {

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
