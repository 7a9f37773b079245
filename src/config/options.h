// Command-line flags and environment variables, compatible with dcgm-exporter 4.8.4 (urfave/cli),
// the newest release whose sources could be read: the same long names, short forms (including the
// multi-letter `-rbmn`), env vars and defaults. As in Go's flag package, a name may be written
// with one dash or two (`-collectors`, `--f`), and a value either as the next argument or after
// '='.
//
// Precedence: an explicit flag beats its env var, which beats the YAML file of --config-file
// (config/yaml_config.h), which beats the default. An env var that is set but empty counts as
// unset. Booleans from env vars and from `--flag=value` follow Go's strconv.ParseBool (1, t, T,
// TRUE, true, True, 0, f, F, FALSE, false, False).
//
// Every flag of dcgm-exporter 4.5.3-4.8.2, and those 4.8.3 (--config-file, --web-*-timeout,
// --container-labels, --container-runtime-socket) and 4.8.4 (--max-concurrent-scrapes,
// --enable-exporter-metrics, --health-require-gpus, --watch-max-keep-*) added, is accepted.
// Those about DCGM itself (-r, -p, -s, --dump-*, --watch-max-keep-*, ...) have no effect: each
// one set adds a warning to startup_warnings naming the flag or env var and why (app/ logs them
// once at start), never silently ignored. Any other name is an unknown flag. The flags of
// nvml-exporter itself take NVML_EXPORTER_* env vars.
// docs/compatibility.md lists every flag of 4.8.4 side by side with dcgm-exporter's, with the
// upstream source of each.
//
// Pure function over its inputs (argv and the getenv callback): thread-safe.
#ifndef NVML_EXPORTER_CONFIG_OPTIONS_H_
#define NVML_EXPORTER_CONFIG_OPTIONS_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/device_selector.h"
#include "config/exit_code.h"
#include "util/go_duration.h"
#include "util/status.h"

namespace nvmlx::config {

enum class LogFormat { kText, kJson };
// What a collectors row naming a field nvml-exporter does not know does
// (--collectors-unknown-fields): kSkip leaves the row out with one warning naming file:line and
// lists it in nvml_exporter_collectors_skipped, so that a name from a newer dcgm-exporter release
// cannot stop the daemon; kFatal refuses the file, as dcgm-exporter does (exit 2 at start, the
// reload rejected).
enum class UnknownFields { kSkip, kFatal };
enum class KubernetesGpuIdType { kUid, kDeviceName };

struct Options {
  // -f / --collectors / DCGM_EXPORTER_COLLECTORS
  std::string collectors = "/etc/dcgm-exporter/default-counters.csv";
  // -a / --address / DCGM_EXPORTER_LISTEN: host:port, [v6]:port or :port
  std::string address = ":9400";
  // -c / --collect-interval / DCGM_EXPORTER_INTERVAL, milliseconds, >= 100
  int collect_interval_ms = 30000;
  // -d / --devices / DCGM_EXPORTER_DEVICES_STR, as written and parsed
  std::string devices_text = "f";
  DeviceSelector devices;
  // -n / --no-hostname / DCGM_EXPORTER_NO_HOSTNAME: no hostname label
  bool no_hostname = false;
  // NODE_NAME: the hostname label's value; empty means gethostname()
  std::string node_name;
  // -o / --use-old-namespace / DCGM_EXPORTER_USE_OLD_NAMESPACE: `uuid` instead of `UUID`
  bool use_old_namespace = false;
  // -rbmn / --replace-blanks-in-model-name / DCGM_EXPORTER_REPLACE_BLANKS_IN_MODEL_NAME
  bool replace_blanks_in_model_name = false;
  // -x / --xid-count-window-size / DCGM_EXPORTER_XID_COUNT_WINDOW_SIZE: the window of
  // DCGM_EXP_XID_ERRORS_COUNT in milliseconds, >= 1
  int64_t xid_count_window_ms = 300000;
  // --clock-events-count-window-size / DCGM_EXPORTER_CLOCK_EVENTS_COUNT_WINDOW_SIZE: the window
  // of DCGM_EXP_CLOCK_EVENTS_COUNT in milliseconds, >= 1
  int64_t clock_events_count_window_ms = 300000;
  // --debug / DCGM_EXPORTER_DEBUG
  bool debug = false;
  // --log-format / DCGM_EXPORTER_LOG_FORMAT: text | json
  LogFormat log_format = LogFormat::kText;
  // --fake-gpus / DCGM_EXPORTER_USE_FAKE_GPUS: load the simulated NVML instead of the driver's.
  // Also set by a non-empty fake_gpus_scenario.
  bool fake_gpus = false;
  // --fake-gpus-scenario / NVML_EXPORTER_FAKE_GPUS_SCENARIO: scenario file for the simulator
  std::string fake_gpus_scenario;
  // --nvml-library / NVML_EXPORTER_NVML_LIBRARY: what to dlopen
  std::string nvml_library = "libnvidia-ml.so.1";
  // --profiling-source / NVML_EXPORTER_PROFILING_SOURCE: auto, gpm, pm-sampling or none
  std::string profiling_source = "auto";
  // --cupti-library / NVML_EXPORTER_CUPTI_LIBRARY: CUPTI for PM sampling (docs/pm-sampling.md)
  std::string cupti_library = "libcupti.so.13";
  // --pm-sampling-interval / NVML_EXPORTER_PM_SAMPLING_INTERVAL: milliseconds, 20-1000
  int pm_sampling_interval_ms = 500;
  // --pm-sampling-dwell / NVML_EXPORTER_PM_SAMPLING_DWELL: least live time of an alternated
  // configuration, milliseconds, 0-600000 (0: three sampling intervals)
  int pm_sampling_dwell_ms = 10000;
  // --pm-sampling-steady-hold / NVML_EXPORTER_PM_SAMPLING_STEADY_HOLD: longest time a pipe
  // configuration is skipped while its bounds stay steady, milliseconds, 0-3600000 (0: off)
  int pm_sampling_steady_hold_ms = 60000;
  // --pm-sampling-pin / NVML_EXPORTER_PM_SAMPLING_PIN: DCGM field names or ids, as given (the
  // daemon resolves them against the catalog, which config/ does not see).
  std::vector<std::string> pm_sampling_pin;
  // --profiling-pause-endpoint / NVML_EXPORTER_PROFILING_PAUSE_ENDPOINT: POST
  // /api/v1/profiling/pause and /resume, like SIGUSR1 / SIGUSR2 (docs/pm-sampling.md §5)
  bool profiling_pause_endpoint = false;
  // --once: collect once, print the exposition to stdout, exit
  bool once = false;
  // --web-read-timeout / DCGM_EXPORTER_WEB_READ_TIMEOUT and --web-write-timeout /
  // DCGM_EXPORTER_WEB_WRITE_TIMEOUT: Go durations ("10s", "500ms", "1m"), at least 1ms
  std::chrono::milliseconds web_read_timeout{10000};
  std::chrono::milliseconds web_write_timeout{30000};
  // -k / --kubernetes / DCGM_EXPORTER_KUBERNETES: pod, namespace and container labels from the
  // kubelet pod-resources API
  bool kubernetes = false;
  // --kubernetes-gpu-id-type / DCGM_EXPORTER_KUBERNETES_GPU_ID_TYPE: uid | device-name
  KubernetesGpuIdType kubernetes_gpu_id_type = KubernetesGpuIdType::kUid;
  // --pod-resources-kubelet-socket / DCGM_POD_RESOURCES_KUBELET_SOCKET
  std::string pod_resources_socket = "/var/lib/kubelet/pod-resources/kubelet.sock";
  // --nvidia-resource-names / NVIDIA_RESOURCE_NAMES: extra resource names, comma-separated
  std::vector<std::string> nvidia_resource_names;
  // --kubernetes-virtual-gpus / KUBERNETES_VIRTUAL_GPUS: one series per sharing pod
  bool kubernetes_virtual_gpus = false;
  // --hpc-job-mapping-dir / DCGM_HPC_JOB_MAPPING_DIR: empty means off
  std::string hpc_job_mapping_dir;

  // Runtime container labels (dcgm-exporter 4.8.3; attribute/container_runtime.h,
  // docs/upstream/container-labels.md). Without -k: one more copy of each GPU series per running
  // container of a Docker-compatible engine given that GPU, with container="<name>".
  // --container-labels / DCGM_EXPORTER_CONTAINER_LABELS: on (ignored, with a warning, under -k)
  bool container_labels = false;
  // --container-runtime-socket / DCGM_CONTAINER_RUNTIME_SOCKET: the engine's unix socket (e.g.
  // /var/run/docker.sock); no default: --container-labels without -k requires it
  std::string container_runtime_socket;

  // CloudWatch EMF output (--emf-*, NVML_EXPORTER_EMF_*): on when `outputs` is non-empty.
  struct Emf {
    std::vector<std::string> outputs;  // --emf-output, repeatable or comma-separated
    std::string config_file;           // --emf-config: rules file; empty: built-in rules
    std::string cluster_name;          // --emf-cluster-name: the ClusterName label
    std::string metric_namespace;      // --emf-namespace: overrides the rules' namespace
    std::string log_group;             // --emf-log-group: _aws.LogGroupName
    std::string log_stream;            // --emf-log-stream: _aws.LogStreamName
    bool counters_delta = true;        // --emf-counters delta|raw
    bool high_resolution = false;      // --emf-storage-resolution 1 (else 60)
    std::string service = "nvidia-dcgm-exporter";      // --emf-service: the Service label
    std::string job = "kubernetes-pod-dcgm-exporter";  // --emf-job: the job label
    uint64_t file_max_bytes = 104857600;  // --emf-file-max-bytes: rotation size of file: sinks
    int file_keep = 5;                    // --emf-file-keep: rotated files kept
    int queue_size = 10000;               // --emf-queue-size: documents queued per sink
    // --emf-schema: what the documents look like. kPrometheus: the CloudWatch agent's
    // Prometheus-scrape path (DCGM names, the rules' declarations); kContainerInsights: the
    // agent's Container Insights GPU metrics (container_/pod_/node_gpu_*, docs/emf.md §7).
    enum class Schema { kPrometheus, kContainerInsights };
    Schema schema = Schema::kPrometheus;
    // --emf-instance-id / --emf-instance-type: the node's EC2 identity for the Container
    // Insights schema when the Node object does not give it (no API server, no providerID).
    std::string instance_id;
    std::string instance_type;
    // --emf-histograms: the container-insights schema's GPU metrics as one distribution per
    // minute (the agent's high-frequency mode) instead of one value per collection.
    bool histograms = false;
  };
  Emf emf;
  // --emf-output with --emf-schema container-insights: EMF in CloudWatch Container Insights' GPU
  // schema. Besides the renderer, it starts the attribution data that schema needs: the pod
  // watcher (GPU requests and limits, phases) even without pod labels or uids, the Node
  // refresher (instance id and type, GPU capacity) and, with -k, the kubelet's
  // GetAllocatableResources. Derived, not a flag of its own: nothing to keep in step.
  bool EmfContainerInsights() const {
    return !emf.outputs.empty() && emf.schema == Emf::Schema::kContainerInsights;
  }

  // Process and pod attribution (docs/attribution.md "Pods and processes").
  // --kubernetes-process-metrics / NVML_EXPORTER_KUBERNETES_PROCESS_METRICS: read NVML's
  // per-process data, map PIDs to pods through <host-proc-root>/<pid>/cgroup and pod metadata
  // from the API server, and serve per-pod GPU usage.
  bool kubernetes_process_metrics = false;
  // --host-proc-root / NVML_EXPORTER_HOST_PROC_ROOT: where the host's /proc is (NVML reports
  // host PIDs); e.g. /host/proc in a pod without hostPID.
  std::string host_proc_root = "/proc";
  // --kubernetes-enable-pod-labels, --kubernetes-enable-pod-uid,
  // --kubernetes-pod-label-allowlist-regex (dcgm-exporter's; comma-separated, repeatable)
  bool kubernetes_enable_pod_labels = false;
  bool kubernetes_enable_pod_uid = false;
  std::vector<std::string> kubernetes_pod_label_allowlist_regex;
  // --kubernetes-api-server / NVML_EXPORTER_KUBERNETES_API_SERVER: https://host[:port]; empty:
  // in-cluster ($KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT).
  std::string kubernetes_api_server;
  // --kubernetes-token-file, --kubernetes-ca-file: empty means the service account's
  // (/var/run/secrets/kubernetes.io/serviceaccount/{token,ca.crt}).
  std::string kubernetes_token_file;
  std::string kubernetes_ca_file;
  // --kubernetes-node-conditions / NVML_EXPORTER_KUBERNETES_NODE_CONDITIONS: GPU faults on this
  // node's Node ($NODE_NAME): the GpuHealthy, GpuXidCritical and GpuLost conditions and an Event
  // per fault (docs/faults.md §5).
  bool kubernetes_node_conditions = false;
  // --kubernetes-node-conditions-hold: how long GpuXidCritical and GpuHealthy stay in their
  // problem state after the last occurrence (hysteresis).
  std::chrono::milliseconds kubernetes_node_conditions_hold{600000};
  // --state-dir / NVML_EXPORTER_STATE_DIR: where state kept across restarts lives (the energy per
  // pod counters, pod-energy.json); empty: none, they start from 0 at each start.
  std::string state_dir;

  // Series shape and probes (nvml-exporter's own; config/options_series.cc).
  // --dcgm-exporter-compat / NVML_EXPORTER_DCGM_EXPORTER_COMPAT: the dcgm-exporter release whose
  // spellings the page mirrors (4.8.2, 4.8.3, 4.8.4 (the default), 4.9 or 4.10; the differences:
  // docs/upstream/generations.md). It picks the host label's spelling and, when -f is not given,
  // the default collectors file; ConvertSeries (config/options_series.cc) applies both.
  std::string dcgm_exporter_compat = "4.8.4";
  // --collectors-unknown-fields / NVML_EXPORTER_COLLECTORS_UNKNOWN_FIELDS (skip or fatal).
  UnknownFields collectors_unknown_fields = UnknownFields::kSkip;
  // The host label's name: "Hostname" (dcgm-exporter <= 4.8.2) or "hostname" (4.8.3 and later).
  // --hostname-label when given, else the spelling of --dcgm-exporter-compat's release.
  std::string hostname_label = "hostname";
  // --mig-gpu-fields-on-parent: GPU-wide fields once on the parent instead of on every MIG
  // instance (dcgm-exporter's shape, the default).
  bool mig_gpu_fields_on_parent = false;
  // --health-max-age: 0 means app::PageStore::DefaultMaxAge(interval).
  std::chrono::milliseconds health_max_age{0};
  // --live-history-minutes / NVML_EXPORTER_LIVE_HISTORY_MINUTES: minutes of per-GPU history the
  // live page keeps (live/history.h), 0..1440; 0 keeps none.
  int live_history_minutes = 15;

  // dcgm-exporter 4.8.4's scrape, probe and self-metrics flags (config/options_scrape.cc).
  // --max-concurrent-scrapes / DCGM_EXPORTER_MAX_CONCURRENT_SCRAPES: /metrics responses being
  // written at once, at most (>= 1); one more gets 503.
  int max_concurrent_scrapes = 16;
  // --enable-exporter-metrics / DCGM_EXPORTER_ENABLE_EXPORTER_METRICS: process_* self-metrics.
  bool enable_exporter_metrics = false;
  // --health-require-gpus / DCGM_EXPORTER_HEALTH_REQUIRE_GPUS: /health fails with no GPU.
  bool health_require_gpus = false;

  // -h / --help or -v / --version: print help_text to stdout and exit with exit_code_hint
  // (kOk); the other fields are then defaults and must not be used.
  bool help_or_version_requested = false;
  std::string help_text;
  // The exit status for the caller when it stops here (help/version: kOk). Errors come back as a
  // non-OK Status instead; ExitCodeFor() (config/exit_code.h) maps them (usage errors: kUsage).
  ExitCode exit_code_hint = ExitCode::kOk;

  // The YAML configuration file (config/yaml_config.h, config/options_yaml.cc). Each of its
  // settings fills the Options field of the flag that says the same thing, unless that flag or
  // its env var is set: flag > env var > YAML > default, as dcgm-exporter.
  // --config-file / DCGM_EXPORTER_CONFIG_FILE: empty means none.
  std::string config_file;
  // Per-field cadences: v1 collection.watchGroups[], v2 collections[] but the all-fields one
  // (include: ["*"]), whose `every` is collect_interval_ms instead. Fields no group matches go at
  // collect_interval_ms. No field matches two groups; each group matches some field
  // (CheckWatchGroups, against the collectors list).
  struct WatchGroup {
    std::string name;
    std::chrono::milliseconds every{0};
    std::vector<std::string> patterns;  // Go path.Match globs over field names
    std::string where;                  // "file:line" of the group, for messages
  };
  std::vector<WatchGroup> watch_groups;
  // metrics.fields: the inline collectors list, as CSV text whose rows sit on their YAML lines
  // (InlineFieldsCsv); app/collectors_source.cc parses it instead of reading `collectors`, with
  // inline_collectors_source (the YAML file) naming it in messages. Empty: the file (or -m).
  // Set only when -f / DCGM_EXPORTER_COLLECTORS is not.
  std::string inline_collectors_csv;
  std::string inline_collectors_source;
  // server.maxConcurrentScrapes and metrics.enableExporterMetrics fill max_concurrent_scrapes
  // and enable_exporter_metrics (above).
  // --watch-max-keep-age, --watch-max-keep-samples / sources.dcgm.watch.{maxKeepAge,
  // maxKeepSamples}: DCGM's field-watch retention (not both zero).
  std::chrono::milliseconds watch_max_keep_age{600000};
  int watch_max_keep_samples = 0;

  // dcgm-exporter's flags without a counterpart here (config/options_compat.cc).
  // --kubernetes-enable-dra / KUBERNETES_ENABLE_DRA: with -k, attribute GPUs and MIG devices
  // allocated through DRA claims (the ResourceSlices come from the API server).
  bool kubernetes_enable_dra = false;
  // --enable-gpu-bind-unbind-watch / DCGM_EXPORTER_ENABLE_GPU_BIND_UNBIND_WATCH: when the set of
  // GPUs bound to the nvidia driver changes, the daemon re-executes itself and enumerates them
  // afresh (app/gpu_binding_watch.h); --gpu-bind-unbind-poll-interval /
  // DCGM_EXPORTER_GPU_BIND_UNBIND_POLL_INTERVAL: how often it looks (a bad value: 1s, warned).
  bool enable_gpu_bind_unbind_watch = false;
  std::chrono::milliseconds gpu_bind_unbind_poll_interval{1000};
  // --web-systemd-socket / DCGM_EXPORTER_SYSTEMD_SOCKET: serve on the listening socket systemd
  // passes (LISTEN_PID, LISTEN_FDS, fd 3) instead of binding --address.
  bool web_systemd_socket = false;
  // --web-config-file / DCGM_EXPORTER_WEB_CONFIG_FILE: exporter-toolkit web config (TLS, basic
  // auth, headers; config/web_config.h). Empty: plain HTTP.
  std::string web_config_file;
  // --web-max-connections / NVML_EXPORTER_WEB_MAX_CONNECTIONS: open connections at most (0:
  // half the soft descriptor limit, at most 1024).
  int web_max_connections = 0;
  // --web-health-no-auth / NVML_EXPORTER_WEB_HEALTH_NO_AUTH: /health and /ready without basic
  // auth (kubelet probes), when the web config has users.
  bool web_health_no_auth = false;
  // -m / --configmap-data / DCGM_EXPORTER_CONFIGMAP_DATA NAMESPACE:NAME: the collectors CSV is
  // the `metrics` key of that ConfigMap, read through the API server. Empty: "none", the file.
  std::string configmap_namespace;
  std::string configmap_name;
  // One per dcgm-exporter option that is set but has no effect here: the long flag name and the
  // sentence to log, e.g. `-r/--remote-hostengine-info (DCGM_REMOTE_HOSTENGINE_INFO=nvidia-dcgm:
  // 5555) ignored: nvml-exporter reads NVML in-process; there is no DCGM hostengine ...`.
  struct StartupWarning {
    std::string option;
    std::string message;
  };
  std::vector<StartupWarning> startup_warnings;
};

using GetEnvFn = std::function<std::optional<std::string>(std::string_view)>;

// argv[0] is the program name. Errors are always INVALID_ARGUMENT (ExitCode::kUsage), with a
// message fit for stderr that names where the value came from, e.g. `--collect-interval: 50 is
// below the minimum of 100 (milliseconds)` or `DCGM_EXPORTER_INTERVAL: "x" is not a whole number of
// milliseconds`. -h/-v anywhere on the line win over any error.
Result<Options> ParseOptions(int argc, char** argv, const GetEnvFn& getenv);

// Go's strconv.ParseBool. Exposed for tests.
std::optional<bool> ParseGoBool(std::string_view s);
// Go's time.ParseDuration (util/go_duration.h), as the flags use it.
using ::nvmlx::ParseGoDuration;

}  // namespace nvmlx::config

#endif  // NVML_EXPORTER_CONFIG_OPTIONS_H_
