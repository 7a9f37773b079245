// The one step "Snapshot -> series with labels": every numeric series of a Snapshot, grouped by
// label set, with the labels in exactly dcgm-exporter's order. Renderers that need whole series
// (EMF, and any later one) build on this, so a new label (pod attribution, MIG, ...) is added
// here once.
//
// Label order (dcgm-exporter, dcgm-exporter.md §"Label order per entity group"):
//   gpu, UUID (uuid with -o), pci_bus_id, device, modelName, [GPU_I_PROFILE, GPU_I_ID] (MIG),
//   [Hostname] (if non-empty), then the "Labels" sorted byte-wise (the CSV's label fields such as
//   DCGM_FI_DRIVER_VERSION, clock_event, window_size_in_ms, xid), then the "Attributes" sorted
//   byte-wise (container, err_code, err_msg, hpc_job, namespace, pod, vgpu; container_name,
//   pod_name, pod_namespace with -o).
// Groups: per device (in Snapshot order) and per (pod, HPC job) attribute set of it (the cross
// product of the pods holding it and its jobs, as the Prometheus renderer; neither: no
// attributes), first the group of all plain fields, then DCGM_FI_DEV_XID_ERRORS
// (err_code/err_msg), then one group per DCGM_EXP_XID_ERRORS_COUNT series, then one per
// DCGM_EXP_CLOCK_EVENTS_COUNT series. Values within a group in family order (ascending field id,
// CSV order for equal ids; a repeated name keeps its first row). Down devices, string values and
// absent samples give no series; groups without values are omitted.
//
// The Prometheus renderer keeps its own per-device prefix fast path; series_test checks that both
// give the same series with the same labels in the same order, so adding a label to one without
// the other fails the tests.
//
// Pure function of its inputs: thread-safe.
#ifndef NVML_EXPORTER_RENDER_SERIES_H_
#define NVML_EXPORTER_RENDER_SERIES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/collectors_csv.h"
#include "model/snapshot.h"

namespace nvmlx::render {

struct SeriesOptions {
  std::vector<config::CollectorEntry> entries;  // metric rows and label rows, CSV order
  std::string hostname;                         // empty: no Hostname label
  std::string hostname_label = "Hostname";
  bool use_old_namespace = false;  // -o: `uuid` instead of `UUID`
  bool pod_uid = false;            // PrometheusOptions::device_pod_uid
};

using Labels = std::vector<std::pair<std::string, std::string>>;

// One series value. Integers stay exact (energy counters exceed 2^53 only in theory, but a JSON
// writer should print what NVML gave).
struct SeriesValue {
  const config::CollectorEntry* entry = nullptr;  // name, type (counter/gauge), field (unit)
  bool is_integer = false;
  int64_t int_value = 0;
  double value = 0;  // always set (the integer as double too)
  bool counter() const { return entry->type == config::MetricType::kCounter; }
};

// Every series sharing one label set.
struct SeriesGroup {
  const model::DeviceSnapshot* device = nullptr;
  Labels labels;
  std::vector<SeriesValue> values;
};

// The collectors rows in the order every renderer uses: metric rows by ascending field id (CSV
// order for equal ids), a repeated name kept once (its first row: a second HELP/TYPE block or two
// values under one name would be invalid); label rows by name, byte-wise as Go's sort.Strings,
// a repeated name once. Rows without a field are left out. Points into `entries`.
struct OrderedRows {
  std::vector<const config::CollectorEntry*> families;
  std::vector<const config::CollectorEntry*> label_rows;
};
OrderedRows OrderRows(const std::vector<config::CollectorEntry>& entries);

// Replaces *out with the series of `snapshot`. `options` must outlive *out (entries are pointed
// at).
void BuildSeries(const model::Snapshot& snapshot, const SeriesOptions& options,
                 std::vector<SeriesGroup>* out);

// Looks a label up by name in a group's labels (linear: a group has ~15).
const std::string* FindLabel(const Labels& labels, std::string_view name);

}  // namespace nvmlx::render

#endif  // NVML_EXPORTER_RENDER_SERIES_H_
