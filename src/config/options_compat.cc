// The dcgm-exporter flags that are about DCGM itself, or about features nvml-exporter does not
// have yet (config/option_flags.h). docs/compatibility.md lists each with what we do about it.
//
// Every one is accepted with dcgm-exporter's name, alias, env var and default, and its value is
// checked as dcgm-exporter checks it (a start-up that fails there fails here). Then:
//   - no meaning without DCGM (-r, -p, -s, --enable-dcgm-log, --dcgm-log-level, --dump-*,
//     --disable-startup-validate, --enable-pprof): one start-up warning per option that asks
//     for something, naming the flag or env var that set it and why it has no effect
//     (Options::startup_warnings; app/ logs them);
//   - --kubernetes-enable-dra, --web-systemd-socket, --web-config-file, --configmap-data, the GPU
//     bind/unbind watch: carried in Options (the web config file is parsed and checked by app/
//     at start; app/gpu_binding_watch.h watches the GPUs).
#include <cctype>
#include <optional>
#include <string>
#include <string_view>

#include "config/device_selector.h"
#include "config/option_flags.h"
#include "util/escape.h"
#include "util/go_duration.h"

namespace nvmlx::config::flags {
namespace {

// clang-format off
constexpr FlagSpec kCompat[] = {
  {"remote-hostengine-info", "r", "DCGM_REMOTE_HOSTENGINE_INFO", Kind::kString, "localhost:5555",
   false, "HOST:PORT", "DCGM hostengine to connect to: HOST:PORT, tcp://HOST:PORT, "
   "unix:///SOCKET_PATH or vsock://CID:PORT (no effect: NVML is read in-process)."},
  {"cpu-devices", "p", "DCGM_EXPORTER_CPU_DEVICES_STR", Kind::kString, "f", false, "SEL",
   "CPUs to monitor (no effect: NVML has no CPU entities)."},
  {"switch-devices", "s", "DCGM_EXPORTER_OTHER_DEVICES_STR", Kind::kString, "f", false, "SEL",
   "NvSwitches to monitor (no effect: NVML has no NvSwitch entities)."},
  {"enable-dcgm-log", "", "DCGM_EXPORTER_ENABLE_DCGM_LOG", Kind::kBool, "false", false, "",
   "Write DCGM's log to stdout (no effect: there is no DCGM)."},
  {"dcgm-log-level", "", "DCGM_EXPORTER_DCGM_LOG_LEVEL", Kind::kString, "NONE", false, "LEVEL",
   "DCGM log level: NONE, FATAL, ERROR, WARN, INFO, DEBUG, VERB (no effect)."},
  {"dump-enabled", "", "DCGM_EXPORTER_DUMP_ENABLED", Kind::kBool, "false", false, "",
   "DCGM debug dumps (no effect)."},
  {"dump-directory", "", "DCGM_EXPORTER_DUMP_DIRECTORY", Kind::kString,
   "/tmp/dcgm-exporter-debug", false, "DIR", "Directory of the debug dumps (no effect)."},
  {"dump-retention", "", "DCGM_EXPORTER_DUMP_RETENTION", Kind::kInt, "24", false, "HOURS",
   "Retention of the debug dumps (no effect)."},
  {"dump-compression", "", "DCGM_EXPORTER_DUMP_COMPRESSION", Kind::kBool, "true", false, "",
   "gzip the debug dumps (no effect)."},
  {"disable-startup-validate", "", "DISABLE_STARTUP_VALIDATE", Kind::kBool, "false", false, "",
   "Skip DCGM's start-up checks (no effect: there are none)."},
  {"enable-pprof", "", "DCGM_EXPORTER_ENABLE_PPROF", Kind::kBool, "false", false, "",
   "Go's /debug/pprof/ endpoints (no effect: not a Go program)."},
  {"enable-gpu-bind-unbind-watch", "", "DCGM_EXPORTER_ENABLE_GPU_BIND_UNBIND_WATCH", Kind::kBool,
   "false", true, "", "Re-enumerate the GPUs (the daemon re-executes itself) when a GPU is bound "
   "to or unbound from the nvidia driver."},
  {"gpu-bind-unbind-poll-interval", "", "DCGM_EXPORTER_GPU_BIND_UNBIND_POLL_INTERVAL",
   Kind::kString, "1s", true, "DUR", "Poll interval of the bind/unbind watch (Go duration)."},
  {"kubernetes-enable-dra", "", "KUBERNETES_ENABLE_DRA", Kind::kBool, "false", true, "",
   "With -k, attribute GPUs allocated through Dynamic Resource Allocation claims (pod and DRA "
   "labels)."},
  {"web-systemd-socket", "", "DCGM_EXPORTER_SYSTEMD_SOCKET", Kind::kBool, "false", true, "",
   "Serve on the socket systemd passes (socket activation) instead of --address."},
  {"web-config-file", "", "DCGM_EXPORTER_WEB_CONFIG_FILE", Kind::kString, "", true, "FILE",
   "Prometheus exporter-toolkit web config: TLS, basic auth, headers (docs/web.md)."},
  {"configmap-data", "m", "DCGM_EXPORTER_CONFIGMAP_DATA", Kind::kString, "none", true, "NS:NAME",
   "Read the collectors CSV from the 'metrics' key of this ConfigMap (API server)."},
};
// clang-format on

constexpr std::string_view kNoDcgmLog =
    "there is no DCGM library to log; --debug sets the level "
    "of nvml-exporter's own log";
constexpr std::string_view kNoDumps =
    "nvml-exporter has no DCGM debug dumps; --debug logs what it reads and --once prints one "
    "collection";

// "-r/--remote-hostengine-info".
std::string Names(const FlagSpec& f) {
  std::string s;
  if (!f.alias.empty()) s = "-" + std::string(f.alias) + "/";
  return s + "--" + std::string(f.name);
}

// `-r/--remote-hostengine-info (DCGM_REMOTE_HOSTENGINE_INFO=nvidia-dcgm:5555) ignored: why`;
// a boolean flag on the command line is its own origin: `--dump-enabled ignored: why`.
void Warn(const FlagSpec& f, const Raw& raw, std::string_view why, Options* o) {
  std::string where = " (" + raw.origin + "=" + util::MessagePrefix(raw.last()) + ")";
  if (raw.from_flag && f.kind == Kind::kBool) where.clear();
  o->startup_warnings.push_back(
      {std::string(f.name), Names(f) + where + " ignored: " + std::string(why)});
}

// -r's DCGM URI forms (dcgm-exporter 4.8.3+: tcp://HOST[:PORT], unix:///SOCKET_PATH,
// vsock://CID:PORT; the scheme in any case, as go-dcgm matches it). dcgm-exporter hands the text
// to DCGM, whose connect fails on a malformed URI and the exporter exits 1; we never connect, so
// the same text is refused here instead of being accepted and ignored. Why it is malformed, or
// nullopt for a well-formed URI or the plain HOST:PORT form (which DCGM resolves; not judged).
std::optional<std::string> CheckHostengineUri(std::string_view v) {
  const size_t sep = v.find("://");
  if (sep == std::string_view::npos) return std::nullopt;
  std::string scheme(v.substr(0, sep));
  for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::string_view rest = v.substr(sep + 3);
  auto is_number = [](std::string_view s, unsigned long long max) {
    if (s.empty() || s.size() > 10) return false;
    unsigned long long n = 0;
    for (char c : s) {
      if (c < '0' || c > '9') return false;
      n = n * 10 + static_cast<unsigned>(c - '0');
    }
    return n <= max;
  };
  if (scheme == "unix") {
    if (rest.size() < 2 || rest.front() != '/') {
      return "is not a DCGM unix URI (expected unix:///SOCKET_PATH, an absolute path)";
    }
    return std::nullopt;
  }
  if (scheme == "vsock") {
    const size_t colon = rest.find(':');
    if (colon == std::string_view::npos || !is_number(rest.substr(0, colon), 0xffffffffull) ||
        !is_number(rest.substr(colon + 1), 0xffffffffull)) {
      return "is not a DCGM vsock URI (expected vsock://CID:PORT, both numbers)";
    }
    return std::nullopt;
  }
  if (scheme == "tcp") {
    // HOST, HOST:PORT, [V6] or [V6]:PORT.
    std::string_view host = rest;
    std::string_view port;
    if (!rest.empty() && rest.front() == '[') {
      const size_t close = rest.find(']');
      if (close == std::string_view::npos || close == 1) return "has an unclosed or empty [IPv6]";
      host = rest.substr(1, close - 1);
      if (close + 1 < rest.size()) {
        if (rest[close + 1] != ':') return "is not a DCGM tcp URI (expected tcp://[V6]:PORT)";
        port = rest.substr(close + 2);
        if (port.empty()) return "is not a DCGM tcp URI (expected a port after ':')";
      }
    } else if (const size_t colon = rest.rfind(':'); colon != std::string_view::npos) {
      host = rest.substr(0, colon);
      port = rest.substr(colon + 1);
      if (port.empty()) return "is not a DCGM tcp URI (expected a port after ':')";
    }
    if (host.empty() || host.find_first_of("/ ") != std::string_view::npos) {
      return "is not a DCGM tcp URI (expected tcp://HOST:PORT)";
    }
    if (!port.empty() && (!is_number(port, 65535) || port == "0")) {
      return "is not a DCGM tcp URI (the port must be 1 to 65535)";
    }
    return std::nullopt;
  }
  return "has a scheme DCGM does not know (expected tcp://, unix:// or vsock://, or HOST:PORT)";
}

// A boolean flag: checked as urfave checks it; true asks for what it names.
Result<bool> AsksFor(const Raw& raw) {
  bool v = false;
  NVMLX_RETURN_IF_ERROR(ToBool(raw, &v));
  return raw.set && v;
}

Status ConvertCompat(const RawFlags& raw, Options* o) {
  for (const FlagSpec& f : kCompat) {
    const Raw& r = raw.Get(f.name);
    if (f.kind == Kind::kBool) {
      Result<bool> on = AsksFor(r);
      if (!on.ok()) return on.status();
      if (f.name == "enable-dcgm-log" && *on) Warn(f, r, kNoDcgmLog, o);
      if (f.name == "dump-enabled" && *on) Warn(f, r, kNoDumps, o);
      // dcgm-exporter's default is true, and the Helm chart passes the bare flag with dumps on.
      if (f.name == "dump-compression" && r.set) Warn(f, r, kNoDumps, o);
      if (f.name == "disable-startup-validate" && *on) {
        Warn(f, r,
             "nvml-exporter has no DCGM prerequisites to validate; it checks NVML when it loads "
             "it, either way",
             o);
      }
      if (f.name == "enable-pprof" && *on) {
        Warn(f, r,
             "nvml-exporter is not a Go program and serves no /debug/pprof/; profile it with perf "
             "(the binary keeps its symbols)",
             o);
      }
      if (f.name == "enable-gpu-bind-unbind-watch") o->enable_gpu_bind_unbind_watch = *on;
      if (f.name == "kubernetes-enable-dra") {
        o->kubernetes_enable_dra = *on;
      }
      if (f.name == "web-systemd-socket") o->web_systemd_socket = *on;
      continue;
    }
    if (!r.set) continue;
    if (f.name == "remote-hostengine-info") {
      if (std::optional<std::string> bad = CheckHostengineUri(r.last())) {
        return InvalidArgument(r.origin + ": " + Quote(r.last()) + " " + *bad);
      }
      // dcgm-exporter connects to a remote hostengine whenever the option is set at all (urfave
      // IsSet, env included), even to its default value.
      Warn(f, r, "nvml-exporter reads NVML in-process; there is no DCGM hostengine to connect to",
           o);
    } else if (f.name == "cpu-devices" || f.name == "switch-devices") {
      // dcgm-exporter parses both selectors at start, whatever the node has.
      Result<DeviceSelector> sel = ParseDeviceSelector(r.last());
      if (!sel.ok()) return InvalidArgument(r.origin + ": " + sel.status().message());
      Warn(f, r,
           f.name == "cpu-devices"
               ? "NVML has no CPU entities; nvml-exporter monitors GPUs only"
               : "NVML has no NvSwitch entities; nvml-exporter monitors GPUs only",
           o);
    } else if (f.name == "dcgm-log-level") {
      const std::string& v = r.last();
      if (v != "NONE" && v != "FATAL" && v != "ERROR" && v != "WARN" && v != "INFO" &&
          v != "DEBUG" && v != "VERB") {
        return InvalidArgument(r.origin + ": " + Quote(v) +
                               " is not a DCGM log level (expected NONE, FATAL, ERROR, WARN, "
                               "INFO, DEBUG or VERB)");
      }
      Warn(f, r, kNoDcgmLog, o);
    } else if (f.name == "dump-directory") {
      Warn(f, r, kNoDumps, o);
    } else if (f.name == "dump-retention") {
      if (!ParseDecimal(r.last())) {
        return InvalidArgument(r.origin + ": " + Quote(r.last()) +
                               " is not a whole number of hours");
      }
      Warn(f, r, kNoDumps, o);
    } else if (f.name == "gpu-bind-unbind-poll-interval") {
      // dcgm-exporter reads a bad duration as its default (with a warning): never an error.
      Result<std::chrono::nanoseconds> d = ParseGoDuration(r.last());
      if (d.ok() && *d >= std::chrono::milliseconds(1)) {
        o->gpu_bind_unbind_poll_interval =
            std::chrono::duration_cast<std::chrono::milliseconds>(*d);
      } else {
        o->startup_warnings.push_back(
            {std::string(f.name),
             r.origin + ": " + Quote(r.last()) + " is not a duration of 1ms or more; 1s is used"});
      }
    } else if (f.name == "web-config-file") {
      o->web_config_file = r.last();
    } else if (f.name == "configmap-data") {
      // "none" (the default) reads no ConfigMap; anything else must be NAMESPACE:NAME (exactly
      // one ':'), as dcgm-exporter splits it.
      const std::string& v = r.last();
      if (v == "none") continue;
      const size_t colon = v.find(':');
      if (colon == std::string::npos || colon == 0 || colon + 1 == v.size() ||
          v.find(':', colon + 1) != std::string::npos) {
        return InvalidArgument(r.origin + ": " + Quote(v) +
                               " is not a ConfigMap (expected NAMESPACE:NAME, or none)");
      }
      o->configmap_namespace = v.substr(0, colon);
      o->configmap_name = v.substr(colon + 1);
    }
  }
  return Status::Ok();
}

}  // namespace

FlagGroup CompatFlags() { return {kCompat, &ConvertCompat}; }

}  // namespace nvmlx::config::flags
