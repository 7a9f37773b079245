// Per-pod GPU usage in the Prometheus exposition, from the snapshot's per-process samples
// (DeviceSnapshot::processes) joined with its attribution (process -> pod uid and container id
// from cgroups, pod uid -> namespace, name, labels and container names from the API server,
// device -> pods from the kubelet when present).
//
// Two kinds of output:
//  - Inside the DCGM families DCGM_FI_DEV_GPU_UTIL and DCGM_FI_DEV_FB_USED: one extra series per
//    pod container on the GPU, as dcgm-exporter 4.8 emits for shared GPUs
//    (--kubernetes-virtual-gpus, transformation/process_metrics.go): the device's labels, then
//    container, namespace, pod, pod_uid (always) and vgpu (when the kubelet names a replica),
//    sorted as Go's template prints attributes; the value is the sum over the pod container's
//    processes of NVML's per-process SM % (GPU_UTIL) or of each process's memory in whole MiB
//    (FB_USED). Pods the kubelet assigns to the GPU with no process on it get 0. The device-level
//    series stays as it is. dcgm-exporter adds no pod labels to these.
//  - Our own families, after the DCGM ones: per pod container on the GPU
//    nvml_exporter_pod_gpu_sm_utilization_ratio, nvml_exporter_pod_gpu_memory_used_bytes and
//    nvml_exporter_pod_gpu_processes (labels: gpu and UUID as on nvml_exporter_gpu_up, then
//    namespace, pod, container,
//    pod_uid with --kubernetes-enable-pod-uid or when the pod's metadata is unknown, vgpu, and the
//    pod's allowlisted labels with --kubernetes-enable-pod-labels); per GPU the totals over all its
//    processes (nvml_exporter_gpu_processes, _process_memory_used_bytes,
//    _process_sm_utilization_ratio) and nvml_exporter_gpu_unattributed_processes (no pod: host
//    processes). For each GPU, the per-pod values plus the unattributed processes' equal the
//    totals. (nvml_exporter_attribution_errors_total{source} is rendered with the self metrics.)
//
// Pure functions of their inputs (the error counters are read through their own lock):
// thread-safe.
#ifndef NVML_EXPORTER_RENDER_POD_FAMILIES_H_
#define NVML_EXPORTER_RENDER_POD_FAMILIES_H_

#include <string>
#include <string_view>
#include <vector>

#include "model/snapshot.h"

namespace nvmlx::render {

struct PodFamiliesOptions {
  // Per-process data is collected (the process attribution flag): render the pod series.
  bool enabled = false;
  // Add the per-pod series to DCGM_FI_DEV_GPU_UTIL / DCGM_FI_DEV_FB_USED (dcgm-exporter's shape).
  bool dcgm_per_pod_series = false;
  bool pod_uid_label = false;      // --kubernetes-enable-pod-uid (our families)
  bool use_old_namespace = false;  // -o: pod_name, pod_namespace, container_name
};

// A device with series, and its label set "{gpu=…,…} " as every family of it starts.
struct DeviceSeriesPrefix {
  const model::DeviceSnapshot* dev = nullptr;
  std::string prefix;
};

// Whether DCGM family `field_id` gets the per-pod series (GPU_UTIL and FB_USED with
// dcgm_per_pod_series): its device-level series then carries no pod attributes.
bool PerPodSeriesField(int field_id, const PodFamiliesOptions& options);

// The per-pod series of DCGM family `field_id` (203 GPU_UTIL, 252 FB_USED; others: nothing) for
// one device, appended after its device-level series.
void AppendDcgmPerPodSeries(int field_id, std::string_view family, const DeviceSeriesPrefix& dev,
                            const model::Snapshot& snapshot, const PodFamiliesOptions& options,
                            std::string* out);

// Our per-pod and per-GPU process families.
void AppendPodFamilies(const model::Snapshot& snapshot,
                       const std::vector<DeviceSeriesPrefix>& devices,
                       const PodFamiliesOptions& options, std::string* out);

}  // namespace nvmlx::render

#endif  // NVML_EXPORTER_RENDER_POD_FAMILIES_H_
