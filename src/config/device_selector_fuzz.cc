// libFuzzer entry point for the device selector (-d, device_selector.h): any bytes as the flag's
// value. Replayed over testdata/fuzz/device_selector/ by device_selector_fuzz_replay_test in the
// ordinary build; fuzzed by `make fuzz` (cmake/fuzz.cmake).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "config/device_selector.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto sel = nvmlx::config::ParseDeviceSelector(text);
  if (!sel.ok()) {
    if (sel.status().message().rfind("invalid device selector \"", 0) != 0) std::abort();
    return 0;
  }
  using Kind = nvmlx::config::DeviceSelector::Kind;
  // f has no list; a list is sorted, unique, non-empty and within the documented bound.
  if (sel->kind == Kind::kFlex && !sel->all) std::abort();
  if (sel->all != sel->ids.empty()) std::abort();
  if (!std::is_sorted(sel->ids.begin(), sel->ids.end())) std::abort();
  if (std::adjacent_find(sel->ids.begin(), sel->ids.end()) != sel->ids.end()) std::abort();
  if (!sel->ids.empty() && sel->ids.back() > 65535) std::abort();
  // The g list selects GPUs (alone, or as the g part of g+i); an i list selects instances.
  const bool g_list = sel->kind == Kind::kGpus || sel->kind == Kind::kGpusAndInstances;
  for (unsigned id : sel->ids) {
    if (sel->SelectsGpu(id) != g_list) std::abort();
  }
  if (sel->kind != Kind::kGpusAndInstances) {
    if (!sel->instances_all || !sel->instance_ids.empty()) std::abort();  // no i part
    return 0;
  }
  if (sel->instances_all != sel->instance_ids.empty()) std::abort();
  if (!std::is_sorted(sel->instance_ids.begin(), sel->instance_ids.end())) std::abort();
  for (unsigned id : sel->instance_ids) {
    if (!sel->SelectsInstance(id)) std::abort();
  }
  return 0;
}
