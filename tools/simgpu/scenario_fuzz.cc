// libFuzzer entry point for the simulator's scenario files (scenario.h, SCENARIO.md): any bytes
// as a scenario. Tests feed the simulator hand-written files, so a parser crash there costs a
// confusing test failure rather than a production one; it is fuzzed because it is the largest
// YAML reader we own. Replayed over testdata/fuzz/scenario/ by scenario_fuzz_replay_test in the
// ordinary build; fuzzed by `make fuzz` (cmake/fuzz.cmake).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <variant>

#include "scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  nvmlx::simgpu::ParseResult r = nvmlx::simgpu::ParseScenario(text, "fuzz.yaml");
  if (const auto* err = std::get_if<std::string>(&r)) {
    if (err->find("fuzz.yaml") == std::string::npos) std::abort();  // errors name the file
    return 0;
  }
  const auto& s = std::get<nvmlx::simgpu::Scenario>(r);
  for (const auto& m : s.mig_devices) {
    if (m.gpu >= s.gpus.size()) std::abort();  // a MIG device belongs to a declared GPU
  }
  for (size_t i = 1; i < s.xids.size(); ++i) {
    if (s.xids[i].at_s < s.xids[i - 1].at_s) std::abort();  // sorted by time, as documented
  }
  // Every value function evaluates at a few times without trapping (UBSan checks the maths).
  for (const auto& g : s.gpus) {
    for (const auto& v : g.values) {
      for (double t : {0.0, 0.5, 1.0, 3600.0}) {
        (void)v.At(t);
        (void)v.Integral(t);
      }
    }
  }
  return 0;
}
