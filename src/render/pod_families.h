// Per-pod GPU usage in the series model (render/series_model.h), from the snapshot's per-process
// samples (DeviceSnapshot::processes) joined with its attribution (process -> pod uid and container
// id from cgroups, pod uid -> namespace, name, labels and container names from the API server,
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
//  - Our own families (only with options.families), after the DCGM ones: per pod container on the
//  GPU
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
// This is the per-pod part of the series builder (render/series.h): it adds label sets, points
// and families to a SeriesModel; the renderers print them like any other.
//
// Pure functions of their inputs: thread-safe.
#ifndef NVML_EXPORTER_RENDER_POD_FAMILIES_H_
#define NVML_EXPORTER_RENDER_POD_FAMILIES_H_

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "fields/field_roles.h"
#include "model/snapshot.h"
#include "render/series_model.h"

namespace nvmlx::render {

// The names of our device and pod labels: dcgm-exporter's (UUID, namespace, pod, container), or
// with -o (--use-old-namespace) its old ones (uuid, pod_namespace, pod_name, container_name). The
// one place they are spelled: the DCGM families' labels and the self families (render/series.cc),
// our per-pod and per-GPU families (here) and energy per pod (render/pod_energy.cc) take them
// from it, so that -o renames them on every family alike.
struct LabelNames {
  std::string_view uuid, ns, pod, container;
};
constexpr LabelNames LabelNamesFor(bool use_old_namespace) {
  return use_old_namespace ? LabelNames{"uuid", "pod_namespace", "pod_name", "container_name"}
                           : LabelNames{"UUID", "namespace", "pod", "container"};
}

struct PodFamiliesOptions {
  // Per-process data is collected and attributed (--kubernetes-process-metrics, or -k with
  // --kubernetes-virtual-gpus): the per-device usage is aggregated.
  bool enabled = false;
  // Add the per-pod series to DCGM_FI_DEV_GPU_UTIL / DCGM_FI_DEV_FB_USED (dcgm-exporter's shape,
  // --kubernetes-virtual-gpus). Needs `enabled`.
  bool dcgm_per_pod_series = false;
  // Render our own nvml_exporter_pod_* / nvml_exporter_gpu_*process* families
  // (--kubernetes-process-metrics only: --kubernetes-virtual-gpus alone gives exactly
  // dcgm-exporter's series). Needs `enabled`.
  bool families = false;
  bool pod_uid_label = false;      // --kubernetes-enable-pod-uid (our families)
  bool use_old_namespace = false;  // -o: pod_name, pod_namespace, container_name, uuid
  LabelNames label_names() const { return LabelNamesFor(use_old_namespace); }
};

// What one pod container does on one GPU. The strings point into the Snapshot's attribution.
struct PodUsage {
  std::string_view owner_uid;  // as the cgroup names it (a static pod's kubelet uid); join key
  std::string_view uid, namespace_name, pod, container, vgpu;
  const model::PodMeta* meta = nullptr;  // null: the API server does not know the uid (yet)
  uint64_t memory_bytes = 0;
  uint64_t memory_mib = 0;  // sum of each process's whole MiB, as dcgm-exporter sums them
  uint64_t sm_percent = 0;
  unsigned processes = 0;
};

// What the processes on one GPU do, per pod container and in total.
struct DeviceUsage {
  std::vector<PodUsage> pods;  // sorted by namespace, pod, container, uid
  unsigned processes = 0;
  unsigned unattributed = 0;
  uint64_t memory_bytes = 0;
  uint64_t sm_percent = 0;
};

// Joins `dev`'s processes with the attribution; valid while the Snapshot lives.
DeviceUsage AggregatePodUsage(const model::DeviceSnapshot& dev,
                              const model::Attribution& attribution);

// Whether a DCGM family whose field has this pod share gets the per-pod series (GPU_UTIL and
// FB_USED, fields::PodShareOf, with dcgm_per_pod_series): its device-level series then carries no
// pod attributes.
bool PerPodSeriesField(fields::PodShare share, const PodFamiliesOptions& options);

// The label sets of the per-pod series of one device (one per usage.pods, in that order,
// appended to *sets): `device_labels` (its DCGM labels without attributes), then dcgm-exporter's
// attributes container, namespace, pod, pod_uid, vgpu.
void AddDcgmPerPodLabelSets(std::span<const LabelView> device_labels, const DeviceUsage& usage,
                            const PodFamiliesOptions& options, SeriesModel* model,
                            std::vector<uint32_t>* sets);

// The per-pod series' value of `pod` for a field of this share (GPU_UTIL: SM %; FB_USED: MiB).
uint64_t DcgmPerPodValue(fields::PodShare share, const PodUsage& pod);

// A device with series, and its usage, for AddPodFamilies.
struct PodFamilyDevice {
  const model::DeviceSnapshot* dev = nullptr;
  const DeviceUsage* usage = nullptr;
};

// Appends our per-pod and per-GPU families (options.enabled and options.families only), with
// their label sets.
void AddPodFamilies(const std::vector<PodFamilyDevice>& devices, const PodFamiliesOptions& options,
                    SeriesModel* model);

}  // namespace nvmlx::render

#endif  // NVML_EXPORTER_RENDER_POD_FAMILIES_H_
