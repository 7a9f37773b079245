// libFuzzer entry point for the API server's pod JSON (pod_json.h): any bytes as a pod list and as
// a watch event line; and as a Node object (node_json.h), which shares the JSON and quantity code.
// Replayed over testdata/fuzz/pod_json/ by pod_json_fuzz_replay_test in the ordinary build; fuzzed
// with clang by -DNVMLX_BUILD_FUZZ=ON (docs/development.md "Fuzzing").
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "attribute/node_json.h"
#include "attribute/pod_json.h"
#include "model/gpu_allocation.h"

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
      // GPU amounts: only GPU resource names, never negative, each container counted at most
      // once per name.
      for (const auto& [name, a] : pod.meta.gpu_resources) {
        if (!nvmlx::model::IsGpuResourceName(name)) std::abort();
        if (a.requests < 0 || a.limits < 0) std::abort();
        if (a.containers_with_request > pod.meta.containers) std::abort();
        if (a.containers_with_limit > pod.meta.containers) std::abort();
        if (a.containers_with_request + a.containers_with_limit == 0) std::abort();
      }
    }
  }
  (void)nvmlx::attribute::ParseWatchEvent(text, **filter);
  auto node = nvmlx::attribute::ParseNode(text, "fuzz");
  if (node.ok()) {
    if (node->node_name.empty()) std::abort();  // ParseNode's contract
    const std::string& id = node->instance_id;
    if (!id.empty() && (id.size() < 3 || id.compare(0, 2, "i-") != 0)) std::abort();
    for (const auto* resources : {&node->gpu_capacity, &node->gpu_allocatable}) {
      for (const auto& [name, value] : *resources) {
        if (!nvmlx::model::IsGpuResourceName(name) || value < 0) std::abort();
      }
    }
  }
  return 0;
}
