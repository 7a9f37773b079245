// The group of dcgm-exporter flags we do not implement yet (config/option_flags.h).
#include <string>

#include "config/option_flags.h"
#include "util/go_duration.h"

namespace nvmlx::config::flags {
namespace {

// clang-format off
constexpr FlagSpec kUnsupported[] = {
  {"cpu-devices", "p", "DCGM_EXPORTER_CPU_DEVICES_STR", Kind::kString, "f", false, "SEL", ""},
  {"configmap-data", "m", "DCGM_EXPORTER_CONFIGMAP_DATA", Kind::kString, "none", false, "NS:NAME",
   ""},
  {"remote-hostengine-info", "r", "DCGM_REMOTE_HOSTENGINE_INFO", Kind::kString, "localhost:5555",
   false, "HOST:PORT", "", true},
  {"switch-devices", "s", "DCGM_EXPORTER_OTHER_DEVICES_STR", Kind::kString, "f", false, "SEL",
   ""},
  {"web-config-file", "", "DCGM_EXPORTER_WEB_CONFIG_FILE", Kind::kString, "", false, "FILE", ""},
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

}  // namespace

FlagGroup UnsupportedFlags() { return {kUnsupported, nullptr}; }

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

}  // namespace nvmlx::config::flags
