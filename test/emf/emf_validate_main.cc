// emf_validate: checks EMF documents, one per line of stdin (or of the files named), with the
// test suite's validator. Prints each problem as "<source>:<line>: <problem>" and the count of
// documents read; exits 1 if any document is invalid or none was read. Used by the integration
// tests on what the daemon sends.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#include "emf_validator.h"

int main(int argc, char** argv) {
  nvmlx::testing::EmfCheckOptions options;
  options.now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  int docs = 0, bad = 0;
  auto check = [&](std::istream& in, const std::string& source) {
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
      ++n;
      if (line.empty()) continue;
      ++docs;
      auto errors = nvmlx::testing::ValidateEmf(line, options);
      if (!errors.empty()) ++bad;
      for (const auto& e : errors) std::printf("%s:%d: %s\n", source.c_str(), n, e.c_str());
    }
  };
  if (argc < 2) {
    check(std::cin, "<stdin>");
  } else {
    for (int i = 1; i < argc; ++i) {
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
