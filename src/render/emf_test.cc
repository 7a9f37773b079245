#include "render/emf.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "config/text_file.h"
#include "emf_validator.h"
#include "fields/catalog.h"
#include "plan/plan_test_util.h"

namespace nvmlx::render {
namespace {

// Reads and parses a rules file the way the daemon does (app/emf_pipeline.cc).
Result<EmfRules> LoadEmfRules(const std::string& path, std::vector<std::string>* warnings) {
  Result<std::string> text = config::ReadTextFile(path, "EMF rules file");
  if (!text.ok()) return text.status();
  return ParseEmfRules(*text, path, warnings);
}

using config::CollectorEntry;
using config::MetricType;
using model::DeviceIdentity;
using model::DeviceSnapshot;
using model::Snapshot;
using nlohmann::json;

constexpr int64_t kTimeMs = 1700000000123;

std::vector<CollectorEntry> DcpEntries() {
  auto rows = config::LoadCollectorsCsv(NVMLX_SOURCE_DIR "/etc/dcp-metrics-included.csv");
  EXPECT_TRUE(rows.ok()) << rows.status().message();
  return rows.ok() ? *rows : std::vector<CollectorEntry>{};
}

DeviceIdentity Identity(unsigned index) {
  DeviceIdentity id;
  id.index = index;
  id.uuid = "GPU-a1b2c3d4-0000-0000-0000-00000000000" + std::to_string(index);
  id.pci_bus_id = "00000000:1" + std::to_string(index) + ":00.0";
  id.model_name = "NVIDIA H200";
  id.label_values = {{1, "580.159.04"}};
  return id;
}

// A snapshot of `gpus` GPUs with a value for every metric row of `entries`.
struct World {
  std::vector<CollectorEntry> entries;
  Snapshot snapshot;
  std::shared_ptr<std::vector<DeviceIdentity>> ids;

  World(std::vector<CollectorEntry> e, unsigned gpus) : entries(std::move(e)) {
    ids = std::make_shared<std::vector<DeviceIdentity>>();
    for (unsigned g = 0; g < gpus; ++g) ids->push_back(Identity(g));
    snapshot.identities = ids;
    snapshot.plan = plan::testing::PlanOf(entries);
    snapshot.time = std::chrono::system_clock::time_point(std::chrono::milliseconds(kTimeMs));
    for (unsigned g = 0; g < gpus; ++g) {
      DeviceSnapshot d;
      d.identity = &(*ids)[g];
      for (const CollectorEntry& row : entries) {
        if (row.type == MetricType::kLabel) continue;
        if (row.field->kind == fields::ValueKind::kDouble) {
          d.samples.push_back({row.field->id, 0.25 + g});
        } else {
          d.samples.push_back({row.field->id, int64_t{100 + row.field->id % 50 + g}});
        }
      }
      std::sort(d.samples.begin(), d.samples.end(),
                [](const auto& a, const auto& b) { return a.field_id < b.field_id; });
      d.samples.erase(
          std::unique(d.samples.begin(), d.samples.end(),
                      [](const auto& a, const auto& b) { return a.field_id == b.field_id; }),
          d.samples.end());
      snapshot.devices.push_back(std::move(d));
    }
  }
  void Set(unsigned gpu, int field_id, const model::Value& v) {
    for (auto& s : snapshot.devices[gpu].samples) {
      if (s.field_id == field_id) s.value = v;
    }
  }
};

EmfOptions BaseOptions() {
  EmfOptions o;
  o.log_group_name = "/aws/containerinsights/c1/prometheus";
  o.counters_as_delta = false;
  o.extra_labels = {{"ClusterName", "c1"},
                    {"NodeName", "node1"},
                    {"Service", "nvidia-dcgm-exporter"},
                    {"job", "kubernetes-pod-dcgm-exporter"}};
  return o;
}

// The page's options (the fields come with the snapshot's plan).
SeriesOptions Series() {
  SeriesOptions s;
  s.hostname = "node1";
  return s;
}

// Builds the series model of `w`'s snapshot (as the daemon does once per collection), renders
// it, validates every document, and returns them parsed.
std::vector<json> RenderValid(EmfRenderer& r, const World& w, size_t max_bytes = 61440) {
  const SeriesOptions series = Series();
  SeriesModel model;
  BuildSeries(w.snapshot, series, &model);
  std::vector<std::string> docs;
  r.Render(model, w.snapshot.time, &docs);
  std::vector<json> out;
  testing::EmfCheckOptions check;
  check.max_bytes = max_bytes;
  for (const std::string& d : docs) {
    std::vector<std::string> errors = testing::ValidateEmf(d, check);
    EXPECT_TRUE(errors.empty()) << errors.front() << "\n in " << d;
    out.push_back(json::parse(d));
  }
  return out;
}

std::set<std::string> MetricNames(const json& doc) {
  std::set<std::string> names;
  for (const json& d : doc["_aws"]["CloudWatchMetrics"]) {
    for (const json& m : d["Metrics"]) names.insert(m["Name"].get<std::string>());
  }
  return names;
}

const std::set<std::string> kDefaultSelected = {
    "DCGM_FI_DEV_SM_CLOCK",          "DCGM_FI_DEV_MEM_CLOCK",
    "DCGM_FI_DEV_MEMORY_TEMP",       "DCGM_FI_DEV_GPU_TEMP",
    "DCGM_FI_DEV_POWER_USAGE",       "DCGM_FI_DEV_GPU_UTIL",
    "DCGM_FI_DEV_MEM_COPY_UTIL",     "DCGM_FI_DEV_ENC_UTIL",
    "DCGM_FI_DEV_DEC_UTIL",          "DCGM_FI_DEV_ROW_REMAP_FAILURE",
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
    "DCGM_FI_PROF_DRAM_ACTIVE",      "DCGM_FI_PROF_PCIE_TX_BYTES",
    "DCGM_FI_PROF_PCIE_RX_BYTES"};

void ExpectDefaultDocuments(unsigned gpus) {
  World w(DcpEntries(), gpus);
  EmfRenderer r(DefaultEmfRules(true), BaseOptions());
  std::vector<json> docs = RenderValid(r, w);
  // Per GPU: the plain label set and the XID one (err_code/err_msg).
  ASSERT_EQ(docs.size(), 2u * gpus);
  for (unsigned g = 0; g < gpus; ++g) {
    const json& plain = docs[2 * size_t{g}];
    const json& xid = docs[2 * size_t{g} + 1];
    EXPECT_EQ(plain["gpu"], std::to_string(g));
    EXPECT_EQ(plain["_aws"]["Timestamp"], kTimeMs);
    EXPECT_EQ(plain["_aws"]["LogGroupName"], "/aws/containerinsights/c1/prometheus");
    EXPECT_EQ(MetricNames(plain), kDefaultSelected);
    EXPECT_EQ(MetricNames(xid), std::set<std::string>{"DCGM_FI_DEV_XID_ERRORS"});
    EXPECT_EQ(xid["err_code"], std::to_string(100 + 230 % 50 + g));
    const json& d = plain["_aws"]["CloudWatchMetrics"][0];
    EXPECT_EQ(d["Namespace"], "ContainerInsights/Prometheus");
    // No pod holds the GPU: only the per-GPU set applies.
    EXPECT_EQ(d["Dimensions"], json::parse(R"([["ClusterName","NodeName","gpu"]])"));
    for (const json& m : d["Metrics"]) {
      const std::string n = m["Name"];
      const std::string unit = m["Unit"];
      const std::map<std::string, std::string> want = {
          {"DCGM_FI_DEV_GPU_UTIL", "Percent"},
          {"DCGM_FI_DEV_POWER_USAGE", "None"},
          {"DCGM_FI_PROF_PCIE_TX_BYTES", "Bytes/Second"},
          {"DCGM_FI_PROF_DRAM_ACTIVE", "None"}};  // a ratio 0..1
      if (auto it = want.find(n); it != want.end()) {
        EXPECT_EQ(unit, it->second) << n;
      }
      EXPECT_FALSE(m.contains("StorageResolution"));
    }
    // Values as sent: the integer exactly, the double shortest.
    EXPECT_EQ(plain["DCGM_FI_DEV_GPU_UTIL"], 100 + 203 % 50 + g);
    EXPECT_EQ(plain["DCGM_FI_PROF_DRAM_ACTIVE"], 0.25 + g);
    // Unselected fields and other members are not metrics.
    EXPECT_FALSE(plain.contains("DCGM_FI_DEV_FB_FREE"));
    EXPECT_EQ(plain["Service"], "nvidia-dcgm-exporter");
    EXPECT_EQ(plain["DCGM_FI_DRIVER_VERSION"], "580.159.04");
  }
}

TEST(EmfRendererTest, OneGpuDefaultRules) { ExpectDefaultDocuments(1); }
TEST(EmfRendererTest, EightGpusDefaultRules) { ExpectDefaultDocuments(8); }

TEST(EmfRendererTest, AttributionAndTheArticleDeclaration) {
  World w(DcpEntries(), 3);
  auto attribution = std::make_shared<model::DeviceAttribution>();
  // GPU 0 shared by two pods (time-slicing), GPU 1 held by one, GPU 2 idle.
  attribution->pods_by_device[(*w.ids)[0].uuid] = {{"ml", "train-0", "main", "0"},
                                                   {"ml", "train-1", "main", "1"}};
  attribution->pods_by_device[(*w.ids)[1].uuid] = {
      {"kube-system", "gpu-burn-c68d8c774-ltg9s", "main", ""}};
  w.snapshot.attribution.devices = attribution;
  Result<EmfRules> rules =
      LoadEmfRules(NVMLX_SOURCE_DIR "/testdata/emf/article_cwagent.json", nullptr);
  ASSERT_TRUE(rules.ok());
  EmfRenderer r(*rules, BaseOptions());
  std::vector<json> docs = RenderValid(r, w);
  // Per pod: plain + XID label sets; the idle GPU has no pod, so the article's only set is
  // incomplete and it gets no document.
  ASSERT_EQ(docs.size(), 6u);
  std::vector<std::string> pods;
  for (const json& d : docs) {
    pods.push_back(d["pod"]);
    EXPECT_NE(d["gpu"], "2");
    EXPECT_EQ(d["Namespace"], d["namespace"]);
    EXPECT_EQ(d["_aws"]["CloudWatchMetrics"][0]["Dimensions"],
              json::parse(R"([["ClusterName","Namespace","Service","job","pod"]])"));
  }
  EXPECT_EQ(pods,
            (std::vector<std::string>{"train-0", "train-0", "train-1", "train-1",
                                      "gpu-burn-c68d8c774-ltg9s", "gpu-burn-c68d8c774-ltg9s"}));
  EXPECT_EQ(MetricNames(docs[0]).size(), 13u);  // the article's 14 minus XID_ERRORS
  EXPECT_EQ(docs[4]["container"], "main");
  EXPECT_EQ(docs[4]["namespace"], "kube-system");

  // Built-in rules: the pod set on pod-held GPUs, the GPU set everywhere.
  EmfRenderer def(DefaultEmfRules(true), BaseOptions());
  docs = RenderValid(def, w);
  ASSERT_EQ(docs.size(), 8u);
  EXPECT_EQ(docs[0]["_aws"]["CloudWatchMetrics"][0]["Dimensions"],
            json::parse(R"([["ClusterName","Namespace","container","pod"],)"
                        R"(["ClusterName","NodeName","gpu"]])"));
  EXPECT_EQ(docs[6]["_aws"]["CloudWatchMetrics"][0]["Dimensions"],
            json::parse(R"([["ClusterName","NodeName","gpu"]])"));
}

// 150 selected metrics on one label set: two documents (100 + 50) with the same labels.
TEST(EmfRendererTest, OneHundredFiftyMetricsSplit) {
  std::vector<std::unique_ptr<fields::FieldDef>> defs;
  std::vector<CollectorEntry> entries;
  for (int i = 0; i < 150; ++i) {
    auto d = std::make_unique<fields::FieldDef>();
    d->id = 5000 + i;
    d->kind = fields::ValueKind::kDouble;
    d->unit = i % 2 ? "%" : "B/s";
    d->read = plan::testing::UnusedRead;
    CollectorEntry e;
    e.field = d.get();
    e.name = "M_" + std::to_string(1000 + i);
    entries.push_back(e);
    defs.push_back(std::move(d));
  }
  World w(entries, 1);
  Result<EmfRules> rules = ParseEmfRules(
      "metric_declaration: [{source_labels: [gpu], dimensions: [[gpu], [NodeName, gpu]], "
      "metric_selectors: ['^M_']}]",
      "t", nullptr);
  ASSERT_TRUE(rules.ok());
  EmfRenderer r(*rules, BaseOptions());
  std::vector<json> docs = RenderValid(r, w);
  ASSERT_EQ(docs.size(), 2u);
  std::set<std::string> all;
  size_t total = 0;
  for (const json& d : docs) {
    std::set<std::string> names = MetricNames(d);
    total += names.size();
    all.insert(names.begin(), names.end());
    EXPECT_EQ(d["UUID"], docs[0]["UUID"]);
    for (const std::string& n : names) EXPECT_TRUE(d[n].is_number());
  }
  EXPECT_EQ(MetricNames(docs[0]).size(), 100u);
  EXPECT_EQ(total, 150u);
  EXPECT_EQ(all.size(), 150u);

  // The size limit splits further; every metric still sent exactly once.
  EmfOptions small = BaseOptions();
  small.max_document_bytes = 3000;
  EmfRenderer rs(*rules, small);
  docs = RenderValid(rs, w, 3000);
  EXPECT_GT(docs.size(), 2u);
  all.clear();
  total = 0;
  for (const json& d : docs) {
    for (const std::string& n : MetricNames(d)) {
      all.insert(n);
      ++total;
    }
  }
  EXPECT_EQ(total, 150u);
  EXPECT_EQ(all.size(), 150u);
  EXPECT_EQ(rs.oversize_dropped(), 0u);

  // Labels that alone exceed the limit: nothing can be sent; counted, not emitted broken.
  EmfOptions tiny = BaseOptions();
  tiny.max_document_bytes = 200;
  EmfRenderer rt(*rules, tiny);
  EXPECT_TRUE(RenderValid(rt, w, 200).empty());
  EXPECT_EQ(rt.oversize_dropped(), 150u);
}

TEST(EmfRendererTest, QuotesAndUnicodeInLabels) {
  World w(DcpEntries(), 1);
  const std::string model = "NVIDIA \"H200\" \\ ünïcødé ✓ \x01 tab\t";
  (*w.ids)[0].model_name = model + "\xff";  // plus one invalid UTF-8 byte
  auto attribution = std::make_shared<model::DeviceAttribution>();
  attribution->pods_by_device[(*w.ids)[0].uuid] = {{"ns\"q", "pod-\"x\"", "c\\d", ""}};
  w.snapshot.attribution.devices = attribution;
  Result<EmfRules> rules = ParseEmfRules(
      "metric_declaration: [{source_labels: [modelName], label_matcher: 'ü', "
      "dimensions: [[modelName], [pod], [gpu]], metric_selectors: [GPU_UTIL]}]",
      "t", nullptr);
  ASSERT_TRUE(rules.ok());
  EmfRenderer r(*rules, BaseOptions());
  std::vector<json> docs = RenderValid(r, w);
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(docs[0]["modelName"], model + "\xef\xbf\xbd");  // U+FFFD for the bad byte
  EXPECT_EQ(docs[0]["pod"], "pod-\"x\"");
  EXPECT_EQ(docs[0]["container"], "c\\d");
  // modelName is not ASCII, so that set cannot be a dimension; the others stay.
  EXPECT_EQ(docs[0]["_aws"]["CloudWatchMetrics"][0]["Dimensions"],
            json::parse(R"([["pod"],["gpu"]])"));
}

TEST(EmfRendererTest, NonFiniteValuesAreSkipped) {
  World w(DcpEntries(), 1);
  w.Set(0, 155, std::numeric_limits<double>::quiet_NaN());   // POWER_USAGE
  w.Set(0, 1001, std::numeric_limits<double>::infinity());   // GR_ENGINE_ACTIVE
  w.Set(0, 1004, -std::numeric_limits<double>::infinity());  // PIPE_TENSOR_ACTIVE
  w.Set(0, 1005, 1e200);                                     // DRAM_ACTIVE: out of range
  EmfRenderer r(DefaultEmfRules(true), BaseOptions());
  std::vector<json> docs = RenderValid(r, w);
  ASSERT_FALSE(docs.empty());
  std::set<std::string> names = MetricNames(docs[0]);
  for (const char* n : {"DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
                        "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_PROF_DRAM_ACTIVE"}) {
    EXPECT_EQ(names.count(n), 0u) << n;
    EXPECT_FALSE(docs[0].contains(n)) << n;
  }
  EXPECT_EQ(names.size(), kDefaultSelected.size() - 4);
}

TEST(EmfRendererTest, CountersAsDeltasLikeTheAgent) {
  World w(DcpEntries(), 1);
  Result<EmfRules> rules = ParseEmfRules(
      "metric_declaration: [{source_labels: [gpu], dimensions: [[gpu]], "
      "metric_selectors: [ENERGY, '^DCGM_FI_DEV_GPU_UTIL$']}]",
      "t", nullptr);
  ASSERT_TRUE(rules.ok());
  EmfOptions o = BaseOptions();
  o.counters_as_delta = true;
  EmfRenderer r(*rules, o);
  auto energy = [&](int64_t v, int seconds) -> json {
    w.Set(0, 156, v);
    w.snapshot.time = std::chrono::system_clock::time_point(std::chrono::milliseconds(kTimeMs)) +
                      std::chrono::seconds(seconds);
    std::vector<json> docs = RenderValid(r, w);
    EXPECT_EQ(docs.size(), 1u);
    return docs.empty() ? json() : docs[0].value("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", json());
  };
  EXPECT_TRUE(energy(1000, 0).is_null());  // first sample held back (the gauge still goes)
  EXPECT_EQ(energy(1600, 1), 600);         // delta
  EXPECT_EQ(energy(1600, 2), 0);
  EXPECT_EQ(energy(250, 3), 250);  // reset: the current value is the delta
  EXPECT_EQ(energy(300, 4), 50);
  EXPECT_TRUE(energy(900, 400).is_null());  // unseen for over 5 minutes: starts over
  EXPECT_EQ(energy(901, 401), 1);

  // Raw: the counter as read, from the first sample on.
  EmfRenderer raw(*rules, BaseOptions());
  w.Set(0, 156, int64_t{123456789012345});
  std::vector<json> docs = RenderValid(raw, w);
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(docs[0]["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"], 123456789012345);
}

// Energy per pod, our one own family CloudWatch gets: each window's joules (a counter: deltas),
// per pod container, per namespace and per GPU under the built-in rules; the unattributed rest
// (empty namespace) only per GPU. Our other own families stay off.
TEST(EmfRendererTest, PodEnergyGoesOutAsEachWindowsJoules) {
  EmfOptions o = BaseOptions();
  o.counters_as_delta = true;
  EmfRenderer r(DefaultEmfRules(true), o);
  auto render = [&](double pod_joules, double rest_joules, int seconds) {
    SeriesModel model;
    SeriesFamily& other = AddOwnFamily(&model, OwnFamily("nvml_exporter_gpu_up"));
    AddOwnPoint(&model, &other, std::vector<LabelView>{{"gpu", "0"}}, 1);
    // The registry gives it its EMF unit ("None").
    SeriesFamily& f = AddOwnFamily(&model, OwnFamily("nvml_exporter_pod_gpu_energy_joules_total"));
    const std::vector<LabelView> pod = {{"gpu", "0"},
                                        {"UUID", "GPU-0"},
                                        {"namespace", "ml"},
                                        {"pod", "train-0"},
                                        {"container", "main"}};
    const std::vector<LabelView> rest = {
        {"gpu", "0"}, {"UUID", "GPU-0"}, {"namespace", ""}, {"pod", ""}, {"container", ""}};
    AddOwnDoublePoint(&model, &f, pod, pod_joules, kToBoth);
    AddOwnDoublePoint(&model, &f, rest, rest_joules, kToBoth);
    std::vector<std::string> docs;
    r.Render(model,
             std::chrono::system_clock::time_point(std::chrono::milliseconds(kTimeMs)) +
                 std::chrono::seconds(seconds),
             &docs);
    std::vector<json> out;
    for (const std::string& d : docs) {
      std::vector<std::string> errors = testing::ValidateEmf(d, {});
      EXPECT_TRUE(errors.empty()) << errors.front() << "\n in " << d;
      out.push_back(json::parse(d));
    }
    return out;
  };
  EXPECT_TRUE(render(100.0, 40.0, 0).empty()) << "the first reading is held back";
  std::vector<json> docs = render(160.5, 41.0, 1);
  ASSERT_EQ(docs.size(), 2u);
  for (const json& d : docs) {
    EXPECT_FALSE(d.contains("nvml_exporter_gpu_up"));
    const json& directive = d["_aws"]["CloudWatchMetrics"][0];
    EXPECT_EQ(directive["Metrics"][0]["Unit"], "None");
    if (d["pod"] == "train-0") {
      EXPECT_DOUBLE_EQ(d["nvml_exporter_pod_gpu_energy_joules_total"].get<double>(), 60.5);
      EXPECT_EQ(d["Namespace"], "ml");
      EXPECT_EQ(directive["Dimensions"],
                json::parse(R"([["ClusterName","Namespace","container","pod"],)"
                            R"(["ClusterName","Namespace"],["ClusterName","NodeName","gpu"]])"));
    } else {
      EXPECT_DOUBLE_EQ(d["nvml_exporter_pod_gpu_energy_joules_total"].get<double>(), 1.0);
      EXPECT_EQ(directive["Dimensions"], json::parse(R"([["ClusterName","NodeName","gpu"]])"));
    }
  }
}

TEST(EmfRendererTest, HighResolutionStreamAndNoGroup) {
  World w(DcpEntries(), 1);
  EmfOptions o = BaseOptions();
  o.high_resolution = true;
  o.log_stream_name = "node1";
  o.log_group_name.clear();
  EmfRenderer r(DefaultEmfRules(true), o);
  std::vector<json> docs = RenderValid(r, w);
  ASSERT_FALSE(docs.empty());
  EXPECT_FALSE(docs[0]["_aws"].contains("LogGroupName"));
  EXPECT_EQ(docs[0]["_aws"]["LogStreamName"], "node1");
  for (const json& m : docs[0]["_aws"]["CloudWatchMetrics"][0]["Metrics"]) {
    EXPECT_EQ(m["StorageResolution"], 1);
  }
}

TEST(EmfRendererTest, NoClusterNameNoDocumentsForRulesThatNeedIt) {
  World w(DcpEntries(), 1);
  EmfOptions o = BaseOptions();
  o.extra_labels.erase(o.extra_labels.begin());  // no ClusterName
  EmfRenderer needs(DefaultEmfRules(true), o);
  EXPECT_TRUE(RenderValid(needs, w).empty());
  EmfRenderer without(DefaultEmfRules(false), o);
  std::vector<json> docs = RenderValid(without, w);
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[0]["_aws"]["CloudWatchMetrics"][0]["Dimensions"],
            json::parse(R"([["NodeName","gpu"]])"));
}

TEST(EmfRendererTest, DownGpuSendsNothing) {
  World w(DcpEntries(), 2);
  w.snapshot.devices[1].up = false;
  EmfRenderer r(DefaultEmfRules(true), BaseOptions());
  std::vector<json> docs = RenderValid(r, w);
  ASSERT_EQ(docs.size(), 2u);
  for (const json& d : docs) EXPECT_EQ(d["gpu"], "0");
}

TEST(EmfUnitTest, CatalogUnitsMapToCloudWatchUnits) {
  for (const fields::FieldDef& f : fields::AllFields()) {
    EXPECT_TRUE(IsCloudWatchUnit(EmfUnitFor(f.unit))) << f.name << " " << f.unit;
  }
  EXPECT_EQ(EmfUnitFor("%"), "Percent");
  EXPECT_EQ(EmfUnitFor("ratio"), "None");
  EXPECT_EQ(EmfUnitFor("MiB"), "Megabytes");
  EXPECT_EQ(EmfUnitFor("count"), "Count");
  EXPECT_EQ(EmfUnitFor("W"), "None");
  EXPECT_EQ(EmfUnitFor("ns"), "None");
  EXPECT_EQ(EmfUnitFor("ms"), "Milliseconds");
  EXPECT_EQ(EmfUnitFor("B/s"), "Bytes/Second");
}

}  // namespace
}  // namespace nvmlx::render
