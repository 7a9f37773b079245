// dcgm_fields_doc: prints the generated parts of docs/dcgm-fields.md, from the catalog
// (fields/catalog.h) and DCGM's field list (fields/dcgm_known.h): the "Served (N ids)" and "Known
// and skipped (N ids)" headings and the served ids by NVML source. `make dcgm-fields-doc` writes
// each part between its markers in the page (scripts/dcgm_fields_doc.py); the ctest test
// dcgm_fields_doc_check fails when the page differs, so a new catalog row cannot leave the page's
// counts behind. The prose around the parts stays hand-written.
//
// Output: blocks, each a line "@@ <name>" and then the block's lines (the script's input format).
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "fields/catalog.h"
#include "fields/dcgm_known.h"

namespace nvmlx::fields {
namespace {

// How the daemon reads a served field: the groups of the page's table, in its order.
enum class ReadPath {
  kDedicatedCall,
  kFieldValue,
  kLinkRate,
  kSystem,
  kGpm,
  kEvent,
  kExporter,
  kNotRead,
};

// The same test as DcgmKnownTest's Served(): a catalog row that some reader collects.
ReadPath PathOf(const FieldDef& f) {
  if (!f.skip_reason.empty()) return ReadPath::kNotRead;
  switch (f.source) {
    case Source::kDevice:
      if (f.rate && f.nvml_field_id > 0) return ReadPath::kLinkRate;
      if (f.read != nullptr) return ReadPath::kDedicatedCall;
      if (f.nvml_field_id > 0 && f.convert != nullptr) return ReadPath::kFieldValue;
      return ReadPath::kNotRead;
    case Source::kSystem:
      return f.read != nullptr ? ReadPath::kSystem : ReadPath::kNotRead;
    case Source::kProfiling:
      return f.gpm_metric_id > 0 ? ReadPath::kGpm : ReadPath::kNotRead;
    case Source::kEvent:
      return ReadPath::kEvent;
    case Source::kExporter:
      return ReadPath::kExporter;
  }
  return ReadPath::kNotRead;
}

struct PathRow {
  ReadPath path;
  std::string_view source;
};

constexpr PathRow kPathRows[] = {
    {ReadPath::kDedicatedCall, "a dedicated NVML call per device (`FieldDef::read`)"},
    {ReadPath::kFieldValue, "an element of the batched `nvmlDeviceGetFieldValues` call"},
    {ReadPath::kLinkRate, "NVLink throughput counters of that call, as a rate"},
    {ReadPath::kSystem, "one host-wide NVML call"},
    {ReadPath::kGpm, "an NVML GPM metric (profiling)"},
    {ReadPath::kEvent, "NVML events (the Xid watcher)"},
    {ReadPath::kExporter, "computed by the exporter from other reads"},
};

// Ascending ids as ranges: "1-5, 7, 9-10".
std::string Ranges(const std::vector<int>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    out += std::to_string(ids[i]);
    if (j > i) out += "-" + std::to_string(ids[j]);
    i = j + 1;
  }
  return out;
}

int Main() {
  std::vector<int> by_path[static_cast<int>(ReadPath::kNotRead) + 1];
  size_t served = 0;
  size_t skipped = 0;
  for (const DcgmFieldId& d : AllDcgmIds()) {
    const FieldDef* f = FindById(d.id);
    const ReadPath path = f != nullptr ? PathOf(*f) : ReadPath::kNotRead;
    if (path == ReadPath::kNotRead) {
      ++skipped;
      continue;
    }
    ++served;
    by_path[static_cast<int>(path)].push_back(d.id);
  }
  std::cout << "@@ served-heading\n## Served (" << served << " ids)\n";
  std::cout << "@@ served-ids\n| read through | ids | DCGM field ids |\n|---|---|---|\n";
  for (const PathRow& row : kPathRows) {
    const std::vector<int>& ids = by_path[static_cast<int>(row.path)];
    if (ids.empty()) continue;
    std::cout << "| " << row.source << " | " << ids.size() << " | " << Ranges(ids) << " |\n";
  }
  std::cout << "@@ skipped-heading\n## Known and skipped (" << skipped << " ids), by reason\n";
  return 0;
}

}  // namespace
}  // namespace nvmlx::fields

int main() { return nvmlx::fields::Main(); }
