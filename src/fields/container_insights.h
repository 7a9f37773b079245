// The DCGM fields behind CloudWatch Container Insights' GPU metrics, and how each becomes one:
// the agent's table (docs/emf.md §7.2), kept here because it is field knowledge (render/ asks
// this table instead of naming field ids).
//
// Container Insights publishes seven GPU metrics at three levels, container_<suffix>,
// pod_<suffix> and node_<suffix>, each a copy of one DCGM field's sample scaled as the agent
// scales it (memory in MiB -> bytes, DCGM_FI_DEV_FB_USED_PERCENT 0..1 -> percent; the tensor
// ratio is sent unscaled, as the agent sends it). `share` says what stands in for the device's
// value in the per-pod copies on a GPU shared by several pods, when per-process data is
// collected; `gpu_wide` says that on a MIG instance the value is its GPU's (temperature, power).
//
// Thread-safety: constant data.
#ifndef NVML_EXPORTER_FIELDS_CONTAINER_INSIGHTS_H_
#define NVML_EXPORTER_FIELDS_CONTAINER_INSIGHTS_H_

#include <span>
#include <string_view>
#include <vector>

#include "model/sample.h"

namespace nvmlx::fields {

struct CiGpuMetric {
  // What a sharing pod's copy carries instead of the device's value: nothing (the device's
  // value), its processes' SM utilization in percent, their memory in bytes, or that memory as a
  // percent of the GPU's framebuffer.
  enum class Share { kDevice, kSmPercent, kMemoryBytes, kMemoryPercent };

  std::string_view suffix;  // "gpu_utilization": container_/pod_/node_ + suffix
  std::string_view unit;    // CloudWatch unit, as the agent sets it
  int field_id = 0;         // the DCGM field it copies (fields/catalog.h)
  double scale = 1;         // value = sample * scale
  Share share = Share::kDevice;
  bool gpu_wide = false;  // a MIG instance reports its GPU's value
};

// The seven metrics, in the agent's order.
std::span<const CiGpuMetric> ContainerInsightsGpuMetrics();

// The sample of `metric` among `samples` (ascending field id), scaled; false when absent or not
// numeric.
bool CiGpuValue(const CiGpuMetric& metric, const std::vector<model::Sample>& samples, double* out);

// The DCGM field names the metrics need (for the collectors file: a missing one is a metric the
// schema cannot send, which the daemon says at start).
std::vector<std::string_view> ContainerInsightsFieldNames();

// DCGM_FI_DEV_FB_TOTAL in bytes among `samples`, for the memory share of a shared GPU; false when
// absent.
bool CiFramebufferBytes(const std::vector<model::Sample>& samples, double* out);

}  // namespace nvmlx::fields

#endif  // NVML_EXPORTER_FIELDS_CONTAINER_INSIGHTS_H_
