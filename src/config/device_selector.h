// dcgm-exporter's device selector (-d / DCGM_EXPORTER_DEVICES_STR): "f", "g", "g:0,1", "g:0-3",
// "i", "i:0,2-4". `f`: every GPU, a MIG-enabled one as its MIG instances; `g`: GPUs (by NVML
// index); `i`: MIG instances (numbered from 0 across the host, GPU by GPU in MIG slot order). The
// collector applies it (collect/mig.h). Pure value type: thread-safe.
#ifndef NVML_EXPORTER_CONFIG_DEVICE_SELECTOR_H_
#define NVML_EXPORTER_CONFIG_DEVICE_SELECTOR_H_

#include <string_view>
#include <vector>

#include "util/status.h"

namespace nvmlx::config {

struct DeviceSelector {
  enum class Kind { kFlex, kGpus, kInstances };
  Kind kind = Kind::kFlex;
  bool all = true;            // no ":list" given
  std::vector<unsigned> ids;  // sorted, unique; only when !all

  // True when GPU `index` is selected (kFlex and kGpus; kInstances selects none at GPU level).
  bool SelectsGpu(unsigned index) const;
};

// Errors are INVALID_ARGUMENT naming the value and what was expected, e.g.
// `invalid device selector "g:1-": expected a number after '-'`.
Result<DeviceSelector> ParseDeviceSelector(std::string_view text);

}  // namespace nvmlx::config

#endif  // NVML_EXPORTER_CONFIG_DEVICE_SELECTOR_H_
