// libFuzzer entry point for the web config parser: any bytes as a --web-config-file. Built with
// clang -fsanitize=fuzzer,address by -DNVMLX_BUILD_FUZZ=ON (docs/development.md "Fuzzing"); the
// same entry point is replayed over testdata/fuzz/web_config/ by web_config_fuzz_replay_test in the
// ordinary build.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "config/web_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  nvmlx::Result<nvmlx::config::WebConfig> c = nvmlx::config::ParseWebConfig(text, "/fuzz/web.yml");
  if (!c.ok()) {
    // Every error names the file.
    if (c.status().message().rfind("/fuzz/web.yml", 0) != 0) std::abort();
    return 0;
  }
  // Invariants of an accepted config, whatever the input.
  const auto& t = c->tls;
  if (t.enabled &&
      ((t.cert.empty() && t.cert_file.empty()) || (t.key.empty() && t.key_file.empty())))
    std::abort();
  // The version order is only checked with TLS on: without a certificate the whole
  // tls_server_config is ignored, as the exporter toolkit does (it serves plain HTTP).
  if (t.enabled && t.min_version > t.max_version) std::abort();
  if (t.min_version < 10 || t.max_version > 13) std::abort();
  for (const auto& [user, hash] : c->users) {
    if (hash.size() != 60 || hash.rfind("$2", 0) != 0) std::abort();
  }
  for (const auto& [name, value] : c->headers) {
    if (value.find_first_of("\r\n") != std::string::npos) std::abort();
  }
  return 0;
}
