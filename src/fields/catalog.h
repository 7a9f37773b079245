// The DCGM field catalog: every field nvml-exporter knows, with DCGM's id, name, value type, unit,
// and how to read it through NVML. Names and ids follow dcgm_fields.h (DCGM 4.6); the exported
// metric name is always the name the collectors CSV used (old DCGM names, legacy 1.x aliases and
// DCGM 4.6 new names all resolve to the same entry).
//
// The catalog is a constant table: every function here is thread-safe and allocation-free.
#ifndef NVML_EXPORTER_FIELDS_CATALOG_H_
#define NVML_EXPORTER_FIELDS_CATALOG_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "model/sample.h"
#include "nvml/nvml.h"
#include "util/status.h"

namespace nvmlx::fields {

enum class ValueKind { kInt64, kDouble, kString };

// kSlow fields cost milliseconds per call on an H200 (energy ~4 ms, PCIe throughput ~21 ms,
// violation counters ~0.7 ms, PCIe replay ~0.15 ms): the collector reads them on their own
// thread so that they never delay the cheap gauges.
enum class Cost { kFast, kSlow };

// Where a field comes from.
enum class Source {
  kDevice,     // a per-device NVML call or a batched field value
  kSystem,     // one value for the whole host (driver version, NVML version)
  kProfiling,  // DCGM_FI_PROF_*: NVML GPM on Hopper+ (FieldDef::gpm_metric_id), collect/gpm_reader
  kExporter,   // DCGM_EXP_*: computed by the exporter itself (issue 3)
  kEvent,      // event-driven (DCGM_FI_DEV_XID_ERRORS)
};

// Per-device, per-collection memo so fields that share one NVML call (memory info, utilisation,
// remapped rows, …) make it once. Owned by one collecting thread; not shared.
struct ReadContext {
  const nvml::Library& lib;
  nvml::Device device;
  std::optional<Result<nvml::MemoryInfo>> memory;
  std::optional<Result<nvml::Utilization>> utilization;
  std::optional<Result<nvml::RemappedRows>> remapped_rows;
  // Added with the reader (BAR1_TOTAL/USED/FREE share one nvmlDeviceGetBAR1MemoryInfo call).
  std::optional<Result<nvmlBAR1Memory_t>> bar1 = std::nullopt;
  // FABRIC_HEALTH_MASK and _SUMMARY share one nvmlDeviceGetGpuFabricInfoV call.
  std::optional<Result<nvml::FabricHealth>> fabric = std::nullopt;
};

using ReadFn = Result<model::Value> (*)(ReadContext& ctx);
// Converts one element of nvmlDeviceGetFieldValues (already checked: nvmlReturn == SUCCESS).
using ConvertFn = Result<model::Value> (*)(const nvmlFieldValue_t& fv);

struct FieldDef {
  int id = 0;                 // DCGM field id
  std::string_view name;      // canonical (old, dcgm-exporter) DCGM name
  std::string_view new_name;  // DCGM 4.6 name, empty if unchanged
  ValueKind kind = ValueKind::kInt64;
  std::string_view unit;  // "MHz", "Hz", "C", "W", "mJ", "J", "%", "ratio", "MiB", "B", "ns", "s",
                          // "count", "B/s"
  std::string_view help;  // our help text, used when a CSV row leaves it empty
  Source source = Source::kDevice;
  Cost cost = Cost::kFast;
  unsigned nvml_field_id = 0;   // > 0: read in the per-device batched nvmlDeviceGetFieldValues
  unsigned nvml_scope_id = 0;   // scopeId for that call (NVMLX_SCOPE_ALL_LINKS for link sums)
  ConvertFn convert = nullptr;  // with nvml_field_id
  ReadFn read = nullptr;        // dedicated call (when nvml_field_id == 0); null: not read here
  // Rate fields (`rate`: the NVLink bandwidth fields, total and per link). The reader batches
  // nvml_field_id and, when > 0, rate_partner_field_id (same scope), sums the raw counters
  // (`convert` extracts each), and reports (sum - previous sum) / seconds / rate_divisor,
  // truncated, from the second Read() of one DeviceReader on (the first records the baseline).
  unsigned rate_partner_field_id = 0;
  double rate_divisor = 1.0;
  bool rate = false;
  // Profiling fields (Source::kProfiling) that NVML GPM computes: > 0 is the nvmlGpmMetricId_t,
  // and the GPM value times gpm_scale is the DCGM value (percent * 0.01 -> ratio, MiB/s *
  // 1048576 -> B/s, 1 for raw counts; docs/nvml.md §3). 0: no GPM source, not collected.
  unsigned gpm_metric_id = 0;
  double gpm_scale = 1.0;
  // Non-empty: a field DCGM knows that nvml-exporter does not read, and why (NvSwitch, Grace CPU,
  // ConnectX, ...). A collectors row naming it gets one "metric not enabled" warning with this
  // reason and is dropped; the daemon goes on. Set only on the rows of KnownDcgmFields().
  std::string_view skip_reason;
};

// A further name that resolves to a field: 1.x lower-case names, deprecated DCGM_FI_* spellings.
struct FieldAlias {
  std::string_view name;
  int id = 0;
};

// The DCGM value of a GPM field (gpm_metric_id > 0) from the GPM metric value: times gpm_scale,
// truncated for integer fields (as DCGM's (int64_t) cast). Errors: not a GPM field, or a
// non-finite / negative result (a broken sample pair, not a measurement).
Result<model::Value> FromGpm(const FieldDef& f, double gpm_value);

// All fields, ascending id.
std::span<const FieldDef> AllFields();
const FieldDef* FindById(int id);
// Canonical names, DCGM 4.6 names and legacy aliases (1.x lower-case names such as
// "dcgm_sm_clock", deprecated DCGM_FI_* spellings). Exact, case-sensitive match. Then every other
// name DCGM knows (fields/dcgm_known.h): the catalog entry of its id when we read that id, else
// the id's known-but-skipped entry (skip_reason set). Then the twin names (AllTwinNames): their
// twin's entry. nullptr only for names neither DCGM nor a release note we read knows.
const FieldDef* FindByName(std::string_view name);
// The known name closest to `name` (edit distance, case-insensitive), over our names and every
// DCGM name, for "did you mean".
// Empty when nothing is reasonably close.
std::string SuggestName(std::string_view name);
// The legacy aliases FindByName accepts besides canonical and new names (for listings, tests).
std::span<const FieldAlias> AllAliases();

// A name newer than every DCGM header we could read, served as its same-unit older twin: the
// twin's entry (its reader, unit and type) answers for it, and the page shows the name as the
// collectors row writes it. We know the name and what it measures (a release note) but not its
// DCGM id, and we never print an id, so a name is all it needs. dcgm-exporter 4.10.0's four
// DCGM_FI_PROF_*_BYTES_PER_SECOND renames are these (docs/upstream/dcgm-exporter-4.9-4.10.md).
struct TwinName {
  std::string_view name;
  std::string_view twin;  // a name FindByName resolves to a catalog entry
};
// FindByName accepts these too (for listings, tests, docs).
std::span<const TwinName> AllTwinNames();

// The entry of a collectors row whose name no DCGM release we know has (a newer release's field,
// or a typo), when the row is skipped instead of refusing the file
// (--collectors-unknown-fields=skip). It reads nothing and has a skip_reason; the field plan
// leaves such rows out and lists their names (IsUnknownName). Never returned by FindByName.
const FieldDef* UnknownNameField();
bool IsUnknownName(const FieldDef& field);

}  // namespace nvmlx::fields

#endif  // NVML_EXPORTER_FIELDS_CATALOG_H_
