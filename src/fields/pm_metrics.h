// The PM-sampling metric behind each DCGM_FI_PROF_* field, as the catalog's gpm_metric_id is the
// GPM one: field knowledge, so it lives in fields/ (docs/pm-sampling.md §3 has the table,
// field by field, with the reasons for what is left out).
//
// Values are converted to GPM's units (percent for ratios, MiB/s for bytes) so that
// fields::FromGpm applies the same scale and rounding to both sources: the same units by
// construction.
#ifndef NVML_EXPORTER_FIELDS_PM_METRICS_H_
#define NVML_EXPORTER_FIELDS_PM_METRICS_H_

#include <array>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace nvmlx::fields {

struct PmFieldMetric {
  int field_id;
  std::string_view metric;  // CUPTI metric name (counter.rollup.submetric)
  double to_gpm_units;      // metric value x this = the GPM metric's value
  // Measured only in a configuration holding no other metric (fields/pm_plan.h): a pipe cycle
  // counter, which stopped the H200's sampler beside the other counters under load.
  bool own_configuration = false;
  // Chips (comma-separated) whose sampler stops completing samples with this counter configured
  // even alone, under the load it counts: a configuration that would only ever be measured while
  // its pipe is idle. The field is not served there (fields/pm_plan.h drops it, naming this).
  std::string_view stalls_alone_on = {};
  // Fields whose value (in GPM units, percent of peak) is never below this one's: a pipe is only
  // active in cycles its SM is active, and an SM only while the GR engine is (0: no field). While
  // a configuration measures such a bound at ~0, this field is 0 too without being measured, so
  // the reader need not switch to its configuration (collect/pm_sampling_reader.h; each switch
  // costs ~0.1-0.2 s of the driver's CPU on GH100).
  std::array<int, 2> bounded_by = {0, 0};
};

// A bound at or below this (percent of peak, over a whole collection window) counts as idle: the
// fields it bounds are then served as 0 without their own configuration. An idle H200 read GR
// engine activity 0.011 % and SM activity 0.000 % (docs/validation/h200-pm-sampling/
// onepass-2026-12-04.md), so 0.1 % holds idle GPUs and is below any load worth measuring.
inline constexpr double kPmIdleBoundPercent = 0.1;

// The steady hold (collect/pm_sampling_reader.h): a bound (SM activity, GR engine activity) whose
// dwell mean stays within this many percentage points of peak (GPM units) of its dwell mean when
// the pipe it bounds was last measured counts as steady, and the pipe is not measured again until
// the hold runs out. A tensor load pulsing 4 s on / 4 s off moves a 10 s dwell's mean by about
// +-6 points from dwell to dwell, as the pulses fall in it, so such a load stays held; a job
// that starts, ends or changes its activity by more ends the hold.
inline constexpr double kPmSteadyBoundPoints = 10.0;

// Every mapped field, in the order in which fields get a place in a configuration (the seed's
// CloudWatch five first where they can share a pass: GR engine, DRAM, PCIe TX/RX; then occupancy,
// NVLink, SM active; then the pipe counters measured alone: tensor, FP32, FP64). Whether a metric
// exists on a chip is the host API's answer (Library::BuildConfig), not a table of ours: a chip
// without it (NVLink on AD102) drops the field with that reason.
std::span<const PmFieldMetric> PmFieldMetrics();
// The entry of `field_id`, or null when PM sampling has no metric for it.
const PmFieldMetric* PmMetricFor(int field_id);
// Why a profiling field has no PM-sampling metric (for the one warning), or empty when it has.
std::string_view PmUnmappedReason(int field_id);
// Why `m` is not configured on `chip` although the chip has it (stalls_alone_on), or empty.
std::string PmKnownStall(const PmFieldMetric& m, std::string_view chip);

// --pm-sampling-pin's values (DCGM field names, canonical or legacy, or ids) as field ids.
// INVALID_ARGUMENT naming the value when it is no field, or a field PM sampling does not measure.
Result<std::vector<int>> ResolvePmPins(const std::vector<std::string>& values);

}  // namespace nvmlx::fields

#endif  // NVML_EXPORTER_FIELDS_PM_METRICS_H_
