// The PM-sampling metric behind each DCGM_FI_PROF_* field, as the catalog's gpm_metric_id is the
// GPM one: field knowledge, so it lives in fields/ (docs/pm-sampling.md §3 has the table,
// field by field, with the reasons for what is left out).
//
// Values are converted to GPM's units (percent for ratios, MiB/s for bytes) so that
// fields::FromGpm applies the same scale and rounding to both sources: the same units by
// construction.
#ifndef NVML_EXPORTER_FIELDS_PM_METRICS_H_
#define NVML_EXPORTER_FIELDS_PM_METRICS_H_

#include <span>
#include <string_view>

namespace nvmlx::fields {

struct PmFieldMetric {
  int field_id;
  std::string_view metric;  // CUPTI metric name (counter.rollup.submetric)
  double to_gpm_units;      // metric value x this = the GPM metric's value
};

// Every mapped field, in the order in which fields get a place in the single pass (the CloudWatch
// five first: GR engine, tensor, DRAM, PCIe TX/RX; then SM active and occupancy, NVLink, FP64,
// FP32). Whether a metric exists on a chip is the host API's answer (Library::BuildConfig), not a
// table of ours: a chip without it (NVLink on AD102) drops the field with that reason.
std::span<const PmFieldMetric> PmFieldMetrics();
// The entry of `field_id`, or null when PM sampling has no metric for it.
const PmFieldMetric* PmMetricFor(int field_id);
// Why a profiling field has no PM-sampling metric (for the one warning), or empty when it has.
std::string_view PmUnmappedReason(int field_id);

}  // namespace nvmlx::fields

#endif  // NVML_EXPORTER_FIELDS_PM_METRICS_H_
