// Shared by the option parser's tests (options_test.cc, emf_options_test.cc): ParseOptions over an
// argument list and a fake environment. Test-only; Parse is a pure function of its arguments.
#ifndef NVML_EXPORTER_CONFIG_OPTIONS_TEST_FIXTURE_H_
#define NVML_EXPORTER_CONFIG_OPTIONS_TEST_FIXTURE_H_

#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/options.h"

namespace nvmlx::config::test {

// The environment a test gives the parser, name -> value.
using Env = std::map<std::string, std::string, std::less<>>;

// Runs ParseOptions over `args` (program name prepended) with `env` as the environment.
inline Result<Options> Parse(std::initializer_list<const char*> args, const Env& env = {}) {
  std::vector<std::string> storage = {"nvml-exporter"};
  for (const char* a : args) storage.emplace_back(a);
  std::vector<char*> argv;
  for (std::string& s : storage) argv.push_back(s.data());
  argv.push_back(nullptr);
  auto getenv = [&env](std::string_view name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  return ParseOptions(static_cast<int>(storage.size()), argv.data(), getenv);
}

}  // namespace nvmlx::config::test

#endif  // NVML_EXPORTER_CONFIG_OPTIONS_TEST_FIXTURE_H_
