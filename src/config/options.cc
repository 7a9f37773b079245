#include "config/options.h"

#include <CLI/CLI.hpp>
#include <charconv>
#include <climits>
#include <cmath>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#ifndef NVMLX_CONFIG_VERSION
#define NVMLX_CONFIG_VERSION "unknown"
#endif

namespace nvmlx::config {
namespace {

enum class Kind { kString, kInt, kDuration, kBool, kList };

// One dcgm-exporter (or nvml-exporter) flag. The table below drives the argv pre-pass, the CLI11
// registration, env lookup, the "not supported yet" check and the -h text.
struct FlagSpec {
  std::string_view name;   // long name, no dashes
  std::string_view alias;  // the other name (urfave alias: "f", "rbmn"), or empty
  std::string_view env;    // or empty
  Kind kind;
  std::string_view def;  // the default as dcgm-exporter spells it
  bool supported;
  std::string_view metavar;
  std::string_view help;
  // -r: dcgm-exporter switches to a remote hostengine when the flag is set at all (urfave IsSet,
  // env included), even to its default value.
  bool unsupported_if_set = false;
};

// clang-format off
constexpr FlagSpec kFlags[] = {
  {"collectors", "f", "DCGM_EXPORTER_COLLECTORS", Kind::kString,
   "/etc/dcgm-exporter/default-counters.csv", true, "FILE",
   "Collectors CSV: the fields to export, with type and help text."},
  {"address", "a", "DCGM_EXPORTER_LISTEN", Kind::kString, ":9400", true, "ADDR",
   "Address to listen on: host:port, [v6]:port or :port."},
  {"collect-interval", "c", "DCGM_EXPORTER_INTERVAL", Kind::kInt, "30000", true, "MS",
   "Collection interval in milliseconds (at least 100)."},
  {"devices", "d", "DCGM_EXPORTER_DEVICES_STR", Kind::kString, "f", true, "SEL",
   "GPUs to monitor: f (flex), g, g:0,1, g:0-3, i, i:0,2-4."},
  {"no-hostname", "n", "DCGM_EXPORTER_NO_HOSTNAME", Kind::kBool, "false", true, "",
   "Omit the hostname label (its value is $NODE_NAME, else the host name)."},
  {"use-old-namespace", "o", "DCGM_EXPORTER_USE_OLD_NAMESPACE", Kind::kBool, "false", true, "",
   "Use the old label names (uuid instead of UUID)."},
  {"replace-blanks-in-model-name", "rbmn", "DCGM_EXPORTER_REPLACE_BLANKS_IN_MODEL_NAME",
   Kind::kBool, "false", true, "", "Replace spaces in the modelName label with '-'."},
  {"debug", "", "DCGM_EXPORTER_DEBUG", Kind::kBool, "false", true, "", "Log at debug level."},
  {"log-format", "", "DCGM_EXPORTER_LOG_FORMAT", Kind::kString, "text", true, "FMT",
   "Log format on stderr: text or json."},
  {"fake-gpus", "", "DCGM_EXPORTER_USE_FAKE_GPUS", Kind::kBool, "false", true, "",
   "Use the simulated NVML library instead of the driver's (testing)."},
  {"fake-gpus-scenario", "", "NVML_EXPORTER_FAKE_GPUS_SCENARIO", Kind::kString, "", true, "FILE",
   "Scenario file for the simulated GPUs; implies --fake-gpus."},
  {"nvml-library", "", "NVML_EXPORTER_NVML_LIBRARY", Kind::kString, "libnvidia-ml.so.1", true,
   "PATH", "NVML library to load."},
  {"once", "", "", Kind::kBool, "false", true, "",
   "Collect once, print the metrics page to stdout and exit."},
  {"web-read-timeout", "", "DCGM_EXPORTER_WEB_READ_TIMEOUT", Kind::kDuration, "10s", true, "DUR",
   "HTTP read timeout (Go duration: 10s, 500ms, 1m)."},
  {"web-write-timeout", "", "DCGM_EXPORTER_WEB_WRITE_TIMEOUT", Kind::kDuration, "30s", true,
   "DUR", "HTTP write timeout (Go duration)."},
  // CloudWatch EMF (nvml-exporter's own).
  {"emf-output", "", "NVML_EXPORTER_EMF_OUTPUT", Kind::kList, "", true, "SINK",
   "Send CloudWatch EMF documents to SINK: stdout, file:PATH, tcp://HOST:PORT or\n"
   "        udp://HOST:PORT (the CloudWatch agent's emf listener: tcp/udp :25888). Repeatable."},
  {"emf-config", "", "NVML_EXPORTER_EMF_CONFIG", Kind::kString, "", true, "FILE",
   "EMF rules: the CloudWatch agent's emf_processor (metric_declaration, ...) in YAML or\n"
   "        JSON, or a whole agent config; default: built-in rules (per pod and per GPU)."},
  {"emf-cluster-name", "", "NVML_EXPORTER_EMF_CLUSTER_NAME", Kind::kString, "", true, "NAME",
   "The ClusterName label of EMF documents."},
  {"emf-namespace", "", "NVML_EXPORTER_EMF_NAMESPACE", Kind::kString, "", true, "NS",
   "CloudWatch namespace (overrides the rules' metric_namespace; default\n"
   "        ContainerInsights/Prometheus)."},
  {"emf-log-group", "", "NVML_EXPORTER_EMF_LOG_GROUP", Kind::kString, "", true, "GROUP",
   "_aws.LogGroupName (default /aws/containerinsights/<cluster>/prometheus when\n"
   "        --emf-cluster-name is set, else none: the agent's default group)."},
  {"emf-log-stream", "", "NVML_EXPORTER_EMF_LOG_STREAM", Kind::kString, "", true, "STREAM",
   "_aws.LogStreamName (default none)."},
  {"emf-counters", "", "NVML_EXPORTER_EMF_COUNTERS", Kind::kString, "delta", true, "MODE",
   "Counters in EMF: delta (as the CloudWatch agent: first sample held back) or raw."},
  {"emf-storage-resolution", "", "NVML_EXPORTER_EMF_STORAGE_RESOLUTION", Kind::kInt, "60", true,
   "S", "CloudWatch storage resolution of EMF metrics: 60 or 1 (high resolution)."},
  {"emf-service", "", "NVML_EXPORTER_EMF_SERVICE", Kind::kString, "nvidia-dcgm-exporter", true,
   "NAME", "The Service label of EMF documents."},
  {"emf-job", "", "NVML_EXPORTER_EMF_JOB", Kind::kString, "kubernetes-pod-dcgm-exporter", true,
   "NAME", "The job label of EMF documents."},
  {"emf-file-max-bytes", "", "NVML_EXPORTER_EMF_FILE_MAX_BYTES", Kind::kInt, "104857600", true,
   "N", "Rotate a file: EMF output before it passes N bytes."},
  {"emf-file-keep", "", "NVML_EXPORTER_EMF_FILE_KEEP", Kind::kInt, "5", true, "N",
   "Rotated EMF files kept (PATH.1 ... PATH.N)."},
  {"emf-queue-size", "", "NVML_EXPORTER_EMF_QUEUE_SIZE", Kind::kInt, "10000", true, "N",
   "EMF documents queued per output; beyond, new ones are dropped and counted."},

  {"kubernetes", "k", "DCGM_EXPORTER_KUBERNETES", Kind::kBool, "false", true, "",
   "Label GPU series with the pod, namespace and container holding the GPU (kubelet "
   "pod-resources API)."},
  {"kubernetes-gpu-id-type", "", "DCGM_EXPORTER_KUBERNETES_GPU_ID_TYPE", Kind::kString, "uid",
   true, "TYPE", "How the device plugin names GPUs: uid (GPU UUID) or device-name (nvidia0; GKE)."},
  {"pod-resources-kubelet-socket", "", "DCGM_POD_RESOURCES_KUBELET_SOCKET", Kind::kString,
   "/var/lib/kubelet/pod-resources/kubelet.sock", true, "PATH",
   "The kubelet's pod-resources socket."},
  {"nvidia-resource-names", "", "NVIDIA_RESOURCE_NAMES", Kind::kList, "", true, "NAME,...",
   "Extended resource names to attribute besides nvidia.com/gpu and nvidia.com/mig-*."},
  {"kubernetes-virtual-gpus", "", "KUBERNETES_VIRTUAL_GPUS", Kind::kBool, "false", true, "",
   "Shared GPUs (time-slicing, MPS): one series per sharing pod, with a vgpu label."},
  {"hpc-job-mapping-dir", "", "DCGM_HPC_JOB_MAPPING_DIR", Kind::kString, "", true, "DIR",
   "Directory of files named <gpu> or <gpu>.<gi> listing job ids: adds hpc_job labels."},
  // Process and pod attribution.
  {"kubernetes-process-metrics", "", "NVML_EXPORTER_KUBERNETES_PROCESS_METRICS", Kind::kBool,
   "false", true, "",
   "Per-pod GPU usage from NVML per-process data, /proc/<pid>/cgroup and the API server."},
  {"host-proc-root", "", "NVML_EXPORTER_HOST_PROC_ROOT", Kind::kString, "/proc", true, "DIR",
   "The host's /proc (NVML reports host PIDs), e.g. /host/proc without hostPID."},
  {"kubernetes-api-server", "", "NVML_EXPORTER_KUBERNETES_API_SERVER", Kind::kString, "", true,
   "URL", "API server https://host[:port] (default: in-cluster, $KUBERNETES_SERVICE_HOST)."},
  {"kubernetes-token-file", "", "NVML_EXPORTER_KUBERNETES_TOKEN_FILE", Kind::kString, "", true,
   "FILE", "Bearer token for the API server (default: the service account's)."},
  {"kubernetes-ca-file", "", "NVML_EXPORTER_KUBERNETES_CA_FILE", Kind::kString, "", true, "FILE",
   "CA bundle for the API server (default: the service account's ca.crt)."},

  {"kubernetes-enable-pod-labels", "", "DCGM_EXPORTER_KUBERNETES_ENABLE_POD_LABELS", Kind::kBool,
   "false", true, "", "Copy pod labels (sanitised names) onto the per-pod series."},
  {"kubernetes-enable-pod-uid", "", "DCGM_EXPORTER_KUBERNETES_ENABLE_POD_UID", Kind::kBool,
   "false", true, "", "Add the pod_uid label to the per-pod series."},
  {"kubernetes-pod-label-allowlist-regex", "",
   "DCGM_EXPORTER_KUBERNETES_POD_LABEL_ALLOWLIST_REGEX", Kind::kList, "", true, "RE,...",
   "Copy only pod labels whose key matches one of these RE2 regexes (default: all)."},

  // dcgm-exporter 4.8.2 flags we do not implement yet.
  {"cpu-devices", "p", "DCGM_EXPORTER_CPU_DEVICES_STR", Kind::kString, "f", false, "SEL", ""},
  {"configmap-data", "m", "DCGM_EXPORTER_CONFIGMAP_DATA", Kind::kString, "none", false, "NS:NAME",
   ""},
  {"remote-hostengine-info", "r", "DCGM_REMOTE_HOSTENGINE_INFO", Kind::kString, "localhost:5555",
   false, "HOST:PORT", "", true},
  {"switch-devices", "s", "DCGM_EXPORTER_OTHER_DEVICES_STR", Kind::kString, "f", false, "SEL",
   ""},
  {"web-config-file", "", "DCGM_EXPORTER_WEB_CONFIG_FILE", Kind::kString, "", false, "FILE", ""},
  {"xid-count-window-size", "x", "DCGM_EXPORTER_XID_COUNT_WINDOW_SIZE", Kind::kInt, "300000",
   true, "MS", "Window of DCGM_EXP_XID_ERRORS_COUNT in milliseconds."},
  {"clock-events-count-window-size", "", "DCGM_EXPORTER_CLOCK_EVENTS_COUNT_WINDOW_SIZE",
   Kind::kInt, "300000", true, "MS",
   "Window of DCGM_EXP_CLOCK_EVENTS_COUNT in milliseconds."},
  {"enable-dcgm-log", "", "DCGM_EXPORTER_ENABLE_DCGM_LOG", Kind::kBool, "false", false, "", ""},
  {"dcgm-log-level", "", "DCGM_EXPORTER_DCGM_LOG_LEVEL", Kind::kString, "NONE", false, "LEVEL",
   ""},
  {"dump-enabled", "", "DCGM_EXPORTER_DUMP_ENABLED", Kind::kBool, "false", false, "", ""},
  {"dump-directory", "", "DCGM_EXPORTER_DUMP_DIRECTORY", Kind::kString,
   "/tmp/dcgm-exporter-debug", false, "DIR", ""},
  {"dump-retention", "", "DCGM_EXPORTER_DUMP_RETENTION", Kind::kInt, "24", false, "HOURS", ""},
  {"dump-compression", "", "DCGM_EXPORTER_DUMP_COMPRESSION", Kind::kBool, "true", false, "", ""},
  {"kubernetes-enable-dra", "", "KUBERNETES_ENABLE_DRA", Kind::kBool, "false", false, "", ""},
  {"disable-startup-validate", "", "DISABLE_STARTUP_VALIDATE", Kind::kBool, "false", false, "",
   ""},
  {"enable-gpu-bind-unbind-watch", "", "DCGM_EXPORTER_ENABLE_GPU_BIND_UNBIND_WATCH", Kind::kBool,
   "false", false, "", ""},
  {"gpu-bind-unbind-poll-interval", "", "DCGM_EXPORTER_GPU_BIND_UNBIND_POLL_INTERVAL",
   Kind::kDuration, "1s", false, "DUR", ""},
  {"enable-pprof", "", "DCGM_EXPORTER_ENABLE_PPROF", Kind::kBool, "false", false, "", ""},
  {"web-systemd-socket", "", "DCGM_EXPORTER_SYSTEMD_SOCKET", Kind::kBool, "false", false, "", ""},
  // Newer dcgm-exporter releases (after 4.8.2).
  {"config-file", "", "DCGM_EXPORTER_CONFIG_FILE", Kind::kString, "", false, "FILE", ""},
  {"max-concurrent-scrapes", "", "DCGM_EXPORTER_MAX_CONCURRENT_SCRAPES", Kind::kInt, "16", false,
   "N", ""},
  {"enable-exporter-metrics", "", "DCGM_EXPORTER_ENABLE_EXPORTER_METRICS", Kind::kBool, "false",
   false, "", ""},
  {"watch-max-keep-age", "", "DCGM_EXPORTER_WATCH_MAX_KEEP_AGE", Kind::kDuration, "10m", false,
   "DUR", ""},
  {"watch-max-keep-samples", "", "DCGM_EXPORTER_WATCH_MAX_KEEP_SAMPLES", Kind::kInt, "0", false,
   "N", ""},
  {"health-require-gpus", "", "DCGM_EXPORTER_HEALTH_REQUIRE_GPUS", Kind::kBool, "false", false,
   "", ""},
  {"container-labels", "", "DCGM_EXPORTER_CONTAINER_LABELS", Kind::kBool, "false", false, "", ""},
  {"container-runtime-socket", "", "DCGM_CONTAINER_RUNTIME_SOCKET", Kind::kString, "", false,
   "PATH", ""},
};
// clang-format on
constexpr size_t kNumFlags = sizeof(kFlags) / sizeof(kFlags[0]);

constexpr char kValueMarker = '@';

constexpr std::string_view kBoolValues = "1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False";

// Where a value came from, for messages: "--collect-interval" or "DCGM_EXPORTER_INTERVAL".
struct Raw {
  bool set = false;  // by flag or env
  bool from_flag = false;
  std::string origin;
  std::vector<std::string> values;  // kList: every occurrence; otherwise one value
  const std::string& last() const { return values.back(); }
};

std::optional<long long> ParseDecimal(std::string_view s) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  bool neg = false;
  if (!s.empty() && s.front() == '-') {
    neg = true;
    s.remove_prefix(1);
  }
  if (s.empty() || s.front() == '+' || s.front() == '-') return std::nullopt;
  long long v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return neg ? -v : v;
}

std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string HelpText() {
  std::string out =
      "nvml-exporter " NVMLX_CONFIG_VERSION
      ": GPU metrics for Prometheus, read from NVML; a drop-in replacement for\n"
      "NVIDIA dcgm-exporter (same flags, env vars, collectors CSV and metrics).\n\n"
      "Usage: nvml-exporter [flags]\n\n"
      "Every flag can also be set by the environment variable shown after it; an explicit flag\n"
      "wins over the variable. Names take one dash or two; values follow a space or '='.\n\n"
      "Flags:\n";
  auto names = [](const FlagSpec& f) {
    std::string s = "  ";
    if (!f.alias.empty()) s += "-" + std::string(f.alias) + ", ";
    s += "--" + std::string(f.name);
    if (!f.metavar.empty()) s += " " + std::string(f.metavar);
    return s;
  };
  for (const FlagSpec& f : kFlags) {
    if (!f.supported) continue;
    std::string line = names(f);
    if (!f.env.empty()) line += "  [$" + std::string(f.env) + "]";
    out += line + "\n        " + std::string(f.help);
    if (f.kind != Kind::kBool && !f.def.empty()) out += " (default " + Quote(f.def) + ")";
    out += "\n";
  }
  out +=
      "  -h, --help\n        Show this help and exit.\n"
      "  -v, --version\n        Print the version and exit.\n\n"
      "Environment:\n"
      "  NODE_NAME\n        Value of the hostname label (default: the host name).\n\n"
      "Recognised for compatibility with dcgm-exporter but not supported yet; setting one to a\n"
      "value other than its default is an error:\n";
  for (const FlagSpec& f : kFlags) {
    if (f.supported) continue;
    std::string line = names(f);
    if (!f.env.empty()) line += "  [$" + std::string(f.env) + "]";
    out += line + "\n";
  }
  return out;
}

int FindFlag(std::string_view name) {
  for (size_t i = 0; i < kNumFlags; ++i) {
    if (kFlags[i].name == name || (!kFlags[i].alias.empty() && kFlags[i].alias == name)) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

// Rewrites argv into what CLI11 parses unambiguously: every known name, in any of Go's spellings
// (-f, --f, -collectors, --collectors, -rbmn), becomes `--<long>=<value>`, with a boolean's value
// checked by ParseBool and spelled true/false. CLI11 has no multi-letter short options and its
// own (wider) boolean words, hence the pre-pass.
struct PrePass {
  std::vector<std::string> args;  // for CLI11, program name first
  bool help = false;
  bool version = false;
  Status error;  // the first problem; help/version still win
};

PrePass RewriteArgs(int argc, char** argv) {
  PrePass p;
  p.args.push_back(argc > 0 && argv[0] != nullptr ? argv[0] : "nvml-exporter");
  auto fail = [&p](std::string msg) {
    if (p.error.ok()) p.error = InvalidArgument(std::move(msg));
  };
  bool positional_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (positional_only || arg.size() < 2 || arg[0] != '-') {
      fail("unexpected argument " + Quote(arg) + ": nvml-exporter takes flags only");
      continue;
    }
    if (arg == "--") {
      positional_only = true;
      continue;
    }
    std::string_view body = arg.substr(arg[1] == '-' ? 2 : 1);
    std::optional<std::string_view> inline_value;
    if (size_t eq = body.find('='); eq != std::string_view::npos) {
      inline_value = body.substr(eq + 1);
      body = body.substr(0, eq);
    }
    if (body == "h" || body == "help") {
      if (!p.version) p.help = true;
      continue;
    }
    if (body == "v" || body == "version") {
      if (!p.help) p.version = true;
      continue;
    }
    const int idx = FindFlag(body);
    if (idx < 0) {
      fail("unknown flag " + std::string(arg.substr(0, arg.find('='))) +
           " (see nvml-exporter --help)");
      continue;
    }
    const FlagSpec& f = kFlags[idx];
    std::string value;
    if (f.kind == Kind::kBool) {
      // Go: a boolean never takes the next argument; `-n=false` spells the value.
      if (inline_value) {
        std::optional<bool> b = ParseGoBool(*inline_value);
        if (!b) {
          fail("--" + std::string(f.name) + ": " + Quote(*inline_value) +
               " is not a boolean (expected one of " + std::string(kBoolValues) + ")");
          continue;
        }
        value = *b ? "true" : "false";
      } else {
        value = "true";
      }
    } else if (inline_value) {
      value = std::string(*inline_value);
    } else if (i + 1 < argc) {
      value = argv[++i];  // Go takes the next argument whatever it looks like
    } else {
      fail("flag --" + std::string(f.name) + " needs a value");
      continue;
    }
    // CLI11 rejects an empty `--x=`, which Go accepts (and we then judge); a marker character in
    // front of every value keeps it non-empty and is stripped after parsing.
    p.args.push_back("--" + std::string(f.name) + "=" + kValueMarker + value);
  }
  return p;
}

// Parses `raw` for `f`; for unsupported flags, reports whether it differs from the default.
Status CheckUnsupported(const FlagSpec& f, const Raw& raw) {
  if (!raw.set) return Status::Ok();
  bool differs = false;
  switch (f.kind) {
    case Kind::kBool: {
      std::optional<bool> v = ParseGoBool(raw.last());
      differs = !v || *v != (f.def == "true");
      break;
    }
    case Kind::kInt: {
      std::optional<long long> v = ParseDecimal(raw.last());
      differs = !v || *v != ParseDecimal(f.def).value_or(0);
      break;
    }
    case Kind::kDuration: {
      Result<std::chrono::nanoseconds> v = ParseGoDuration(raw.last());
      differs = !v.ok() || *v != *ParseGoDuration(f.def);
      break;
    }
    case Kind::kString:
      differs = raw.last() != f.def;
      break;
    case Kind::kList:
      for (const std::string& v : raw.values) {
        if (v.find_first_not_of(", ") != std::string::npos) differs = true;
      }
      break;
  }
  if (f.unsupported_if_set) differs = true;
  if (!differs) return Status::Ok();
  std::string msg = "flag --" + std::string(f.name) + " is not supported yet (planned)";
  if (!raw.from_flag) msg += "; it is set by " + raw.origin + "=" + raw.last();
  return InvalidArgument(msg);
}

Status ToBool(const Raw& raw, bool* out) {
  if (!raw.set) return Status::Ok();
  std::optional<bool> b = ParseGoBool(raw.last());
  if (!b) {
    return InvalidArgument(raw.origin + ": " + Quote(raw.last()) +
                           " is not a boolean (expected one of " + std::string(kBoolValues) + ")");
  }
  *out = *b;
  return Status::Ok();
}

Status ToNonEmpty(const Raw& raw, std::string* out) {
  if (!raw.set) return Status::Ok();
  if (raw.last().empty()) return InvalidArgument(raw.origin + ": must not be empty");
  *out = raw.last();
  return Status::Ok();
}

// urfave's StringSliceFlag: every occurrence, each split at commas; blanks trimmed, empty
// items dropped.
void ToList(const Raw& raw, std::vector<std::string>* out) {
  if (!raw.set) return;
  out->clear();
  for (const std::string& value : raw.values) {
    size_t start = 0;
    while (start <= value.size()) {
      size_t comma = value.find(',', start);
      if (comma == std::string::npos) comma = value.size();
      std::string item = value.substr(start, comma - start);
      const size_t b = item.find_first_not_of(" \t");
      if (b != std::string::npos) {
        out->push_back(item.substr(b, item.find_last_not_of(" \t") - b + 1));
      }
      start = comma + 1;
    }
  }
}

Status ToTimeout(const Raw& raw, std::chrono::milliseconds* out) {
  if (!raw.set) return Status::Ok();
  Result<std::chrono::nanoseconds> d = ParseGoDuration(raw.last());
  if (!d.ok()) return InvalidArgument(raw.origin + ": " + d.status().message());
  // Go reads 0 as "no timeout"; our server has no such mode, and a sub-millisecond timeout would
  // fail every request, so both are refused rather than misread.
  if (*d < std::chrono::milliseconds(1)) {
    return InvalidArgument(raw.origin + ": " + Quote(raw.last()) + " is below the minimum of 1ms");
  }
  *out = std::chrono::duration_cast<std::chrono::milliseconds>(*d);
  return Status::Ok();
}

// The --emf-* flags.
Status ParseEmf(const std::function<const Raw&(std::string_view)>& get, Options::Emf* e) {
  for (const std::string& v : get("emf-output").values) {
    size_t start = 0;
    while (start <= v.size()) {
      size_t comma = v.find(',', start);
      if (comma == std::string::npos) comma = v.size();
      std::string item = v.substr(start, comma - start);
      item.erase(0, item.find_first_not_of(' '));
      item.erase(item.find_last_not_of(' ') + 1);
      if (!item.empty()) e->outputs.push_back(item);
      start = comma + 1;
    }
  }
  auto text = [&](std::string_view name, std::string* out) {
    if (const Raw& r = get(name); r.set) *out = r.last();
  };
  text("emf-config", &e->config_file);
  text("emf-cluster-name", &e->cluster_name);
  text("emf-namespace", &e->metric_namespace);
  text("emf-log-group", &e->log_group);
  text("emf-log-stream", &e->log_stream);
  NVMLX_RETURN_IF_ERROR(ToNonEmpty(get("emf-service"), &e->service));
  NVMLX_RETURN_IF_ERROR(ToNonEmpty(get("emf-job"), &e->job));
  if (const Raw& r = get("emf-counters"); r.set) {
    if (r.last() != "delta" && r.last() != "raw") {
      return InvalidArgument(r.origin + ": " + Quote(r.last()) + " is not delta or raw");
    }
    e->counters_delta = r.last() == "delta";
  }
  if (const Raw& r = get("emf-storage-resolution"); r.set) {
    if (r.last() != "60" && r.last() != "1") {
      return InvalidArgument(r.origin + ": " + Quote(r.last()) +
                             " is not a storage resolution (expected 60 or 1)");
    }
    e->high_resolution = r.last() == "1";
  }
  auto number = [&](std::string_view name, long long min, long long max, long long* out) {
    const Raw& r = get(name);
    if (!r.set) return Status::Ok();
    std::optional<long long> v = ParseDecimal(r.last());
    if (!v || *v < min || *v > max) {
      return InvalidArgument(r.origin + ": " + Quote(r.last()) + " is not a whole number from " +
                             std::to_string(min) + " to " + std::to_string(max));
    }
    *out = *v;
    return Status::Ok();
  };
  long long max_bytes = static_cast<long long>(e->file_max_bytes), keep = e->file_keep,
            queue = e->queue_size;
  NVMLX_RETURN_IF_ERROR(number("emf-file-max-bytes", 4096, 1LL << 50, &max_bytes));
  NVMLX_RETURN_IF_ERROR(number("emf-file-keep", 0, 1000, &keep));
  NVMLX_RETURN_IF_ERROR(number("emf-queue-size", 1, 10000000, &queue));
  e->file_max_bytes = static_cast<uint64_t>(max_bytes);
  e->file_keep = static_cast<int>(keep);
  e->queue_size = static_cast<int>(queue);
  return Status::Ok();
}

}  // namespace

std::optional<bool> ParseGoBool(std::string_view s) {
  if (s == "1" || s == "t" || s == "T" || s == "TRUE" || s == "true" || s == "True") return true;
  if (s == "0" || s == "f" || s == "F" || s == "FALSE" || s == "false" || s == "False") {
    return false;
  }
  return std::nullopt;
}

Result<Options> ParseOptions(int argc, char** argv, const GetEnvFn& getenv) {
  PrePass pre = RewriteArgs(argc, argv);
  Options o;
  if (pre.help || pre.version) {
    o.help_or_version_requested = true;
    o.help_text = pre.help ? HelpText() : "nvml-exporter version " NVMLX_CONFIG_VERSION "\n";
    o.exit_code_hint = ExitCode::kOk;
    return o;
  }
  if (!pre.error.ok()) return pre.error;

  // CLI11 binds the canonical `--name=value` arguments; every value is kept as text and
  // converted below, so that a flag and its env var go through exactly the same checks.
  std::vector<std::vector<std::string>> flag_values(kNumFlags);
  std::vector<CLI::Option*> cli_opts(kNumFlags);
  CLI::App app("nvml-exporter", "nvml-exporter");
  app.set_help_flag();  // -h/--help are handled by the pre-pass
  for (size_t i = 0; i < kNumFlags; ++i) {
    cli_opts[i] = app.add_option("--" + std::string(kFlags[i].name), flag_values[i])
                      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
                      ->allow_extra_args(false)
                      ->expected(1);
  }
  std::vector<const char*> cargv;
  cargv.reserve(pre.args.size());
  for (const std::string& a : pre.args) cargv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(cargv.size()), cargv.data());
  } catch (const CLI::ParseError& e) {
    return InvalidArgument(e.what());
  } catch (const std::exception& e) {
    // Still the command line's fault as far as the caller can tell: a usage error (exit 2).
    return InvalidArgument(std::string("parsing flags: ") + e.what());
  }

  std::vector<Raw> raw(kNumFlags);
  for (size_t i = 0; i < kNumFlags; ++i) {
    const FlagSpec& f = kFlags[i];
    Raw& r = raw[i];
    if (cli_opts[i]->count() > 0 && !flag_values[i].empty()) {
      r.set = true;
      r.from_flag = true;
      r.origin = "--" + std::string(f.name);
      for (const std::string& v : flag_values[i]) r.values.push_back(v.substr(1));  // marker
      continue;
    }
    if (f.env.empty()) continue;
    std::optional<std::string> env = getenv(f.env);
    // Set-but-empty counts as unset, as urfave does for booleans: manifests often template
    // `VAR: ""` for "leave the default".
    if (env && !env->empty()) {
      r.set = true;
      r.origin = std::string(f.env);
      r.values = {*env};
    }
  }
  auto get = [&raw](std::string_view name) -> const Raw& { return raw[FindFlag(name)]; };

  for (size_t i = 0; i < kNumFlags; ++i) {
    if (!kFlags[i].supported) NVMLX_RETURN_IF_ERROR(CheckUnsupported(kFlags[i], raw[i]));
  }

  NVMLX_RETURN_IF_ERROR(ToNonEmpty(get("collectors"), &o.collectors));
  NVMLX_RETURN_IF_ERROR(ToNonEmpty(get("address"), &o.address));
  if (const Raw& r = get("collect-interval"); r.set) {
    std::optional<long long> v = ParseDecimal(r.last());
    if (!v) {
      return InvalidArgument(r.origin + ": " + Quote(r.last()) +
                             " is not a whole number of milliseconds");
    }
    // Below 100 ms NVML's own sampling (utilisation, power) cannot keep up and the exporter
    // would only burn CPU (dcgm-exporter issue #311: 3 ms cost 131% CPU).
    if (*v < 100) {
      return InvalidArgument(r.origin + ": " + r.last() +
                             " is below the minimum of 100 (milliseconds)");
    }
    if (*v > INT_MAX) {
      return InvalidArgument(r.origin + ": " + r.last() + " is too large (at most " +
                             std::to_string(INT_MAX) + " milliseconds)");
    }
    o.collect_interval_ms = static_cast<int>(*v);
  }
  if (const Raw& r = get("xid-count-window-size"); r.set) {
    std::optional<long long> v = ParseDecimal(r.last());
    if (!v) {
      return InvalidArgument(r.origin + ": " + Quote(r.last()) +
                             " is not a whole number of milliseconds");
    }
    if (*v < 1) return InvalidArgument(r.origin + ": " + r.last() + " must be at least 1");
    o.xid_count_window_ms = *v;
  }
  if (const Raw& r = get("clock-events-count-window-size"); r.set) {
    std::optional<long long> v = ParseDecimal(r.last());
    if (!v) {
      return InvalidArgument(r.origin + ": " + Quote(r.last()) +
                             " is not a whole number of milliseconds");
    }
    if (*v < 1) return InvalidArgument(r.origin + ": " + r.last() + " must be at least 1");
    o.clock_events_count_window_ms = *v;
  }
  if (const Raw& r = get("devices"); r.set) o.devices_text = r.last();
  {
    Result<DeviceSelector> sel = ParseDeviceSelector(o.devices_text);
    if (!sel.ok()) {
      const Raw& r = get("devices");
      return InvalidArgument((r.set ? r.origin : std::string("--devices")) + ": " +
                             sel.status().message());
    }
    o.devices = *sel;
  }
  NVMLX_RETURN_IF_ERROR(ToBool(get("no-hostname"), &o.no_hostname));
  NVMLX_RETURN_IF_ERROR(ToBool(get("use-old-namespace"), &o.use_old_namespace));
  NVMLX_RETURN_IF_ERROR(
      ToBool(get("replace-blanks-in-model-name"), &o.replace_blanks_in_model_name));
  NVMLX_RETURN_IF_ERROR(ToBool(get("debug"), &o.debug));
  if (const Raw& r = get("log-format"); r.set) {
    if (r.last() == "text") {
      o.log_format = LogFormat::kText;
    } else if (r.last() == "json") {
      o.log_format = LogFormat::kJson;
    } else {
      return InvalidArgument(r.origin + ": " + Quote(r.last()) +
                             " is not a log format (expected text or json)");
    }
  }
  NVMLX_RETURN_IF_ERROR(ToBool(get("fake-gpus"), &o.fake_gpus));
  if (const Raw& r = get("fake-gpus-scenario"); r.set) {
    o.fake_gpus_scenario = r.last();
    if (!o.fake_gpus_scenario.empty()) o.fake_gpus = true;
  }
  NVMLX_RETURN_IF_ERROR(ToNonEmpty(get("nvml-library"), &o.nvml_library));
  NVMLX_RETURN_IF_ERROR(ToBool(get("once"), &o.once));
  NVMLX_RETURN_IF_ERROR(ToTimeout(get("web-read-timeout"), &o.web_read_timeout));
  NVMLX_RETURN_IF_ERROR(ToTimeout(get("web-write-timeout"), &o.web_write_timeout));
  NVMLX_RETURN_IF_ERROR(ParseEmf(get, &o.emf));
  NVMLX_RETURN_IF_ERROR(ToBool(get("kubernetes"), &o.kubernetes));
  if (const Raw& r = get("kubernetes-gpu-id-type"); r.set) {
    if (r.last() == "uid") {
      o.kubernetes_gpu_id_type = KubernetesGpuIdType::kUid;
    } else if (r.last() == "device-name") {
      o.kubernetes_gpu_id_type = KubernetesGpuIdType::kDeviceName;
    } else {
      return InvalidArgument(r.origin + ": " + Quote(r.last()) +
                             " is not a GPU id type (expected uid or device-name)");
    }
  }
  NVMLX_RETURN_IF_ERROR(ToNonEmpty(get("pod-resources-kubelet-socket"), &o.pod_resources_socket));
  ToList(get("nvidia-resource-names"), &o.nvidia_resource_names);
  NVMLX_RETURN_IF_ERROR(ToBool(get("kubernetes-virtual-gpus"), &o.kubernetes_virtual_gpus));
  if (const Raw& r = get("hpc-job-mapping-dir"); r.set) o.hpc_job_mapping_dir = r.last();
  NVMLX_RETURN_IF_ERROR(ToBool(get("kubernetes-process-metrics"), &o.kubernetes_process_metrics));
  NVMLX_RETURN_IF_ERROR(ToNonEmpty(get("host-proc-root"), &o.host_proc_root));
  NVMLX_RETURN_IF_ERROR(
      ToBool(get("kubernetes-enable-pod-labels"), &o.kubernetes_enable_pod_labels));
  NVMLX_RETURN_IF_ERROR(ToBool(get("kubernetes-enable-pod-uid"), &o.kubernetes_enable_pod_uid));
  // urfave's StringSlice: every occurrence, each split at commas.
  for (const std::string& v : get("kubernetes-pod-label-allowlist-regex").values) {
    size_t pos = 0;
    while (pos <= v.size()) {
      size_t comma = v.find(',', pos);
      if (comma == std::string::npos) comma = v.size();
      if (comma > pos) o.kubernetes_pod_label_allowlist_regex.push_back(v.substr(pos, comma - pos));
      pos = comma + 1;
    }
  }
  if (const Raw& r = get("kubernetes-api-server"); r.set) o.kubernetes_api_server = r.last();
  if (const Raw& r = get("kubernetes-token-file"); r.set) o.kubernetes_token_file = r.last();
  if (const Raw& r = get("kubernetes-ca-file"); r.set) o.kubernetes_ca_file = r.last();
  if (std::optional<std::string> node = getenv("NODE_NAME"); node) o.node_name = *node;
  return o;
}

}  // namespace nvmlx::config
