// libFuzzer entry point for the API server's pod JSON (pod_json.h): any bytes as a pod list and as
// a watch event line. Replayed over testdata/fuzz/pod_json/ by pod_json_fuzz_replay_test in the
// ordinary build; fuzzed with clang by -DNVMLX_BUILD_FUZZ=ON (docs/development.md "Fuzzing").
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "attribute/pod_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto* filter = new std::shared_ptr<const nvmlx::attribute::LabelFilter>(
      nvmlx::attribute::LabelFilter::Create(true, {"^app", "team"}));
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto list = nvmlx::attribute::ParsePodList(text, **filter);
  if (list.ok()) {
    for (const auto& pod : list->pods) {
      if (pod.meta.uid.empty() || pod.meta.pod.empty()) std::abort();  // ParsePod's contract
      for (const auto& [name, value] : pod.meta.labels) {
        for (char c : name) {
          const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                          (c >= '0' && c <= '9') || c == '_';
          if (!ok) std::abort();
        }
        if (!name.empty() && name[0] >= '0' && name[0] <= '9') std::abort();
      }
    }
  }
  (void)nvmlx::attribute::ParseWatchEvent(text, **filter);
  return 0;
}
