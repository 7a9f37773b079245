#include "fields/dcgm_known.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <utility>

namespace nvmlx::fields {
namespace {

constexpr DcgmFieldId kIds[] = {
#define NVMLX_DCGM_ID(id, name, type, entity, unit) {id, name, type, DcgmEntity::entity, unit},
#include "fields/dcgm_field_list.inc"
#undef NVMLX_DCGM_ID
};

constexpr DcgmFieldName kNames[] = {
#define NVMLX_DCGM_NAME(name, id) {name, id},
#include "fields/dcgm_field_list.inc"
#undef NVMLX_DCGM_NAME
};

constexpr bool IdsAscending() {
  for (size_t i = 1; i < std::size(kIds); ++i) {
    if (kIds[i - 1].id >= kIds[i].id) return false;
  }
  return true;
}
constexpr bool NamesAscending() {
  for (size_t i = 1; i < std::size(kNames); ++i) {
    if (!(kNames[i - 1].name < kNames[i].name)) return false;
  }
  return true;
}
static_assert(IdsAscending(), "dcgm_field_list.inc: ids must ascend (FindDcgmId bisects)");
static_assert(NamesAscending(), "dcgm_field_list.inc: names must ascend (FindDcgmName bisects)");

constexpr bool StartsWith(std::string_view s, std::string_view p) { return s.starts_with(p); }

// The reasons, in our words. Ordered from the most specific test to the catch-all; each says what
// DCGM has that NVML does not (docs/dcgm-fields.md explains them).
constexpr std::string_view Reason(int id, std::string_view name, char type, DcgmEntity entity) {
  if (id == 0) return "DCGM_FI_UNKNOWN is DCGM's null field id, not a measurement";
  if (name.find("_FIRST_") != std::string_view::npos ||
      name.find("_LAST_") != std::string_view::npos ||
      name.find("INTERNAL_FIELDS") != std::string_view::npos) {
    return "a range marker of dcgm_fields.h, not a field";
  }
  if (entity == DcgmEntity::kSwitch || StartsWith(name, "DCGM_FI_DEV_NVSWITCH_")) {
    return "NvSwitch fields need DCGM's NvSwitch module; NVML does not read NvSwitches";
  }
  if (entity == DcgmEntity::kCpu || entity == DcgmEntity::kCpuCore ||
      StartsWith(name, "DCGM_FI_DEV_CPU_")) {
    return "CPU fields: Grace CPUs are not read through NVML";
  }
  if (entity == DcgmEntity::kConnectX || StartsWith(name, "DCGM_FI_DEV_CONNECTX_")) {
    return "ConnectX fields need DCGM's NVSDM module; NVML does not read network adapters";
  }
  if (entity == DcgmEntity::kLink) {
    return "NVLink-entity fields (DCGM_FE_LINK) need DCGM's link entities; nvml-exporter serves "
           "per-GPU series";
  }
  if (entity == DcgmEntity::kVgpu) {
    return "vGPU-instance fields: nvml-exporter does not enumerate vGPU instances";
  }
  if (StartsWith(name, "DCGM_FI_DEV_DIAG_")) {
    return "results of DCGM diagnostics (dcgmi diag), which nvml-exporter does not run";
  }
  if (StartsWith(name, "DCGM_FI_IMEX_")) {
    return "IMEX status comes from DCGM's IMEX integration, not from NVML";
  }
  if (StartsWith(name, "DCGM_FI_PROF_")) return "no NVML GPM metric for this profiling field";
  if (type == 'b') return "a binary (blob) field, which dcgm-exporter cannot export either";
  return "no NVML source that nvml-exporter reads for this field yet";
}

constexpr ValueKind KindOf(char type) {
  if (type == 'd') return ValueKind::kDouble;
  if (type == 's') return ValueKind::kString;
  return ValueKind::kInt64;
}

constexpr FieldDef Skipped(const DcgmFieldId& d) {
  FieldDef f;
  f.id = d.id;
  f.name = d.name;
  f.kind = KindOf(d.type);
  f.unit = d.unit;
  f.skip_reason = Reason(d.id, d.name, d.type, d.entity);
  return f;
}

template <size_t... I>
constexpr auto MakeSkipped(std::index_sequence<I...>) {
  return std::array<FieldDef, sizeof...(I)>{Skipped(kIds[I])...};
}
// Built once, on first use. Not constexpr: evaluating the reasons of 659 ids at compile time
// passes clang 14's constexpr step limit (g++ 12's is higher). Trivially destructible.
const std::array<FieldDef, std::size(kIds)>& SkippedTable() {
  static const std::array<FieldDef, std::size(kIds)> table =
      MakeSkipped(std::make_index_sequence<std::size(kIds)>());
  return table;
}

}  // namespace

std::span<const DcgmFieldId> AllDcgmIds() { return kIds; }

const DcgmFieldId* FindDcgmId(int id) {
  const auto* it = std::lower_bound(std::begin(kIds), std::end(kIds), id,
                                    [](const DcgmFieldId& f, int v) { return f.id < v; });
  return (it != std::end(kIds) && it->id == id) ? it : nullptr;
}

std::span<const DcgmFieldName> AllDcgmNames() { return kNames; }

const DcgmFieldName* FindDcgmName(std::string_view name) {
  const auto* it =
      std::lower_bound(std::begin(kNames), std::end(kNames), name,
                       [](const DcgmFieldName& f, std::string_view v) { return f.name < v; });
  return (it != std::end(kNames) && it->name == name) ? it : nullptr;
}

const FieldDef* KnownDcgmField(int id) {
  const DcgmFieldId* d = FindDcgmId(id);
  return d == nullptr ? nullptr : &SkippedTable()[static_cast<size_t>(d - std::begin(kIds))];
}

std::string_view SkipReasonFor(const DcgmFieldId& f) {
  return Reason(f.id, f.name, f.type, f.entity);
}

}  // namespace nvmlx::fields
