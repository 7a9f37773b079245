// Every field DCGM knows: each DCGM field id with its canonical name, value type and entity group,
// and every name dcgm-exporter accepts for one (current and legacy spellings), from our generated
// table dcgm_field_list.inc (scripts/gen_dcgm_fields.py; docs/dcgm-fields.md lists the sources and
// versions). The catalog (fields/catalog.h) says which of them we read; for the others, each id's
// FieldDef here carries the reason we skip it, so a collectors file naming one loads with a
// warning instead of failing.
//
// Constant tables: every function here is thread-safe and allocation-free.
#ifndef NVML_EXPORTER_FIELDS_DCGM_KNOWN_H_
#define NVML_EXPORTER_FIELDS_DCGM_KNOWN_H_

#include <span>
#include <string_view>

#include "fields/catalog.h"

namespace nvmlx::fields {

// DCGM's entity groups (DCGM_FE_*): what a field describes. kUnknown: no entry in DCGM's field
// metadata table (range markers, fields newer than the metadata copy we generate from).
enum class DcgmEntity {
  kUnknown,
  kNone,
  kGpu,
  kVgpu,
  kSwitch,
  kGpuInstance,
  kComputeInstance,
  kLink,
  kCpu,
  kCpuCore,
  kConnectX,
};

struct DcgmFieldId {
  int id = 0;
  std::string_view name;  // the spelling of the go-dcgm version dcgm-exporter pins
  char type = '?';        // DCGM_FT_*: 'i' int64, 'd' double, 's' string, 't' timestamp,
                          // 'b' binary blob, '?' not in DCGM's metadata table
  DcgmEntity entity = DcgmEntity::kUnknown;
  std::string_view unit;  // DCGM's unit text, often empty
};

struct DcgmFieldName {
  std::string_view name;
  int id = 0;
};

// One row per DCGM field id, ascending.
std::span<const DcgmFieldId> AllDcgmIds();
const DcgmFieldId* FindDcgmId(int id);
// Every accepted name, ascending (byte order). Exact, case-sensitive, as go-dcgm's GetFieldID.
std::span<const DcgmFieldName> AllDcgmNames();
const DcgmFieldName* FindDcgmName(std::string_view name);

// The skipped-field entry of a DCGM id (skip_reason set, no read), or nullptr when DCGM does not
// know the id. Also defined for ids the catalog reads; FindByName prefers the catalog's entry.
const FieldDef* KnownDcgmField(int id);

// Why nvml-exporter does not read a DCGM field: the text of KnownDcgmField(id)->skip_reason.
std::string_view SkipReasonFor(const DcgmFieldId& f);

}  // namespace nvmlx::fields

#endif  // NVML_EXPORTER_FIELDS_DCGM_KNOWN_H_
