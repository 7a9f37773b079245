// libFuzzer entry point for the --config-file YAML parser: any bytes as the file. Built with
// clang -fsanitize=fuzzer,address by -DNVMLX_BUILD_FUZZ=ON (docs/development.md "Fuzzing"); the
// same entry point is replayed over testdata/fuzz/yaml_config/ by yaml_config_fuzz_replay_test in
// the ordinary build.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "config/yaml_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  nvmlx::Result<nvmlx::config::YamlConfig> c =
      nvmlx::config::ParseYamlConfig(text, "/fuzz/exporter.yaml");
  if (!c.ok()) {
    // Every error names the file.
    if (c.status().message().rfind("/fuzz/exporter.yaml", 0) != 0) std::abort();
    return 0;
  }
  // Invariants of an accepted file, whatever the input.
  if (c->version != 1 && c->version != 2) std::abort();
  if (c->metrics_file && !c->metrics_fields.empty()) std::abort();
  if (c->collect_interval && c->collect_interval->count() < 100) std::abort();
  for (const auto& col : c->collections) {
    if (col.name.empty() || col.patterns.empty() || col.every.count() < 100) std::abort();
    for (const auto& p : col.patterns) {
      if (!nvmlx::config::CheckFieldPattern(p).ok()) std::abort();
      (void)nvmlx::config::MatchFieldPattern(p, "DCGM_FI_DEV_GPU_TEMP");
    }
  }
  if (c->max_concurrent_scrapes && *c->max_concurrent_scrapes <= 0) std::abort();
  // The inline fields' CSV must parse or fail with a message naming the file, never crash.
  nvmlx::Result<std::vector<nvmlx::config::CollectorEntry>> rows =
      nvmlx::config::ParseCollectorsCsv(nvmlx::config::InlineFieldsCsv(*c), c->file, nullptr);
  if (!rows.ok() && rows.status().message().rfind("/fuzz/exporter.yaml", 0) != 0) std::abort();
  return 0;
}
