// libFuzzer entry point for the cgroup parser: any bytes as a /proc/<pid>/cgroup file. Built with
// clang -fsanitize=fuzzer,address by -DNVMLX_BUILD_FUZZ=ON (docs/development.md "Fuzzing"); the
// same entry point is replayed over testdata/fuzz/cgroup/ by cgroup_fuzz_replay_test in the
// ordinary build.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "attribute/cgroup.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::optional<nvmlx::model::ProcessOwner> owner = nvmlx::attribute::ParseCgroupFile(text);
  // Invariants every answer must keep, whatever the input.
  if (owner) {
    const std::string& uid = owner->pod_uid;
    if (uid.size() != 36 && uid.size() != 32) std::abort();
    if (!owner->container_id.empty() && owner->container_id.size() != 64) std::abort();
    for (char c : uid + owner->container_id) {
      const bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '-';
      if (!ok) std::abort();
    }
  }
  return 0;
}
