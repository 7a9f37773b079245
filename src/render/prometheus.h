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
// DCGM_EXP_XID_ERRORS_TOTAL (9005) adds xid and DCGM_EXP_CLOCK_EVENTS_TOTAL (9006) clock_event,
// one series per value seen since start (dcgm-exporter 4.8.3's counters; TYPE from the CSV row).
// Attribution (snapshot.attribution) adds dcgm-exporter's "attributes" after all labels, sorted
// by name with err_code/err_msg: container, hpc_job, namespace, pod, pod_uid (device_pod_uid),
// vgpu (container_name, pod_name, pod_namespace with -o). A device held by several pods
// (--kubernetes-virtual-gpus) or listed for several HPC jobs gets one series per (pod, job), in
// attribution order; a device with neither gets its series without them. Without pods, each of
// those series is followed by one copy per engine container using the device (--container-labels)
// with container="<name>" (always that name, also with -o). Integers print as %d,
// doubles with 6 decimals (Go's %f). Families with no series are omitted. Then the exporter's own
// families (nvml_exporter_*), including nvml_exporter_attribution_errors_total{source} when
// attribution_errors is set.
//
// What the page holds (families, label sets, values) is decided by BuildSeries (render/series.h);
// this file only writes a SeriesModel as text: each label set's text "{...} " once, then per
// family its HELP/TYPE and its Prometheus points.
//
// Thread-safety: RenderPrometheus(model) is a pure function of its inputs. The Snapshot overload
// also builds the model, which reads options.attribution_errors through that object's lock; both
// are safe to call from any thread.
#ifndef NVML_EXPORTER_RENDER_PROMETHEUS_H_
#define NVML_EXPORTER_RENDER_PROMETHEUS_H_

#include <string>
#include <string_view>

#include "model/snapshot.h"
#include "render/series.h"
#include "render/series_model.h"
#include "render/text_format.h"

namespace nvmlx::render {

// The page's options are the series model's (render/series.h).
using PrometheusOptions = SeriesOptions;

// Appends the exposition of `model`'s Prometheus points to *out (cleared first).
void RenderPrometheus(const SeriesModel& model, std::string* out);

// BuildSeries + RenderPrometheus(model), for callers that render one output only (--once, tests).
void RenderPrometheus(const model::Snapshot& snapshot, const PrometheusOptions& options,
                      std::string* out);

}  // namespace nvmlx::render

#endif  // NVML_EXPORTER_RENDER_PROMETHEUS_H_
