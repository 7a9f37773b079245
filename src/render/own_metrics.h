// The registry of the exporter's own families (nvml_exporter_*): every one that any stage adds to
// the page is listed here, once, with its TYPE and HELP. The one builder (render::AddOwnFamily,
// render/series.h) takes an entry of this list, looked up by OwnFamily("name") at compile time:
// a family that is not registered does not compile, so this list is complete by construction
// (own_metrics_test also checks that every nvml_exporter_* string literal of src/ names an entry,
// and every entry is used). Why one list: the HELP and TYPE of a family were spelled in five
// places, with two argument orders; the docs and a reviewer now read them in one.
//
// Not here: the standard process_* families (app/process_metrics.h), named by Prometheus' client
// libraries' convention, which go through AddOwnFamily's (name, type, help) overload.
//
// Thread-safety: constants only.
#ifndef NVML_EXPORTER_RENDER_OWN_METRICS_H_
#define NVML_EXPORTER_RENDER_OWN_METRICS_H_

#include <string_view>

namespace nvmlx::render {

// One of our families: its name, TYPE ("gauge", "counter") and HELP.
struct OwnFamilyDef {
  std::string_view name;
  std::string_view type;
  std::string_view help;
  // The CloudWatch unit of a family that EMF gets too (its points written kToEmf); empty:
  // Prometheus only, as all but energy per pod.
  std::string_view emf_unit = {};
};

// In page order within each producer. Producers: BuildSeries' self families (render/series.cc),
// the per-pod families (render/pod_families.cc), energy per pod (render/pod_energy.cc), the
// daemon's reloads (app/daemon.cc), the server's, the sinks' and the node-fault reporter's
// (app/own_families.cc).
inline constexpr OwnFamilyDef kOwnFamilies[] = {
    // --- render/series.cc: the self families, after every other of BuildSeries.
    {"nvml_exporter_collect_duration_seconds", "gauge",
     "Time the last collection of all devices took, in seconds."},
    {"nvml_exporter_last_collect_timestamp_seconds", "gauge",
     "Unix time when the last collection started, in seconds."},
    {"nvml_exporter_gpu_up", "gauge",
     "1 if the last collection could read the GPU, 0 if it is lost, stale (a read stuck in the "
     "driver) or every read failed."},
    {"nvml_exporter_gpu_stale", "gauge",
     "1 if the GPU's reads (fast: gauges, slow: energy, PCIe, violations) did not finish within "
     "the read deadline (a call stuck in the driver); their series are left out meanwhile."},
    {"nvml_exporter_gpu_slow_reads", "gauge",
     "1 if the GPU's reads finished after the read deadline: slow, not stuck; the values shown "
     "are those of the previous collection. Present while any GPU's reads are slow."},
    {"nvml_exporter_pm_sampling_active", "gauge",
     "1 if CUPTI PM sampling holds the GPU's counters and serves its DCGM_FI_PROF_* fields; 0 "
     "while paused (SIGUSR1) or lost to another profiler (retrying with backoff)."},
    {"nvml_exporter_pm_sampling_losses_total", "counter",
     "Times PM sampling could not start or lost the GPU's counters (busy, decode error)."},
    {"nvml_exporter_pm_sampling_configurations", "gauge",
     "PM-sampling configurations the GPU's DCGM_FI_PROF_* fields are split into; above 1 they "
     "alternate between collections and each field is measured part of the time."},
    {"nvml_exporter_pm_sampling_coverage_ratio", "gauge",
     "Fraction of the last collection window in which PM sampling measured the field (0 to 1); "
     "0: the value served is the one measured when its configuration was last live."},
    {"nvml_exporter_build_info", "gauge",
     "Build and runtime information of nvml-exporter; the value is always 1."},
    {"nvml_exporter_container_labels_dropped", "gauge",
     "Running containers (per GPU or MIG instance they use) that got no container-labelled copy "
     "of its series at the last engine refresh: past the per-GPU cap, the oldest containers are "
     "kept."},
    {"nvml_exporter_collectors_skipped", "gauge",
     "Collectors rows left out because nvml-exporter does not know their field name (a newer "
     "dcgm-exporter release's field, or a typo); 1 per name, for the list in use."},
    {"nvml_exporter_attribution_errors_total", "counter",
     "Failed refreshes of an attribution source (kubelet, cgroup, apiserver, hpc); the last good "
     "attribution stays in use."},

    // --- render/pod_families.cc: per pod container, then per GPU (--kubernetes-process-metrics).
    {"nvml_exporter_pod_gpu_sm_utilization_ratio", "gauge",
     "Share of time (0-1) the GPU's SMs ran kernels of this pod container's processes since the "
     "previous collection: NVML per-process utilization summed over its processes on this GPU."},
    {"nvml_exporter_pod_gpu_memory_used_bytes", "gauge",
     "GPU memory used by this pod container's processes on this GPU, in bytes."},
    {"nvml_exporter_pod_gpu_processes", "gauge",
     "Compute processes of this pod container with a context on this GPU."},
    {"nvml_exporter_gpu_processes", "gauge",
     "Compute processes with a context on this GPU, in a pod or not."},
    {"nvml_exporter_gpu_process_memory_used_bytes", "gauge",
     "GPU memory used by all compute processes on this GPU, in bytes."},
    {"nvml_exporter_gpu_process_sm_utilization_ratio", "gauge",
     "NVML per-process SM utilization (0-1) since the previous collection, summed over all "
     "processes on this GPU."},
    {"nvml_exporter_gpu_unattributed_processes", "gauge",
     "Compute processes on this GPU that belong to no pod (host processes, or processes whose "
     "cgroup could not be read)."},

    // --- render/pod_energy.cc. CloudWatch gets it too, as the joules of each window (a counter:
    // EMF sends deltas): summed over a period they are the energy of that period, per pod,
    // namespace or GPU. No joule unit in CloudWatch: "None".
    {"nvml_exporter_pod_gpu_energy_joules_total", "counter",
     "Energy each pod container used on a GPU (or MIG instance) since the exporter started: the "
     "GPU's energy counter split among its holders (whole to an exclusive holder, by SM share on "
     "a shared GPU, by compute slices on MIG); namespace, pod and container empty for the "
     "unattributed rest.",
     "None"},

    // --- app/daemon.cc: reloads of the collectors file.
    {"nvml_exporter_config_reload_failures_total", "counter",
     "Reloads of the collectors file that were rejected (the fields in use stay)."},
    {"nvml_exporter_config_last_reload_success_timestamp_seconds", "gauge",
     "Unix time the collectors file was last loaded successfully (start-up included)."},

    // --- app/own_families.cc: the HTTP server (the web config ones only with a web config).
    {"nvml_exporter_http_connections_total", "counter",
     "HTTP connections by outcome: accepted; refused (503 at the connection limit or out of file "
     "descriptors); refused_per_source (one source address at a quarter of the limit); evicted "
     "(waiting connections closed to make room: never-completed requests first, then idle "
     "keep-alive)."},
    {"nvml_exporter_http_open_connections", "gauge", "HTTP connections open."},
    {"nvml_exporter_http_accept_errors_total", "counter",
     "accept() failures (EMFILE: out of file descriptors, ...)."},
    {"nvml_exporter_http_scrapes_refused_total", "counter",
     "/metrics requests answered 503 because --max-concurrent-scrapes responses were being "
     "written."},
    {"nvml_exporter_http_auth_failures_total", "counter",
     "Requests answered 401: missing or wrong basic-auth credentials (reason=\"wrong\"), or "
     "refused without a bcrypt check while failures are rate-limited (reason=\"rate_limited\")."},
    {"nvml_exporter_http_bcrypt_checks_total", "counter",
     "bcrypt verifications computed (cached credentials need none)."},
    {"nvml_exporter_http_bcrypt_failed_cpu_seconds_total", "counter",
     "CPU time of the bcrypt verifications that failed (wrong passwords), budgeted per source "
     "address and in total (docs/web.md)."},
    {"nvml_exporter_http_tls_handshake_errors_total", "counter",
     "TLS handshakes that failed (bad client certificate, protocol or cipher mismatch)."},
    {"nvml_exporter_web_config_reloads_total", "counter",
     "Reloads of the web config file or its certificate files after a change: ok, or failed (the "
     "previous configuration stays in use)."},
    {"nvml_exporter_web_config_last_reload_success", "gauge",
     "1 when the web config in use is the files' current content, 0 after a rejected reload."},
    // --- app/own_families.cc: the EMF sinks, per --emf-output.
    {"nvml_exporter_emf_sent_total", "counter",
     "EMF documents sent, per --emf-output (over TCP: acknowledged by the receiver)."},
    {"nvml_exporter_emf_dropped_total", "counter",
     "EMF documents dropped (queue full, unsendable, lost with a connection to a stuck receiver, "
     "or left at shutdown), per --emf-output."},
    {"nvml_exporter_emf_queue_length", "gauge",
     "EMF documents waiting to be sent, per --emf-output."},
    {"nvml_exporter_emf_receiver_stalled", "gauge",
     "1 while the receiver takes nothing (a send timed out waiting for it, or documents written "
     "stay unacknowledged), per --emf-output."},
    // --- app/own_families.cc: the node-fault reporter (--kubernetes-node-conditions).
    {"nvml_exporter_node_fault_condition", "gauge",
     "1 while this node's GPU condition is in its problem state (GpuHealthy False, "
     "GpuXidCritical or GpuLost True), as last decided (--kubernetes-node-conditions)."},
    {"nvml_exporter_node_fault_condition_writes_total", "counter",
     "PATCHes of this node's GPU conditions, by result (failed: refused or unreachable; see the "
     "log)."},
    {"nvml_exporter_node_fault_events_total", "counter",
     "GPU fault Events: created, updated (a repeat's count), failed, and rate_limited (new Events "
     "the token bucket dropped)."},
};

// The registered family `name`. Evaluated at compile time only: a name that is not in
// kOwnFamilies is a compile error (the throw is not a constant expression), so no stage can add
// an unregistered family through the builder.
consteval const OwnFamilyDef& OwnFamily(std::string_view name) {
  for (const OwnFamilyDef& f : kOwnFamilies) {
    if (f.name == name) return f;
  }
  throw "not a registered family: add it to kOwnFamilies (render/own_metrics.h)";
}

}  // namespace nvmlx::render

#endif  // NVML_EXPORTER_RENDER_OWN_METRICS_H_
