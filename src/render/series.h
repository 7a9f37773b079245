// BuildSeries: the one step "Snapshot + options -> SeriesModel" (render/series_model.h). Every
// family, label set and value that any renderer prints is decided here; the Prometheus writer
// and the EMF writer only format the model, so a new label (pod attribution, MIG, ...) is added
// here once.
//
// Label order (dcgm-exporter's, docs/dcgm-compat.md §4):
//   gpu, UUID (uuid with -o), pci_bus_id, device, modelName, [GPU_I_PROFILE, GPU_I_ID] (MIG),
//   [Hostname] (if non-empty), then the "Labels" sorted byte-wise (the CSV's label fields such as
//   DCGM_FI_DRIVER_VERSION, clock_event, window_size_in_ms, xid), then the "Attributes" sorted
//   byte-wise (container, dra_claim_name, dra_claim_namespace, dra_device_name, dra_driver_name,
//   dra_mig_device_uuid, dra_mig_profile, dra_pool_name, err_code, err_msg, hpc_job, namespace,
//   pod, pod_uid, vgpu; container_name, pod_name, pod_namespace with -o). A DRA holder's set
//   has the dra_* names (the two MIG ones for a MIG device) and no vgpu; pod_uid and the pod
//   labels as a device-plugin holder's (dcgm-exporter 4.8.4, upstream #718).
//
// Label sets, in creation order (the EMF writer's document order): per device (Snapshot order)
// and per (pod, HPC job) attribute set of it (the cross product of the pods holding it and its
// jobs, in attribution order; neither: no attributes; without pods, each set followed by one copy
// with container="<name>" per engine container using the device, --container-labels), first the
// set of all plain fields, then
// DCGM_FI_DEV_XID_ERRORS's (err_code/err_msg), then one per DCGM_EXP_XID_ERRORS_COUNT series
// (window_size_in_ms, xid; one valued 0 without xid when the window has none), then one per
// DCGM_EXP_CLOCK_EVENTS_COUNT series (clock_event, window_size_in_ms; one valued 0 without
// clock_event when no read succeeded, none when no reason was active), then one per
// DCGM_EXP_XID_ERRORS_TOTAL series (xid) and one per DCGM_EXP_CLOCK_EVENTS_TOTAL series
// (clock_event), none before the first event. Prometheus-only sets
// (per-pod series, our own families) come in between; the EMF writer never sees them.
//
// Families: the snapshot's field plan's families (plan/field_plan.h: the CSV's metric rows by
// ascending field id, CSV order for equal ids, a repeated name once), those without a series
// left out; what a family's series are comes from its role (fields/field_roles.h), never from its
// id; down devices, string values and absent
// samples give no series. Then, with options.pods.enabled, our per-pod and per-GPU process
// families (render/pod_families.h), then the self metrics, all registered in render/own_metrics.h
// (kOwnFamilies, the list of every nvml_exporter_* family and the one builder's registry):
// nvml_exporter_collect_duration_seconds, _last_collect_timestamp_seconds, _gpu_up (per GPU, MIG
// instances excluded, down ones too), _gpu_stale{reads} (per GPU), _gpu_slow_reads (per GPU, while
// any GPU's reads are late), _pm_sampling_active, _pm_sampling_losses_total,
// _pm_sampling_configurations and _pm_sampling_coverage_ratio{field} (per GPU PM sampling serves,
// while it serves one), _build_info, _container_labels_dropped (--container-labels),
// _collectors_skipped{name} (unknown collectors rows skipped), and
// _attribution_errors_total{source} when some source is registered.
//
// With options.pods.dcgm_per_pod_series, DCGM_FI_DEV_GPU_UTIL and DCGM_FI_DEV_FB_USED take
// dcgm-exporter 4.8's shape on the Prometheus page: the device series without attributes, then
// one series per pod container with its own share. EMF keeps the plain per-attribute-set copy of
// the device value (sending the per-pod series over EMF is a fidelity-issue decision).
//
// Thread-safety: BuildSeries is a function of its inputs, except that it reads
// options.attribution_errors through that object's lock; safe to call from any thread.
#ifndef NVML_EXPORTER_RENDER_SERIES_H_
#define NVML_EXPORTER_RENDER_SERIES_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/snapshot.h"
#include "model/source_errors.h"
#include "render/own_metrics.h"
#include "render/pod_families.h"
#include "render/series_model.h"

namespace nvmlx::render {

// nvml_exporter_build_info's labels.
struct BuildInfo {
  std::string version;
  std::string revision;
  std::string nvml_library;  // resolved path of the loaded libnvidia-ml
  std::string driver_version;
};

// What the page looks like besides the fields: fixed for the daemon's life (the fields come with
// each snapshot's plan).
struct SeriesOptions {
  std::string hostname;                     // empty: no Hostname label (-n)
  std::string hostname_label = "hostname";  // dcgm-exporter 4.8.3+ (4.8.2 and before: Hostname)
  bool use_old_namespace = false;           // -o: UUID label named "uuid"
  // --kubernetes-enable-pod-uid with -k: kubelet-attributed device series also carry pod_uid,
  // looked up by namespace/pod in snapshot.attribution.metadata (none while that is absent).
  bool device_pod_uid = false;
  // --kubernetes-enable-pod-labels with -k: kubelet-attributed device series also carry their
  // pod's labels (allow-listed and sanitised by the metadata source), sorted in with the CSV's
  // label fields as dcgm-exporter prints them; none while the metadata is absent. Off with
  // --kubernetes-virtual-gpus (app/daemon.cc), as upstream.
  bool pod_labels = false;
  // --mig-gpu-fields-on-parent: a MIG-enabled GPU's GPU-wide fields once, on the GPU's own
  // series. Off (dcgm-exporter's shape): on each of its instances' series, with GPU_I_* and that
  // instance's pod, and no GPU series of its own.
  bool mig_gpu_fields_on_parent = false;
  BuildInfo build;
  // Failed refreshes per attribution source, read once per build; null: no attribution.
  std::shared_ptr<const model::SourceErrors> attribution_errors;
  // Per-pod series (render/pod_families.h).
  PodFamiliesOptions pods;
};

// Replaces *out with the series of `snapshot`, under the plan it carries (no DCGM family without
// one). `snapshot` (hence its plan) and `options` must outlive *out (its names and labels point
// into them).
void BuildSeries(const model::Snapshot& snapshot, const SeriesOptions& options, SeriesModel* out);

// The one builder of the exporter's own families (nvml_exporter_*: Prometheus only, but for one
// with an emf_unit) for every stage that reports its own state through the page (BuildSeries'
// self and per-pod families, energy per pod, the server, the sinks, the reloads): appends the
// registered family `def` (render/own_metrics.h: AddOwnFamily(model, OwnFamily("name"))), its
// HELP and TYPE written by the one Prometheus writer like every other family's. Returns the
// family; the next AddFamily may move it, so fill it before adding another.
SeriesFamily& AddOwnFamily(SeriesModel* model, const OwnFamilyDef& def);
// The same for a family that is not ours, so not in the registry: the standard process_*
// families (app/process_metrics.h). Never for an nvml_exporter_* name (own_metrics_test checks
// that every such name is registered). `name`, `help` and `type` must outlive the model (string
// literals).
SeriesFamily& AddOwnFamily(SeriesModel* model, std::string_view name, std::string_view type,
                           std::string_view help);
// One point of such a family: `labels` (copied into the model) and an integer value.
void AddOwnPoint(SeriesModel* model, SeriesFamily* family, std::span<const LabelView> labels,
                 int64_t value);
// One point with a floating-point value (a counter of joules).
void AddOwnDoublePoint(SeriesModel* model, SeriesFamily* family, std::span<const LabelView> labels,
                       double value, uint8_t writers = kToPrometheus);
// One point in seconds, from whole milliseconds (written with 3 decimals, as the
// nvml_exporter_*_seconds families are): CPU time, a start time.
void AddOwnSecondsPoint(SeriesModel* model, SeriesFamily* family, std::span<const LabelView> labels,
                        int64_t milliseconds);

}  // namespace nvmlx::render

#endif  // NVML_EXPORTER_RENDER_SERIES_H_
