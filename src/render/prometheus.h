// Renders a Snapshot as Prometheus text exposition format 0.0.4, byte-compatible with
// dcgm-exporter where it is well-formed and correct where it is not (label values and HELP are
// escaped; dcgm-exporter does not escape).
//
// Layout: one "# HELP"/"# TYPE" pair per family; families in ascending DCGM field id (CSV order
// for equal ids); series in device order; label order exactly dcgm-exporter's:
//   gpu, UUID (uuid with -o), pci_bus_id, device, modelName, [GPU_I_PROFILE, GPU_I_ID for a MIG
//   instance, whose first five labels are its parent GPU's], Hostname, then the CSV's label
//   fields sorted by name (DCGM_FI_DRIVER_VERSION, ...).
// DCGM_FI_DEV_XID_ERRORS adds err_code and err_msg after those (dcgm-exporter's attributes);
// DCGM_EXP_XID_ERRORS_COUNT (id 9001, so after every DCGM_FI_* family) adds window_size_in_ms
// and xid, one series per Xid in the window (one valued 0 without xid when there is none).
// Attribution (snapshot.attribution) adds dcgm-exporter's "attributes" after all labels, sorted
// by name with err_code/err_msg: container, hpc_job, namespace, pod, pod_uid (device_pod_uid),
// vgpu (container_name, pod_name, pod_namespace with -o). A device held by several pods
// (--kubernetes-virtual-gpus) or listed for several HPC jobs gets one series per (pod, job), in
// attribution order; a device with neither gets its series without them. Integers print as %d,
// doubles with 6 decimals (Go's %f). Families with no series are omitted. Then the exporter's own
// families (nvml_exporter_*), including nvml_exporter_attribution_errors_total{source} when
// attribution_errors is set.
//
// Pure function of its inputs: thread-safe.
#ifndef NVML_EXPORTER_RENDER_PROMETHEUS_H_
#define NVML_EXPORTER_RENDER_PROMETHEUS_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/collectors_csv.h"
#include "model/snapshot.h"
#include "model/source_errors.h"
#include "render/pod_families.h"

namespace nvmlx::render {

struct BuildInfo {
  std::string version;
  std::string revision;
  std::string nvml_library;  // resolved path of the loaded libnvidia-ml
  std::string driver_version;
};

struct PrometheusOptions {
  std::vector<config::CollectorEntry> entries;  // metric rows and label rows, CSV order
  std::string hostname;                         // empty: no Hostname label (-n)
  std::string hostname_label = "Hostname";      // dcgm-exporter <= 4.8.2 spelling
  bool use_old_namespace = false;               // -o: UUID label named "uuid"
  // --kubernetes-enable-pod-uid with -k: kubelet-attributed device series also carry pod_uid,
  // looked up by namespace/pod in snapshot.attribution.metadata (none while that is absent).
  bool device_pod_uid = false;
  BuildInfo build;
  // Failed refreshes per attribution source, read once per render; null: no attribution.
  std::shared_ptr<const model::SourceErrors> attribution_errors;
  // Per-pod series and attribution errors (render/pod_families.h).
  PodFamiliesOptions pods;
};

// Appends the exposition to *out (cleared first).
void RenderPrometheus(const model::Snapshot& snapshot, const PrometheusOptions& options,
                      std::string* out);

}  // namespace nvmlx::render

#endif  // NVML_EXPORTER_RENDER_PROMETHEUS_H_
