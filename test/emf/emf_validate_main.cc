// emf_validate: checks EMF documents, one per line of stdin (or of the files named), with the
// test suite's validator. Prints each problem as "<source>:<line>: <problem>" and the count of
// documents read; exits 1 if any document is invalid or none was read. Used by the integration
// tests on what the daemon sends. `--container-insights CLUSTER` (first) also checks each document
// against Container Insights' GPU schema (ci_schema_validator.h) for that cluster;
// `--no-instance` after it: the node's InstanceId/InstanceType are not expected.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>

#include "ci_schema_validator.h"
#include "emf_validator.h"

int main(int argc, char** argv) {
  nvmlx::testing::EmfCheckOptions options;
  options.now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  std::optional<nvmlx::testing::CiSchemaOptions> ci;
  int first = 1;
  if (argc >= 3 && std::string(argv[1]) == "--container-insights") {
    ci = nvmlx::testing::CiSchemaOptions{argv[2], true};
    first = 3;
    if (argc >= 4 && std::string(argv[3]) == "--no-instance") {
      ci->instance_known = false;
      first = 4;
    }
  }
  int docs = 0, bad = 0;
  auto check = [&](std::istream& in, const std::string& source) {
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
      ++n;
      if (line.empty()) continue;
      ++docs;
      auto errors = nvmlx::testing::ValidateEmf(line, options);
      if (errors.empty() && ci) errors = nvmlx::testing::ValidateContainerInsights(line, *ci);
      if (!errors.empty()) ++bad;
      for (const auto& e : errors) std::printf("%s:%d: %s\n", source.c_str(), n, e.c_str());
    }
  };
  if (argc <= first) {
    check(std::cin, "<stdin>");
  } else {
    for (int i = first; i < argc; ++i) {
      std::ifstream f(argv[i]);
      if (!f) {
        std::printf("%s: cannot open\n", argv[i]);
        return 1;
      }
      check(f, argv[i]);
    }
  }
  std::printf("%d documents, %d invalid\n", docs, bad);
  return (bad == 0 && docs > 0) ? 0 : 1;
}
