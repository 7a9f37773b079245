// Shared by the option parser's tests (options_test.cc, options_scrape_test.cc,
// emf_options_test.cc): ParseOptions over an argument list and a fake environment, the message of
// a refused line, the options that warned. Test-only; pure functions of their arguments.
#ifndef NVML_EXPORTER_CONFIG_OPTIONS_TEST_FIXTURE_H_
#define NVML_EXPORTER_CONFIG_OPTIONS_TEST_FIXTURE_H_

#include <gtest/gtest.h>

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

// The message of a line the parser refuses (always INVALID_ARGUMENT, exit code kUsage), or
// "<parsed>" when it accepts it.
inline std::string Error(std::initializer_list<const char*> args, const Env& env = {}) {
  Result<Options> r = Parse(args, env);
  if (r.ok()) return "<parsed>";
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ExitCodeFor(r.status()), ExitCode::kUsage);
  return r.status().message();
}

// The long names of the options that logged a start-up warning, in order.
inline std::vector<std::string> WarnedOptions(const Options& o) {
  std::vector<std::string> names;
  for (const Options::StartupWarning& w : o.startup_warnings) names.push_back(w.option);
  return names;
}

}  // namespace nvmlx::config::test

#endif  // NVML_EXPORTER_CONFIG_OPTIONS_TEST_FIXTURE_H_
