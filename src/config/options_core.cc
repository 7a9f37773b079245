// The core, selection, runtime, web and counter-window flag groups (config/option_flags.h).
#include <climits>
#include <string>

#include "config/option_flags.h"

namespace nvmlx::config::flags {
namespace {

// clang-format off
constexpr FlagSpec kCore[] = {
  {"collectors", "f", "DCGM_EXPORTER_COLLECTORS", Kind::kString,
   "/etc/dcgm-exporter/default-counters.csv", true, "FILE",
   "Collectors CSV: the fields to export, with type and help text."},
  {"config-file", "", "DCGM_EXPORTER_CONFIG_FILE", Kind::kString, "", true, "FILE",
   "YAML configuration file, schema version 1 or 2 (docs/running.md); a flag or env var set "
   "explicitly overrides what it says."},
  {"address", "a", "DCGM_EXPORTER_LISTEN", Kind::kString, ":9400", true, "ADDR",
   "Address to listen on: host:port, [v6]:port or :port."},
  {"collect-interval", "c", "DCGM_EXPORTER_INTERVAL", Kind::kInt, "30000", true, "MS",
   "Collection interval in milliseconds (at least 100)."},
};

constexpr FlagSpec kSelection[] = {
  {"devices", "d", "DCGM_EXPORTER_DEVICES_STR", Kind::kString, "f", true, "SEL",
   "GPUs to monitor: f (flex), g, g:0,1, g:0-3, i, i:0,2-4, or GPUs and MIG instances together: "
   "g+i, g:0+i:1-2."},
  {"no-hostname", "n", "DCGM_EXPORTER_NO_HOSTNAME", Kind::kBool, "false", true, "",
   "Omit the hostname label (its value is $NODE_NAME, else the host name)."},
  {"use-old-namespace", "o", "DCGM_EXPORTER_USE_OLD_NAMESPACE", Kind::kBool, "false", true, "",
   "Use the old label names (uuid instead of UUID)."},
  {"replace-blanks-in-model-name", "rbmn", "DCGM_EXPORTER_REPLACE_BLANKS_IN_MODEL_NAME",
   Kind::kBool, "false", true, "", "Replace spaces in the modelName label with '-'."},
};

constexpr FlagSpec kRuntime[] = {
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
  {"profiling-source", "", "NVML_EXPORTER_PROFILING_SOURCE", Kind::kString, "auto", true, "SRC",
   "Source of the DCGM_FI_PROF_* fields: auto (GPM where the GPU has it, else CUPTI PM "
   "sampling, see docs/pm-sampling.md), gpm, pm-sampling or none."},
  {"cupti-library", "", "NVML_EXPORTER_CUPTI_LIBRARY", Kind::kString, "libcupti.so.13", true,
   "PATH", "CUPTI library for PM sampling (libnvperf_host.so is taken from beside it)."},
  {"pm-sampling-interval", "", "NVML_EXPORTER_PM_SAMPLING_INTERVAL", Kind::kInt, "500", true,
   "MS", "PM sampling's hardware sampling interval in milliseconds (20 to 1000)."},
  {"pm-sampling-dwell", "", "NVML_EXPORTER_PM_SAMPLING_DWELL", Kind::kInt, "10000", true, "MS",
   "Least time each PM-sampling configuration stays live when they alternate, in milliseconds "
   "(0 to 600000; 0: three sampling intervals). Each switch costs ~0.1 s of CPU (docs/pm-sampling.md "
   "§6)."},
  {"pm-sampling-steady-hold", "", "NVML_EXPORTER_PM_SAMPLING_STEADY_HOLD", Kind::kInt, "60000",
   true, "MS", "Longest time a PM-sampling pipe configuration (tensor, FP32, FP64) is not "
   "switched to while the SM and GR activity bounding it stay within 10 points of when it was "
   "last measured, in milliseconds (0 to 3600000; 0: off, every dwell switches; "
   "docs/pm-sampling.md §3)."},
  {"pm-sampling-pin", "", "NVML_EXPORTER_PM_SAMPLING_PIN", Kind::kList, "", true, "FIELD,...",
   "DCGM_FI_PROF_* fields PM sampling measures without gaps: they are in every configuration, "
   "and fields that cannot share a pass with them are not served (docs/pm-sampling.md)."},
  {"profiling-pause-endpoint", "", "NVML_EXPORTER_PROFILING_PAUSE_ENDPOINT", Kind::kBool, "false",
   true, "", "Serve POST /api/v1/profiling/pause and /resume (as SIGUSR1/SIGUSR2 do); put basic "
   "auth in front of it with --web-config-file."},
};

constexpr FlagSpec kWeb[] = {
  {"web-read-timeout", "", "DCGM_EXPORTER_WEB_READ_TIMEOUT", Kind::kDuration, "10s", true, "DUR",
   "HTTP read timeout (Go duration: 10s, 500ms, 1m)."},
  {"web-write-timeout", "", "DCGM_EXPORTER_WEB_WRITE_TIMEOUT", Kind::kDuration, "30s", true,
   "DUR", "HTTP write timeout (Go duration)."},
  {"web-max-connections", "", "NVML_EXPORTER_WEB_MAX_CONNECTIONS", Kind::kInt, "0", true, "N",
   "Open HTTP connections at most; idle ones make room, else 503 (0: half the soft descriptor "
   "limit, at most 1024)."},
  {"web-health-no-auth", "", "NVML_EXPORTER_WEB_HEALTH_NO_AUTH", Kind::kBool, "false", true, "",
   "Serve /health and /ready without basic auth (kubelet probes) when the web config has users."},
};

constexpr FlagSpec kCounterWindows[] = {
  {"xid-count-window-size", "x", "DCGM_EXPORTER_XID_COUNT_WINDOW_SIZE", Kind::kInt, "300000",
   true, "MS", "Window of DCGM_EXP_XID_ERRORS_COUNT in milliseconds."},
  {"clock-events-count-window-size", "", "DCGM_EXPORTER_CLOCK_EVENTS_COUNT_WINDOW_SIZE",
   Kind::kInt, "300000", true, "MS",
   "Window of DCGM_EXP_CLOCK_EVENTS_COUNT in milliseconds."},
};
// clang-format on

Status ConvertCore(const RawFlags& raw, Options* o) {
  NVMLX_RETURN_IF_ERROR(ToNonEmpty(raw.Get("collectors"), &o->collectors));
  NVMLX_RETURN_IF_ERROR(ToNonEmpty(raw.Get("config-file"), &o->config_file));
  NVMLX_RETURN_IF_ERROR(ToNonEmpty(raw.Get("address"), &o->address));
  if (const Raw& r = raw.Get("collect-interval"); r.set) {
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
    o->collect_interval_ms = static_cast<int>(*v);
  }
  return Status::Ok();
}

Status ConvertSelection(const RawFlags& raw, Options* o) {
  const Raw& devices = raw.Get("devices");
  ToText(devices, &o->devices_text);
  Result<DeviceSelector> sel = ParseDeviceSelector(o->devices_text);
  if (!sel.ok()) {
    return InvalidArgument((devices.set ? devices.origin : std::string("--devices")) + ": " +
                           sel.status().message());
  }
  o->devices = *sel;
  NVMLX_RETURN_IF_ERROR(ToBool(raw.Get("no-hostname"), &o->no_hostname));
  NVMLX_RETURN_IF_ERROR(ToBool(raw.Get("use-old-namespace"), &o->use_old_namespace));
  return ToBool(raw.Get("replace-blanks-in-model-name"), &o->replace_blanks_in_model_name);
}

Status ConvertRuntime(const RawFlags& raw, Options* o) {
  NVMLX_RETURN_IF_ERROR(ToBool(raw.Get("debug"), &o->debug));
  if (const Raw& r = raw.Get("log-format"); r.set) {
    if (r.last() == "text") {
      o->log_format = LogFormat::kText;
    } else if (r.last() == "json") {
      o->log_format = LogFormat::kJson;
    } else {
      return InvalidArgument(r.origin + ": " + Quote(r.last()) +
                             " is not a log format (expected text or json)");
    }
  }
  NVMLX_RETURN_IF_ERROR(ToBool(raw.Get("fake-gpus"), &o->fake_gpus));
  ToText(raw.Get("fake-gpus-scenario"), &o->fake_gpus_scenario);
  if (!o->fake_gpus_scenario.empty()) o->fake_gpus = true;
  NVMLX_RETURN_IF_ERROR(ToNonEmpty(raw.Get("nvml-library"), &o->nvml_library));
  NVMLX_RETURN_IF_ERROR(ToNonEmpty(raw.Get("cupti-library"), &o->cupti_library));
  if (const Raw& r = raw.Get("profiling-source"); r.set) {
    const std::string& v = r.last();
    if (v != "auto" && v != "gpm" && v != "pm-sampling" && v != "none") {
      return InvalidArgument(r.origin + ": " + Quote(v) +
                             " is not a profiling source (expected auto, gpm, pm-sampling or "
                             "none)");
    }
    o->profiling_source = v;
  }
  NVMLX_RETURN_IF_ERROR(ToIntInRange(raw.Get("pm-sampling-interval"), 20, 1000,
                                     "a PM-sampling interval (milliseconds, 20 to 1000)",
                                     &o->pm_sampling_interval_ms));
  NVMLX_RETURN_IF_ERROR(ToIntInRange(raw.Get("pm-sampling-dwell"), 0, 600000,
                                     "a PM-sampling dwell (milliseconds, 0 to 600000)",
                                     &o->pm_sampling_dwell_ms));
  NVMLX_RETURN_IF_ERROR(ToIntInRange(raw.Get("pm-sampling-steady-hold"), 0, 3600000,
                                     "a PM-sampling steady hold (milliseconds, 0 to 3600000)",
                                     &o->pm_sampling_steady_hold_ms));
  ToList(raw.Get("pm-sampling-pin"), &o->pm_sampling_pin);
  NVMLX_RETURN_IF_ERROR(ToBool(raw.Get("profiling-pause-endpoint"), &o->profiling_pause_endpoint));
  return ToBool(raw.Get("once"), &o->once);
}

Status ConvertWeb(const RawFlags& raw, Options* o) {
  NVMLX_RETURN_IF_ERROR(ToTimeout(raw.Get("web-read-timeout"), &o->web_read_timeout));
  NVMLX_RETURN_IF_ERROR(ToTimeout(raw.Get("web-write-timeout"), &o->web_write_timeout));
  NVMLX_RETURN_IF_ERROR(ToIntInRange(raw.Get("web-max-connections"), 0, 1000000,
                                     "a connection count (0 for the default, at most 1000000)",
                                     &o->web_max_connections));
  return ToBool(raw.Get("web-health-no-auth"), &o->web_health_no_auth);
}

// A window in milliseconds, at least 1.
Status ToWindow(const Raw& r, int64_t* out) {
  if (!r.set) return Status::Ok();
  std::optional<long long> v = ParseDecimal(r.last());
  if (!v) {
    return InvalidArgument(r.origin + ": " + Quote(r.last()) +
                           " is not a whole number of milliseconds");
  }
  if (*v < 1) return InvalidArgument(r.origin + ": " + r.last() + " must be at least 1");
  *out = *v;
  return Status::Ok();
}

Status ConvertCounterWindows(const RawFlags& raw, Options* o) {
  NVMLX_RETURN_IF_ERROR(ToWindow(raw.Get("xid-count-window-size"), &o->xid_count_window_ms));
  return ToWindow(raw.Get("clock-events-count-window-size"), &o->clock_events_count_window_ms);
}

}  // namespace

FlagGroup CoreFlags() { return {kCore, &ConvertCore}; }
FlagGroup SelectionFlags() { return {kSelection, &ConvertSelection}; }
FlagGroup RuntimeFlags() { return {kRuntime, &ConvertRuntime}; }
FlagGroup WebFlags() { return {kWeb, &ConvertWeb}; }
FlagGroup CounterWindowFlags() { return {kCounterWindows, &ConvertCounterWindows}; }

}  // namespace nvmlx::config::flags
