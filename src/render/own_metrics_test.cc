// The registry of our own families (render/own_metrics.h) is the list of every nvml_exporter_*
// family the code can emit: checked on the source tree (every name a non-test source spells is
// registered, every registered family is built through OwnFamily somewhere, and no family is
// built around the registry), and on a page built with every self family on.
#include "render/own_metrics.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "render/pod_energy.h"
#include "render/series.h"

namespace nvmlx::render {
namespace {

namespace fs = std::filesystem;

// The non-test sources of src/: path (relative to src/) -> text.
std::map<std::string, std::string> Sources() {
  std::map<std::string, std::string> out;
  const fs::path src = fs::path(NVMLX_SOURCE_DIR) / "src";
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(src)) {
    if (!e.is_regular_file()) continue;
    const std::string ext = e.path().extension().string();
    const std::string name = e.path().filename().string();
    if ((ext != ".cc" && ext != ".h") || name.find("_test") != std::string::npos) continue;
    std::ifstream in(e.path());
    std::stringstream text;
    text << in.rdbuf();
    out[fs::relative(e.path(), src).string()] = text.str();
  }
  return out;
}

const OwnFamilyDef* Registered(std::string_view name) {
  for (const OwnFamilyDef& f : kOwnFamilies) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

TEST(OwnMetricsTest, RegistryHasEachNameOnceWithATypeAndHelp) {
  std::set<std::string_view> seen;
  for (const OwnFamilyDef& f : kOwnFamilies) {
    EXPECT_TRUE(f.name.starts_with("nvml_exporter_")) << f.name;
    EXPECT_TRUE(seen.insert(f.name).second) << "twice: " << f.name;
    EXPECT_TRUE(f.type == "gauge" || f.type == "counter") << f.name;
    EXPECT_EQ(f.type == "counter", f.name.ends_with("_total")) << f.name;
    EXPECT_FALSE(f.help.empty()) << f.name;
  }
}

// Every "nvml_exporter_..." string literal of src/ (but the tests) names a registered family, and
// every registered family is added through OwnFamily("...") by some stage: the registry is
// exactly what the code can emit.
TEST(OwnMetricsTest, EveryNameInTheSourcesIsRegisteredAndEveryEntryIsUsed) {
  const std::map<std::string, std::string> sources = Sources();
  ASSERT_GT(sources.size(), 50u) << NVMLX_SOURCE_DIR;
  const std::regex literal("\"(nvml_exporter_[a-z0-9_]+)");
  const std::regex lookup("OwnFamily\\(\\s*\"(nvml_exporter_[a-z0-9_]+)\"\\s*\\)");
  std::set<std::string> used;
  for (const auto& [path, text] : sources) {
    for (std::sregex_iterator m(text.begin(), text.end(), literal), end; m != end; ++m) {
      EXPECT_NE(Registered((*m)[1].str()), nullptr)
          << path << " names " << (*m)[1] << ", not in kOwnFamilies (render/own_metrics.h)";
    }
    if (path == "render/own_metrics.h") continue;
    for (std::sregex_iterator m(text.begin(), text.end(), lookup), end; m != end; ++m) {
      used.insert((*m)[1].str());
    }
  }
  for (const OwnFamilyDef& f : kOwnFamilies) {
    EXPECT_TRUE(used.contains(std::string(f.name)))
        << f.name << " is registered but no stage adds it: remove it from kOwnFamilies";
  }
}

// No family is built around the one builder: SeriesModel::AddFamily() is called by BuildSeries'
// DCGM families and AddOwnFamily only (both in render/series.cc), and AddOwnFamily's
// (name, type, help) overload never takes one of our names (it is for process_*).
TEST(OwnMetricsTest, NoFamilyIsBuiltAroundTheRegistry) {
  const std::regex raw("(->|\\.)AddFamily\\(\\)");
  const std::regex unregistered("AddOwnFamily\\(\\s*[^,()]+,\\s*\"nvml_exporter_");
  for (const auto& [path, text] : Sources()) {
    if (path != "render/series.cc" && path != "render/series_model.cc" &&
        path != "render/series_model.h") {
      EXPECT_FALSE(std::regex_search(text, raw)) << path << " calls SeriesModel::AddFamily()";
    }
    EXPECT_FALSE(std::regex_search(text, unregistered))
        << path << " adds an nvml_exporter_* family by name: use OwnFamily(\"...\")";
  }
}

// A page with every self family of BuildSeries and the per-pod ones: each family that is not a
// DCGM one is registered, with the registry's TYPE and HELP.
TEST(OwnMetricsTest, BuiltFamiliesAreTheRegisteredOnes) {
  auto ids = std::make_shared<std::vector<model::DeviceIdentity>>(1);
  (*ids)[0].uuid = "GPU-0";
  model::Snapshot snap;
  snap.identities = ids;
  snap.devices.resize(1);
  model::DeviceSnapshot& dev = snap.devices[0];
  dev.identity = &(*ids)[0];
  dev.late = true;
  dev.processes = {{10, 1 << 20, true, 30, 0}};
  dev.pm_sampling = model::DeviceSnapshot::PmSampling();
  auto containers = std::make_shared<model::RuntimeContainers>();
  snap.attribution.containers = containers;
  auto errors = std::make_shared<model::SourceErrors>();
  errors->Register("kubelet");
  errors->Increment("kubelet");
  SeriesOptions options;
  options.attribution_errors = errors;
  options.pods.enabled = true;
  options.pods.families = true;
  SeriesModel model;
  BuildSeries(snap, options, &model);
  std::set<std::string_view> built;
  for (const SeriesFamily& f : model.families) {
    built.insert(f.name);
    const OwnFamilyDef* def = Registered(f.name);
    ASSERT_NE(def, nullptr) << f.name;
    EXPECT_EQ(f.type, def->type) << f.name;
    EXPECT_EQ(f.help, def->help) << f.name;
    EXPECT_EQ(f.emf_unit, def->emf_unit) << f.name;
  }
  // The ones that only come with some state: all present here.
  for (std::string_view name :
       {"nvml_exporter_gpu_stale", "nvml_exporter_gpu_slow_reads",
        "nvml_exporter_pm_sampling_active", "nvml_exporter_pm_sampling_losses_total",
        "nvml_exporter_pm_sampling_configurations", "nvml_exporter_pm_sampling_coverage_ratio",
        "nvml_exporter_container_labels_dropped", "nvml_exporter_attribution_errors_total",
        "nvml_exporter_pod_gpu_processes", "nvml_exporter_gpu_unattributed_processes"}) {
    EXPECT_TRUE(built.contains(name)) << name;
  }
}

}  // namespace
}  // namespace nvmlx::render
