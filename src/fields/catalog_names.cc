// Looking fields up by name: every spelling DCGM and dcgm-exporter accept (the table's names,
// its legacy aliases, DCGM's other names), and the "did you mean" of an unknown one. Apart from
// catalog.cc, which holds the table: these read it through AllFields() and AllAliases().
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "fields/catalog.h"
#include "fields/dcgm_known.h"

namespace nvmlx::fields {
namespace {

// ASCII only (field names are ASCII); std::tolower's locale lookup was most of a suggestion's cost.
char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// Case-insensitive Levenshtein distance, two rows; `bound` when it is at least `bound`.
size_t EditDistance(std::string_view a, std::string_view b, size_t bound) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    size_t row_min = cur[0];
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t subst = prev[j - 1] + (Lower(a[i - 1]) == Lower(b[j - 1]) ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
      row_min = std::min(row_min, cur[j]);
    }
    // A row's minimum never decreases further down: once it reaches the bound, so will the
    // distance. Unknown names are compared with every DCGM name, so this keeps a typo's
    // suggestion cheap (and the collectors CSV fuzzer fast).
    if (row_min >= bound) return bound;
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// dcgm-exporter 4.10.0 (DCGM 4.8.0) renamed four profiling rates in its shipped collectors and
// said the unit stays bytes per second (its release notes;
// docs/upstream/dcgm-exporter-4.9-4.10.md). No stored DCGM header or go-dcgm gives their ids, so
// each is its older twin by name.
constexpr TwinName kTwinNames[] = {
    {"DCGM_FI_PROF_PCIE_TX_BYTES_PER_SECOND", "DCGM_FI_PROF_PCIE_TX_BYTES"},
    {"DCGM_FI_PROF_PCIE_RX_BYTES_PER_SECOND", "DCGM_FI_PROF_PCIE_RX_BYTES"},
    {"DCGM_FI_PROF_NVLINK_TX_BYTES_PER_SECOND", "DCGM_FI_PROF_NVLINK_TX_BYTES"},
    {"DCGM_FI_PROF_NVLINK_RX_BYTES_PER_SECOND", "DCGM_FI_PROF_NVLINK_RX_BYTES"},
};

// A row nothing can read: no id, no reader, only the reason the plan gives when it skips it.
constexpr FieldDef MakeUnknownName() {
  FieldDef f;
  f.skip_reason = "not a DCGM field name nvml-exporter knows (a newer release's field, or a typo)";
  return f;
}
constexpr FieldDef kUnknownName = MakeUnknownName();

// The catalog's own names (canonical, new, legacy aliases) and every other DCGM spelling.
const FieldDef* FindKnownName(std::string_view name) {
  for (const FieldDef& f : AllFields()) {
    if (f.name == name || f.new_name == name) return &f;
  }
  for (const FieldAlias& a : AllAliases()) {
    if (a.name == name) return FindById(a.id);
  }
  // Any other spelling DCGM accepts: the field we read under that id, else the skipped entry.
  if (const DcgmFieldName* d = FindDcgmName(name); d != nullptr) {
    if (const FieldDef* f = FindById(d->id); f != nullptr) return f;
    return KnownDcgmField(d->id);
  }
  return nullptr;
}

}  // namespace

std::span<const TwinName> AllTwinNames() { return kTwinNames; }

const FieldDef* UnknownNameField() { return &kUnknownName; }

bool IsUnknownName(const FieldDef& field) { return &field == &kUnknownName; }

const FieldDef* FindByName(std::string_view name) {
  if (name.empty()) return nullptr;
  if (const FieldDef* f = FindKnownName(name); f != nullptr) return f;
  for (const TwinName& t : kTwinNames) {
    if (t.name == name) return FindKnownName(t.twin);
  }
  return nullptr;
}

std::string SuggestName(std::string_view name) {
  if (name.empty()) return "";
  // "Reasonably close": a typo or two, more for long names (a quarter of the length).
  const size_t limit = std::max<size_t>(2, name.size() / 4);
  std::string_view best;
  size_t best_d = limit + 1;
  auto consider = [&](std::string_view candidate) {
    if (candidate.empty()) return;
    // Lengths that differ by more than the limit cannot be within it.
    const size_t diff = candidate.size() > name.size() ? candidate.size() - name.size()
                                                       : name.size() - candidate.size();
    if (diff >= best_d) return;
    const size_t d = EditDistance(name, candidate, best_d);
    if (d < best_d) {
      best_d = d;
      best = candidate;
    }
  };
  for (const FieldDef& f : AllFields()) {
    consider(f.name);
    consider(f.new_name);
  }
  for (const FieldAlias& a : AllAliases()) consider(a.name);
  for (const TwinName& t : kTwinNames) consider(t.name);
  for (const DcgmFieldName& d : AllDcgmNames()) consider(d.name);
  return std::string(best);
}

}  // namespace nvmlx::fields
