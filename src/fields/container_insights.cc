#include "fields/container_insights.h"

#include <variant>

#include "fields/catalog.h"
#include "fields/field_ids.h"

namespace nvmlx::fields {
namespace {

constexpr double kMib = 1024.0 * 1024.0;
using Share = CiGpuMetric::Share;

// docs/emf.md §7.2: the agent's rename map (metricstransform) and units (the receiver's unit
// table). The tensor ratio is not scaled by the agent: 0..1 with unit Percent, as it publishes.
constexpr CiGpuMetric kCiMetrics[] = {
    {"gpu_utilization", "Percent", ids::kGpuUtil, 1, Share::kSmPercent, false},
    {"gpu_memory_utilization", "Percent", ids::kFbUsedPercent, 100, Share::kMemoryPercent, false},
    {"gpu_memory_used", "Bytes", ids::kFbUsed, kMib, Share::kMemoryBytes, false},
    {"gpu_memory_total", "Bytes", ids::kFbTotal, kMib, Share::kDevice, false},
    {"gpu_temperature", "None", ids::kGpuTemp, 1, Share::kDevice, true},
    {"gpu_power_draw", "None", ids::kPowerUsage, 1, Share::kDevice, true},
    {"gpu_tensor_core_utilization", "Percent", ids::kTensorActive, 1, Share::kDevice, false},
};

bool Numeric(const model::Sample* s, double* out) {
  if (s == nullptr) return false;
  if (const int64_t* i = std::get_if<int64_t>(&s->value)) {
    *out = static_cast<double>(*i);
    return true;
  }
  if (const double* d = std::get_if<double>(&s->value)) {
    *out = *d;
    return true;
  }
  return false;
}

}  // namespace

std::span<const CiGpuMetric> ContainerInsightsGpuMetrics() { return kCiMetrics; }

bool CiGpuValue(const CiGpuMetric& metric, const std::vector<model::Sample>& samples, double* out) {
  double v = 0;
  if (!Numeric(model::FindSample(samples, metric.field_id), &v)) return false;
  *out = v * metric.scale;
  return true;
}

std::vector<std::string_view> ContainerInsightsFieldNames() {
  std::vector<std::string_view> names;
  for (const CiGpuMetric& m : kCiMetrics) {
    if (const FieldDef* f = FindById(m.field_id)) names.push_back(f->name);
  }
  return names;
}

bool CiFramebufferBytes(const std::vector<model::Sample>& samples, double* out) {
  double v = 0;
  if (!Numeric(model::FindSample(samples, ids::kFbTotal), &v)) return false;
  *out = v * kMib;
  return true;
}

}  // namespace nvmlx::fields
