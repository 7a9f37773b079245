// Shared by the Prometheus renderer's tests (prometheus_test.cc, prometheus_attribution_test.cc):
// the default-counters rows, a Fixture that builds a Snapshot and renders it, and golden files.
// Test-only; not thread-safe (each test builds its own Fixture).
#ifndef NVML_EXPORTER_RENDER_PROMETHEUS_TEST_FIXTURE_H_
#define NVML_EXPORTER_RENDER_PROMETHEUS_TEST_FIXTURE_H_

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "plan/plan_test_util.h"
#include "render/prometheus.h"

namespace nvmlx::render::test {

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
inline constexpr Row kDefaultRows[] = {
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
inline constexpr size_t kNumRows = sizeof(kDefaultRows) / sizeof(kDefaultRows[0]);
static_assert(kNumRows == 26);

// Owns everything a render needs; the FieldDefs must outlive the entries that point at them.
struct Fixture {
  std::vector<std::unique_ptr<FieldDef>> defs;
  std::vector<CollectorEntry> entries;  // the collectors rows: Render() plans them
  PrometheusOptions options;
  Snapshot snapshot;

  const FieldDef* Def(int id, ValueKind kind) {
    for (const auto& d : defs) {
      if (d->id == id) return d.get();
    }
    auto d = std::make_unique<FieldDef>();
    d->id = id;
    d->kind = kind;
    d->read = plan::testing::UnusedRead;
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
    entries.push_back(std::move(e));
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
    Snapshot planned = snapshot;  // rendered under the plan of `entries`, as the daemon's are
    planned.plan = plan::testing::PlanOf(entries);
    RenderPrometheus(planned, options, &out);
    return out;
  }
};

inline DeviceIdentity MakeIdentity(unsigned index) {
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
inline Fixture DefaultFixture(unsigned gpus) {
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

inline std::string GoldenPath(const std::string& name) {
  return std::string(NVMLX_SOURCE_DIR) + "/testdata/golden/" + name;
}

// Compares with the golden file; NVMLX_UPDATE_GOLDEN=1 rewrites it instead.
inline void ExpectGolden(const std::string& actual, const std::string& name) {
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

}  // namespace nvmlx::render::test

#endif  // NVML_EXPORTER_RENDER_PROMETHEUS_TEST_FIXTURE_H_
