// dcgm-exporter's device selector (-d / DCGM_EXPORTER_DEVICES_STR): "f", "g", "g:0,1", "g:0-3",
// "i", "i:0,2-4", and since 4.8.3 the two kinds together: "g+i", "g:0,1+i:2", "i+g:0" (each
// kind once, `f` alone). `f`: every GPU, a MIG-enabled one as its MIG instances; `g`: GPUs (by
// NVML index); `i`: MIG instances (numbered from 0 across the host, GPU by GPU in MIG slot
// order); `g+i`: the GPUs the g part names and the MIG instances the i part names. The collector
// applies it (collect/collector_setup.cc). Pure value type: thread-safe.
#ifndef NVML_EXPORTER_CONFIG_DEVICE_SELECTOR_H_
#define NVML_EXPORTER_CONFIG_DEVICE_SELECTOR_H_

#include <string_view>
#include <vector>

#include "util/status.h"

namespace nvmlx::config {

struct DeviceSelector {
  enum class Kind { kFlex, kGpus, kInstances, kGpusAndInstances };
  Kind kind = Kind::kFlex;
  // kGpus, kInstances: that kind's list; kGpusAndInstances: the g part's.
  bool all = true;            // no ":list" given
  std::vector<unsigned> ids;  // sorted, unique; only when !all
  // kGpusAndInstances: the i part's list.
  bool instances_all = true;
  std::vector<unsigned> instance_ids;  // sorted, unique; only when !instances_all

  // True when GPU `index` is selected as a GPU (kFlex, kGpus and the g part of
  // kGpusAndInstances; kInstances selects none at GPU level).
  bool SelectsGpu(unsigned index) const;
  // True when MIG instance `ordinal` (the host-wide number) is selected (kFlex, kInstances and
  // the i part of kGpusAndInstances; kGpus selects none).
  bool SelectsInstance(unsigned ordinal) const;
};

// Errors are INVALID_ARGUMENT naming the value and what was expected, e.g.
// `invalid device selector "g:1-": expected a number after '-'`.
Result<DeviceSelector> ParseDeviceSelector(std::string_view text);

}  // namespace nvmlx::config

#endif  // NVML_EXPORTER_CONFIG_DEVICE_SELECTOR_H_
