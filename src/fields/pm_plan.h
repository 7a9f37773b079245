// PlanPmConfigurations: which PM-sampling configurations serve a GPU's profiling fields, and which
// fields no configuration can hold (docs/pm-sampling.md §3, "Alternating configurations").
//
// PM sampling collects one configuration at a time, of one pass. The fields that share a pass go
// into the first configuration in fields/pm_metrics.cc's order; fields that do not fit it go into
// further configurations, and the reader alternates between them (collect/pm_sampling_reader.h),
// as DCGM multiplexes its metric groups. A metric marked own_configuration (the tensor, FP64 and
// FP32 pipe cycle counters) is only ever configured alone: on the H200 the tensor-pipe counter
// beside the served fields, or beside SM activity, stopped the sampler under load.
//
// Pinned fields are measured without gaps: they are in every configuration, so a field that cannot
// share a pass with all of them (or needs a configuration of its own) is not served. Pinning a
// field that needs its own configuration leaves that field alone on the GPU.
//
// Pure function of the pass counts it is given: the host API's answer in the reader and in
// pm-probe --chip, a table in tests. Thread-safe (no state).
#ifndef NVML_EXPORTER_FIELDS_PM_PLAN_H_
#define NVML_EXPORTER_FIELDS_PM_PLAN_H_

#include <functional>
#include <string>
#include <vector>

#include "fields/pm_metrics.h"
#include "util/status.h"

namespace nvmlx::fields {

struct PmPlan {
  // Each configuration's metrics in priority order; pinned ones first. Empty: nothing served.
  std::vector<std::vector<const PmFieldMetric*>> configurations;
  struct Dropped {
    const PmFieldMetric* metric;
    std::string why;
  };
  std::vector<Dropped> dropped;
};

// The pass count of a set of metric names, or why the host API refused it (a metric the chip
// lacks: NOT_FOUND).
using PassCountFn = std::function<Result<size_t>(const std::vector<std::string>& metrics)>;

// `wanted`: the metrics to serve in priority order (fields/pm_metrics.cc's, for the exporter's
// fields; duplicates ignored); `pinned`: field ids that must be measured without gaps (ids not in
// `wanted` are ignored). `chip` names the chip in the
// reasons.
PmPlan PlanPmConfigurations(const std::vector<const PmFieldMetric*>& wanted,
                            const std::vector<int>& pinned, const std::string& chip,
                            const PassCountFn& passes);

}  // namespace nvmlx::fields

#endif  // NVML_EXPORTER_FIELDS_PM_PLAN_H_
