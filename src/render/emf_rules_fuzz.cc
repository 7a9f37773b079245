// libFuzzer entry point for the EMF rules file (emf_rules.h): any bytes as the YAML or JSON
// rules text, then the parsed rules matched against a GPU's labels as the renderer does.
// Replayed over testdata/fuzz/emf_rules/ by emf_rules_fuzz_replay_test in the ordinary build;
// fuzzed by `make fuzz` (cmake/fuzz.cmake).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "render/emf_rules.h"

namespace {

// Errors and warnings name the file and hold no control byte (a NUL would cut them short).
void CheckMessage(const std::string& m) {
  if (m.rfind("fuzz.yaml:", 0) != 0) std::abort();
  for (char c : m) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) std::abort();
  }
}

bool AnyDimension(const nvmlx::render::Labels&, std::string_view) { return true; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using nvmlx::render::EmfRules;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> warnings;
  nvmlx::Result<EmfRules> rules = nvmlx::render::ParseEmfRules(text, "fuzz.yaml", &warnings);
  for (const std::string& w : warnings) CheckMessage(w);
  if (!rules.ok()) {
    CheckMessage(rules.status().message());
    return 0;
  }
  for (const auto& d : rules->declarations) {
    if (d.label_matcher == nullptr) std::abort();
    for (const auto& set : d.dimensions) {
      if (set.empty() || !std::is_sorted(set.begin(), set.end())) std::abort();
      if (std::adjacent_find(set.begin(), set.end()) != set.end()) std::abort();
    }
  }
  const nvmlx::render::Labels labels = {
      {"gpu", "0"},          {"UUID", "GPU-1"},   {"modelName", "NVIDIA H200"},
      {"hostname", "node1"}, {"namespace", "ns"}, {"pod", "p"}};
  const std::vector<std::string_view> names = {"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED",
                                               "DCGM_FI_PROF_DRAM_ACTIVE"};
  nvmlx::render::NameMatchCache cache;
  for (int pass = 0; pass < 2; ++pass) {  // the second pass answers from the cache
    auto directives = nvmlx::render::MatchRules(*rules, labels, names, AnyDimension, &cache);
    for (const auto& d : directives) {
      for (size_t m : d.metrics) {
        if (m >= names.size()) std::abort();
      }
    }
  }
  for (std::string_view n : names) (void)rules->UnitFor(n);
  return 0;
}
