// libFuzzer entry point for the collectors CSV parser (collectors_csv.h): any bytes as a
// collectors file. Replayed over testdata/fuzz/collectors_csv/ by collectors_csv_fuzz_replay_test
// in the ordinary build; fuzzed by `make fuzz` (cmake/fuzz.cmake).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "config/collectors_csv.h"

namespace {

// A message an operator reads: it names the file and a line, and holds no byte that a terminal
// or a log shipper would swallow (a NUL cuts a C string; other control bytes are escaped).
void CheckMessage(const std::string& m) {
  if (m.rfind("fuzz.csv", 0) != 0) std::abort();
  for (char c : m) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> warnings;
  auto rows = nvmlx::config::ParseCollectorsCsv(text, "fuzz.csv", &warnings);
  for (const std::string& w : warnings) CheckMessage(w);
  if (!rows.ok()) {
    CheckMessage(rows.status().message());
    return 0;
  }
  std::set<std::string> names;
  int last_line = 0;
  for (const auto& row : *rows) {
    if (row.field == nullptr || row.name.empty()) std::abort();
    if (row.line <= last_line) std::abort();  // rows come in file order, one per line at most
    if (!names.insert(row.name).second) std::abort();  // duplicates are dropped with a warning
    last_line = row.line;
  }
  return 0;
}
