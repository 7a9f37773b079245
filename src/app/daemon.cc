#include "app/daemon.h"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <thread>
#include <utility>

#include "app/collectors_source.h"
#include "app/own_families.h"
#include "app/process_metrics.h"
#include "app/stop_deadline.h"
#include "app/version.h"
#include "config/exit_code.h"
#include "fields/pm_metrics.h"
#include "render/gzip.h"
#include "serve/systemd_socket.h"
#include "serve/web_tls.h"
#include "util/log.h"

namespace nvmlx::app {
namespace {

// The field plan's cadences: the collection interval and the config file's watch groups.
plan::Cadences CadencesOf(const config::Options& opts) {
  return plan::Cadences{std::chrono::milliseconds(opts.collect_interval_ms), opts.watch_groups};
}

// A failed step: the one line an operator sees on stderr (only that: a log entry as well would
// print the same error twice). Returns the Status the caller hands up, coded so that
// config::ExitCodeFor gives `exit_code`, whatever code the failing part used.
Status Fail(config::ExitCode exit_code, const std::string& message) {
  std::fprintf(stderr, "nvml-exporter: %s\n", message.c_str());
  return exit_code == config::ExitCode::kUsage ? InvalidArgument(message) : Unavailable(message);
}

std::string Hostname(const config::Options& o) {
  if (o.no_hostname) return "";
  if (!o.node_name.empty()) return o.node_name;
  char buf[HOST_NAME_MAX + 1] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "";
  return buf;
}

// GPUs only: a MIG instance is up exactly when its GPU is, and /health speaks of GPUs.
PageStore::GpuCounts CountGpus(const model::Snapshot& s) {
  PageStore::GpuCounts n;
  for (const auto& d : s.devices) {
    if (d.identity == nullptr || d.identity->mig) continue;
    ++n.total;
    if (d.up) continue;
    if (d.lost) {
      ++n.lost;
    } else if (d.setting_up) {
      ++n.setting_up;
      n.setting_up_calls += (n.setting_up_calls.empty() ? "" : ", ") + std::string("gpu ") +
                            std::to_string(d.identity->index) + " in " +
                            (d.stuck_call.empty() ? "no NVML call" : d.stuck_call);
    } else if (d.stale) {
      ++n.stale;
    } else {
      ++n.unreadable;
    }
  }
  return n;
}

// nvmlInit failing with a transient error (driver not loaded yet, not ready, a driver/library
// version mismatch during an upgrade) is retried with backoff, kNvmlInitFirstBackoff doubling to
// kNvmlInitMaxBackoff, for kNvmlInitRetryBudget; then the daemon exits 1 so that Kubernetes'
// restart backoff shows the problem (docs/faults.md). A library that is missing or not NVML is
// not retried: no wait fixes a wrong path. The start-up thread runs this; SIGTERM ends the
// process meanwhile (app.cc).
// A minute covers a driver that is still loading when the pod starts, without hiding a broken
// node from Kubernetes for long.
constexpr std::chrono::seconds kNvmlInitRetryBudget{60};
// A second is short next to the budget but does not spin on a driver that is not there yet.
constexpr std::chrono::milliseconds kNvmlInitFirstBackoff{1000};
// The cap keeps retrying often enough to matter (1, 2, 4, 8, 8, ... s): a driver that comes up
// late in the budget is still seen within 8 s, not after a doubled wait past the budget's end.
constexpr std::chrono::milliseconds kNvmlInitMaxBackoff{8000};

Result<std::unique_ptr<nvml::Library>> LoadNvml(const std::string& path) {
  const auto give_up = std::chrono::steady_clock::now() + kNvmlInitRetryBudget;
  std::chrono::milliseconds backoff = kNvmlInitFirstBackoff;
  for (int attempt = 1;; ++attempt) {
    Result<std::unique_ptr<nvml::Library>> lib = nvml::Library::Load(path);
    if (lib.ok()) {
      if (attempt > 1) log::Info("NVML initialised", {{"attempts", std::to_string(attempt)}});
      return lib;
    }
    if (lib.status().code() != StatusCode::kUnavailable ||
        std::chrono::steady_clock::now() + backoff > give_up) {
      return lib.status();
    }
    // Once per streak at warn; every further attempt at debug.
    (attempt == 1 ? log::Warn : log::Debug)(
        "NVML initialisation failed; retrying (logged once, then at debug level)",
        {{"err", lib.status().ToString()},
         {"attempt", std::to_string(attempt)},
         {"retry_in_ms", std::to_string(backoff.count())}});
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, kNvmlInitMaxBackoff);
  }
}

double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The shortest time the HTTP server keeps an idle connection: long enough for Prometheus to reuse
// it across scrapes (15 s to 1 min intervals, with room for a slow one); Go's default (idle =
// read timeout, 10 s) forces a new connection every scrape.
constexpr std::chrono::seconds kMinIdleTimeout{120};

// What the collector's stop always gets after the server has stopped, whatever the stop deadline
// says: a read in progress and the Xid watcher's event wait (at most 500 ms, XidWatcher's
// kWaitTimeout) end within it, so only a call still running after it is stuck.
constexpr std::chrono::milliseconds kCollectorStopFloor{600};

// The least the EMF pipeline gets to send the last collection's documents at stop, even when the
// stop deadline has passed: they get a chance, and a dead receiver holds the stop no longer.
constexpr std::chrono::milliseconds kMinEmfDrain{300};

// --once waits at most this long for the first pod list before rendering: a one-shot run must end
// even when the API server does not answer; the page then has no pod labels.
constexpr std::chrono::seconds kOnceAttributionWait{5};

}  // namespace

Result<std::unique_ptr<Daemon>> Daemon::Create(const config::Options& options, Environment env) {
  std::unique_ptr<Daemon> d(new Daemon(options));
  // On failure `d` goes out of scope here: what was built so far is stopped and destroyed.
  if (Status st = d->Build(env); !st.ok()) return st;
  return d;
}

Status Daemon::Build(const Environment& env) {
  const config::Options& opts = options_;
  Result<CollectorsSource> rows = LoadCollectors(opts, env.getenv);
  if (!rows.ok()) {
    return Fail(config::ExitCode::kUsage, rows.status().message());
  }
  if (Status st = CheckWatchGroups(opts, *rows); !st.ok()) {
    return Fail(config::ExitCode::kUsage, st.message());
  }
  if (!opts.once && !opts.web_config_file.empty()) {
    // Checked with the other files, before NVML, so that a bad one is a usage error (exit 2)
    // naming file and line at once; the server loads it again when it starts and whenever it
    // changes.
    Result<std::shared_ptr<const serve::WebState>> web = serve::LoadWebState(opts.web_config_file);
    if (!web.ok()) {
      return Fail(config::ExitCode::kUsage, "--web-config-file: " + web.status().message());
    }
  }
  getenv_ = env.getenv;
  collectors_name_ = rows->name;
  collectors_reloadable_ = rows->reloadable;
  {
    util::MutexLock io(&reload_io_mu_);
    seen_ = Identify(opts.collectors);
  }
  {
    util::MutexLock lock(&reload_mu_);
    last_reload_success_s_ = UnixNow();
  }
  cupti_path_ = env.cupti_library;
  Result<std::unique_ptr<nvml::Library>> lib = LoadNvml(env.nvml_library);
  if (!lib.ok()) return Fail(config::ExitCode::kUnavailable, lib.status().ToString());
  nvml_ = std::move(*lib);
  // After NVML: a host without a driver gets exactly one line (the one above), not warnings.
  // The watch groups passed CheckWatchGroups above, against these very rows.
  Result<std::shared_ptr<const plan::FieldPlan>> built =
      plan::FieldPlan::Build(std::move(rows->rows), rows->name, CadencesOf(opts));
  if (!built.ok()) return Fail(config::ExitCode::kUsage, built.status().message());
  std::shared_ptr<const plan::FieldPlan> plan = std::move(built).value();
  Result<std::string> driver = nvml_->DriverVersion();
  log::Info("NVML loaded",
            {{"library", nvml_->resolved_path()},
             {"simulated", opts.fake_gpus ? "true" : "false"},
             {"scenario", !opts.fake_gpus                   ? "none"
                          : opts.fake_gpus_scenario.empty() ? "built-in"
                                                            : opts.fake_gpus_scenario},
             {"driver", driver.ok() ? *driver : driver.status().ToString()}});
  if (auto missing = nvml_->MissingSymbols(); !missing.empty()) {
    std::string names;
    for (const auto& m : missing) names += (names.empty() ? "" : ",") + m;
    log::Debug("NVML symbols absent in this driver; their fields are disabled",
               {{"symbols", names}});
  }

  Result<std::unique_ptr<AttributionSources>> sources =
      AttributionSources::Create(opts, env.getenv);
  if (!sources.ok()) return Fail(config::ExitCode::kUsage, sources.status().message());
  sources_ = std::move(*sources);
  NVMLX_RETURN_IF_ERROR(BuildCollector(std::move(plan)));
  BuildRenderOptions(driver.ok() ? *driver : "");
  if (opts.once) {
    if (!opts.emf.outputs.empty()) {
      log::Warn("--once prints the Prometheus page only; --emf-output is ignored");
    }
    return Status::Ok();
  }
  return BuildOutputs(env);
}

void Daemon::SetProfilingPaused(bool paused) {
  log::Info(paused ? "PM sampling pause requested: counters released at the next collection"
                   : "PM sampling resume requested");
  if (collector_ != nullptr) collector_->SetProfilingPaused(paused);
}

namespace {

constexpr std::string_view kProfilingPath = "/api/v1/profiling";
constexpr std::string_view kPausePath = "/api/v1/profiling/pause";
constexpr std::string_view kResumePath = "/api/v1/profiling/resume";

serve::Resource JsonResource(int status, std::string body) {
  serve::Resource r;
  r.status = status;
  r.content_type = "application/json";
  r.body = std::make_shared<const std::string>(std::move(body));
  r.no_store = true;
  return r;
}

}  // namespace

std::optional<serve::Resource> Daemon::ProfilingResource(std::string_view path) const {
  if (path == kProfilingPath) {
    const bool paused = collector_ != nullptr && collector_->ProfilingPaused();
    return JsonResource(200, std::string("{\"profiling_source\":\"") + options_.profiling_source +
                                 "\",\"paused\":" + (paused ? "true" : "false") +
                                 ",\"pause_endpoint\":" +
                                 (options_.profiling_pause_endpoint ? "true" : "false") + "}\n");
  }
  if (options_.profiling_pause_endpoint && (path == kPausePath || path == kResumePath)) {
    serve::Resource r = JsonResource(405, "{\"error\":\"POST only\"}\n");
    r.allow = "POST";
    return r;
  }
  return std::nullopt;
}

std::optional<serve::Resource> Daemon::ProfilingAction(std::string_view path) {
  if (!options_.profiling_pause_endpoint) return std::nullopt;
  const bool pause = path == kPausePath;
  if (!pause && path != kResumePath) return std::nullopt;
  SetProfilingPaused(pause);
  return JsonResource(200, std::string("{\"paused\":") + (pause ? "true" : "false") + "}\n");
}

const cupti::Library* Daemon::LoadCupti() {
  util::MutexLock lock(&cupti_mu_);
  if (cupti_tried_) return cupti_.get();
  cupti_tried_ = true;
  Result<std::unique_ptr<cupti::Library>> lib = cupti::Library::Load(cupti_path_);
  if (!lib.ok()) {
    log::Warn(
        "CUPTI not loaded: DCGM_FI_PROF_* fields of GPUs without GPM are skipped (mount "
        "libcupti.so.13 and libnvperf_host.so and set --cupti-library; docs/pm-sampling.md)",
        {{"library", cupti_path_}, {"err", lib.status().ToString()}});
    return nullptr;
  }
  cupti_ = std::move(*lib);
  log::Info("CUPTI loaded for PM sampling", {{"library", cupti_path_}});
  return cupti_.get();
}

Status Daemon::BuildCollector(std::shared_ptr<const plan::FieldPlan> plan) {
  const config::Options& opts = options_;
  collect::CollectorOptions copts;
  copts.interval = std::chrono::milliseconds(opts.collect_interval_ms);
  copts.plan = std::move(plan);
  copts.devices = opts.devices;
  copts.replace_blanks_in_model_name = opts.replace_blanks_in_model_name;
  copts.xid_window = std::chrono::milliseconds(opts.xid_count_window_ms);
  copts.clock_events_window = std::chrono::milliseconds(opts.clock_events_count_window_ms);
  // The collector copies the sources' latest parts into each snapshot. `sources_` is built
  // before the collector and destroyed after it.
  copts.process_metrics = sources_->process_metrics();
  copts.profiling = opts.profiling_source == "gpm"           ? collect::ProfilingChoice::kGpm
                    : opts.profiling_source == "pm-sampling" ? collect::ProfilingChoice::kPmSampling
                    : opts.profiling_source == "none"        ? collect::ProfilingChoice::kNone
                                                             : collect::ProfilingChoice::kAuto;
  copts.pm_sampling.interval = std::chrono::milliseconds(opts.pm_sampling_interval_ms);
  copts.pm_sampling.min_dwell = std::chrono::milliseconds(opts.pm_sampling_dwell_ms);
  copts.pm_sampling.steady_hold = std::chrono::milliseconds(opts.pm_sampling_steady_hold_ms);
  Result<std::vector<int>> pins = fields::ResolvePmPins(opts.pm_sampling_pin);
  if (!pins.ok()) {
    return Fail(config::ExitCode::kUsage, "--pm-sampling-pin: " + pins.status().message());
  }
  copts.pm_sampling.pinned = std::move(pins).value();
  if (!cupti_path_.empty()) copts.cupti = [this] { return LoadCupti(); };
  if (sources_->enabled()) {
    copts.attribution = [sources = sources_.get()] { return sources->Latest(); };
  }
  if (!opts.once) copts.on_late_gpu = [this] { RequestRestart(); };
  copts.watch_faults = opts.kubernetes_node_conditions && !opts.once;
  Result<std::unique_ptr<collect::Collector>> collector =
      collect::Collector::Create(*nvml_, std::move(copts));
  if (!collector.ok()) return Fail(config::ExitCode::kUnavailable, collector.status().ToString());
  collector_ = std::move(*collector);
  size_t gpus = 0;
  for (const auto& id : collector_->identities()) gpus += id.mig ? 0 : 1;
  log::Info("collecting",
            {{"gpus", std::to_string(gpus)},
             {"mig_instances", std::to_string(collector_->identities().size() - gpus)},
             {"interval_ms", std::to_string(opts.collect_interval_ms)},
             {"fields", std::to_string(collector_->plan()->rows().size())}});
  sources_->AttachDevices(collector_->identities());
  return Status::Ok();
}

void Daemon::BuildRenderOptions(const std::string& driver) {
  const config::Options& opts = options_;
  ropts_.hostname = Hostname(opts);
  ropts_.hostname_label = opts.hostname_label;
  ropts_.mig_gpu_fields_on_parent = opts.mig_gpu_fields_on_parent;
  ropts_.use_old_namespace = opts.use_old_namespace;
  ropts_.device_pod_uid = opts.kubernetes && opts.kubernetes_enable_pod_uid;
  // dcgm-exporter 4.8 copies pod labels in its device-to-pod path only: its
  // --kubernetes-virtual-gpus path gives the per-pod copies attributes but no labels.
  ropts_.pod_labels =
      opts.kubernetes && opts.kubernetes_enable_pod_labels && !opts.kubernetes_virtual_gpus;
  ropts_.build = {NVMLX_VERSION, NVMLX_REVISION, nvml_->resolved_path(), driver};
  ropts_.attribution_errors = sources_->errors();  // rendered once a source has registered
  ropts_.pods = sources_->PodRenderOptions();
}

Status Daemon::BuildNodeFaults(const Environment& env) {
  const config::Options& opts = options_;
  if (opts.node_name.empty()) {
    return Fail(config::ExitCode::kUsage,
                "--kubernetes-node-conditions needs NODE_NAME, this node's name (the downward "
                "API's spec.nodeName)");
  }
  Result<attribute::KubeApiConfig> api = attribute::ResolveKubeApiConfig(
      opts.kubernetes_api_server, opts.kubernetes_token_file, opts.kubernetes_ca_file, env.getenv);
  if (!api.ok()) {
    return Fail(
        config::ExitCode::kUsage,
        "--kubernetes-node-conditions needs the Kubernetes API server: " + api.status().message());
  }
  attribute::NodeFaultReporterOptions o;
  o.api = *api;
  o.node_name = opts.node_name;
  o.hold = opts.kubernetes_node_conditions_hold;
  faults_ = std::make_unique<attribute::NodeFaultReporter>(std::move(o));
  return Status::Ok();
}

void Daemon::BuildEnergy() {
  energy_.emplace();
  if (options_.state_dir.empty()) return;
  const std::string file = options_.state_dir + "/pod-energy.json";
  render::PodEnergyLedger::KnownGpus gpus;
  for (const model::DeviceIdentity& id : collector_->identities()) {
    if (!id.mig) gpus[id.index] = id.uuid;
  }
  (void)EnergyStore::Load(file, gpus, std::chrono::system_clock::now(), &*energy_);
  energy_store_ = std::make_unique<EnergyStore>(
      file, std::make_shared<const render::PodEnergyLedger>(*energy_));
}

Status Daemon::BuildOutputs(const Environment& env) {
  const config::Options& opts = options_;
  if (!opts.emf.outputs.empty()) {
    Result<std::unique_ptr<EmfPipeline>> p = EmfPipeline::Create(opts);
    if (!p.ok()) {
      return Fail(config::ExitCode::kUsage, p.status().message());
    }
    emf_ = std::move(*p);
  }
  if (opts.kubernetes_node_conditions) NVMLX_RETURN_IF_ERROR(BuildNodeFaults(env));
  // Our own pod family, as the other nvml_exporter_pod_* ones: -k alone keeps dcgm-exporter's page.
  if (opts.kubernetes_process_metrics) BuildEnergy();
  const std::chrono::milliseconds interval(opts.collect_interval_ms);
  store_ = std::make_unique<PageStore>(
      opts.health_max_age.count() > 0 ? opts.health_max_age : PageStore::DefaultMaxAge(interval),
      opts.health_require_gpus);
  serve::ServerOptions sopts;
  sopts.address = opts.address;
  sopts.read_timeout = opts.web_read_timeout;
  sopts.write_timeout = opts.web_write_timeout;
  sopts.max_connections = opts.web_max_connections;
  sopts.max_concurrent_scrapes = opts.max_concurrent_scrapes;
  sopts.health_no_auth = opts.web_health_no_auth;
  sopts.web_config_file = opts.web_config_file;  // checked in Build, before NVML
  if (opts.web_systemd_socket) {
    // --web-systemd-socket: serve on what systemd passes; like dcgm-exporter, fail without one.
    Result<int> fd = serve::SystemdListenFd(env.getenv, getpid());
    if (!fd.ok()) {
      return Fail(config::ExitCode::kUnavailable, "--web-systemd-socket: " + fd.status().message());
    }
    sopts.listen_fd = *fd;
  }
  // Keep idle connections long enough for Prometheus to reuse them (kMinIdleTimeout).
  sopts.idle_timeout = std::max<std::chrono::milliseconds>(opts.web_read_timeout, kMinIdleTimeout);
  LivePage::Options lopts;
  lopts.history_minutes = opts.live_history_minutes;
  lopts.interval = interval;
  lopts.hostname = Hostname(opts);
  lopts.version = NVMLX_VERSION;
  lopts.kubernetes = opts.kubernetes || opts.kubernetes_process_metrics;
  lopts.stale_after = LivePage::StaleAfter(interval);
  live_ = std::make_unique<LivePage>(lopts);
  log::Info("live page history",
            {{"minutes", std::to_string(opts.live_history_minutes)},
             {"points_per_gpu", std::to_string(live_->history().Capacity())},
             {"bytes_per_gpu", std::to_string(live_->history().BytesPerDevice())}});
  PageStore* store = store_.get();
  LivePage* live = live_.get();
  if (opts.profiling_pause_endpoint && opts.web_config_file.empty()) {
    log::Warn(
        "--profiling-pause-endpoint without --web-config-file: anyone who reaches the port can "
        "pause profiling (put basic auth in a web config)");
  }
  server_ = std::make_unique<serve::HttpServer>(
      sopts, [store] { return store->Latest(); },
      [store](serve::Probe probe) { return store->Health(probe); },
      [this, live](std::string_view path, std::string_view query) {
        if (std::optional<serve::Resource> r = ProfilingResource(path)) return r;
        return live->Answer(path, query);
      },
      [this](std::string_view path) { return ProfilingAction(path); });
  return Status::Ok();
}

Daemon::FileId Daemon::Identify(const std::string& path) {
  FileId id;
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return id;
  id.size = static_cast<int64_t>(st.st_size);
  id.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  id.inode = static_cast<uint64_t>(st.st_ino);
  id.regular = S_ISREG(st.st_mode);
  return id;
}

void Daemon::Reload(std::string_view why) {
  if (reloader_ == nullptr) {
    log::Warn(
        "reload requested, but the collectors come from a ConfigMap (-m) or the config file's "
        "metrics.fields, read at start only; restart to reload",
        {{"source", collectors_name_}, {"trigger", std::string(why)}});
    return;
  }
  {
    util::MutexLock lock(&reload_mu_);
    forced_ = true;
    forced_by_ = std::string(why);
  }
  reloader_->RunSoon();
}

void Daemon::ReloadNow(bool force, std::string_view why) {
  // The file is looked at, read, parsed and planned under reload_io_mu_ only, which nothing else
  // takes: reload_mu_, which the collection thread takes for the reload counters (Publish), is
  // held only to read or write those small fields, never across the file system or the restart
  // handler (issue 36).
  util::MutexLock io(&reload_io_mu_);
  std::string trigger(why);
  {
    util::MutexLock lock(&reload_mu_);
    if (forced_) {  // Reload() asked (SIGHUP): the poll that runs for it logs its trigger
      force = true;
      trigger = forced_by_;
    }
    forced_ = false;
  }
  why = trigger;
  const std::string& path = options_.collectors;
  const FileId now = Identify(path);
  if (!force) {
    if (now == seen_) {
      changing_.reset();
      return;
    }
    // Changed: read it only once a poll finds it as the previous one did.
    if (!changing_ || !(*changing_ == now)) {
      changing_ = now;
      log::Debug("collectors file changed; read at the next poll if it stays so", {{"file", path}});
      return;
    }
  }
  changing_.reset();
  seen_ = now;  // a broken file is reported once, not at every poll
  if (!now.regular) {
    RejectReload(why, path + ": not a regular file (or missing); not read");
    return;
  }
  Result<std::vector<config::CollectorEntry>> rows =
      config::LoadCollectorsCsv(path, options_.collectors_unknown_fields);
  if (!rows.ok()) {
    RejectReload(why, rows.status().message());
    return;
  }
  // The config file's collections must still fit the new list, as at start (the plan checks).
  Result<std::shared_ptr<const plan::FieldPlan>> built =
      plan::FieldPlan::Build(std::move(rows).value(), path, CadencesOf(options_));
  if (!built.ok()) {
    RejectReload(why, built.status().message());
    return;
  }
  std::shared_ptr<const plan::FieldPlan> plan = std::move(built).value();
  if (plan->rows().empty()) {  // an empty or truncated file: never worth serving nothing
    RejectReload(why, path + ": no field to collect; a reload must keep at least one");
    return;
  }
  std::function<void()> restart;
  {
    util::MutexLock lock(&reload_mu_);
    last_reload_success_s_ = UnixNow();
    restart = restart_;
  }
  // The collector holds the plan in use: the one source of what is collected.
  if (plan->SameRows(*collector_->plan())) {
    log::Debug("collectors file unchanged", {{"file", path}, {"trigger", std::string(why)}});
    return;
  }
  const bool needs_restart = collector_->SetPlan(plan);
  log::Info("collectors file reloaded", {{"file", path},
                                         {"trigger", std::string(why)},
                                         {"fields", std::to_string(plan->rows().size())}});
  if (needs_restart) {
    // dcgm-exporter's reload rebuilds every collector, the Xid one included; ours starts the
    // Xid watcher with the daemon, so the daemon starts again (app::Run re-executes it).
    log::Warn(
        "the reloaded collectors list has Xid or health fields; they need the Xid watcher, which "
        "starts with the daemon",
        {{"file", path}, {"action", restart ? "re-executing" : "restart to collect them"}});
    if (restart) restart();  // off reload_mu_: collections go on meanwhile
  }
}

// The handler runs after reload_mu_ is released, and a replaced one is destroyed after it too:
// a handler is arbitrary code (it may reload, or stop the daemon), and must not run under a lock
// it may take (hardening round three: no callback or destructor under a lock).
void Daemon::SetRestartHandler(std::function<void()> restart) {
  std::function<void()> run;
  {
    util::MutexLock lock(&reload_mu_);
    restart_.swap(restart);
    if (restart_wanted_) run = restart_;
  }
  if (run) run();
}

void Daemon::RequestRestart() {
  std::function<void()> run;
  {
    util::MutexLock lock(&reload_mu_);
    restart_wanted_ = true;
    run = restart_;
  }
  if (run) run();
}

void Daemon::RejectReload(std::string_view why, const std::string& err) {
  {
    util::MutexLock lock(&reload_mu_);
    ++reload_failures_;
  }
  log::Error("collectors file rejected; the current fields stay in use",
             {{"file", options_.collectors}, {"trigger", std::string(why)}, {"err", err}});
}

void Daemon::AddReloadFamilies(render::SeriesModel* model) {
  uint64_t failures = 0;
  double last = 0;
  {
    util::MutexLock lock(&reload_mu_);
    failures = reload_failures_;
    last = last_reload_success_s_;
  }
  render::SeriesFamily& rejected =
      render::AddOwnFamily(model, render::OwnFamily("nvml_exporter_config_reload_failures_total"));
  rejected.points.push_back(
      render::SeriesPoint::Uint(model->AddLabelSet({}), failures, render::kToPrometheus));
  render::SeriesFamily& success = render::AddOwnFamily(
      model, render::OwnFamily("nvml_exporter_config_last_reload_success_timestamp_seconds"));
  success.points.push_back(render::SeriesPoint::Millis(
      model->AddLabelSet({}), static_cast<int64_t>(std::llround(last * 1000))));
}

Daemon::~Daemon() {
  Stop();
  // A collector left with stuck threads by StopUntil waits for them in its destructor.
}

Status Daemon::Start() {
  if (server_ == nullptr || state_ != State::kBuilt) {
    return Internal("Daemon::Start: only once, on a daemon built without --once");
  }
  state_ = State::kRunning;
  if (collectors_reloadable_) {
    reloader_ = std::make_unique<util::PeriodicWorker>(
        util::PeriodicWorker::Options{.name = "collectors reloader", .period = kCollectorsPoll},
        [this] { ReloadNow(false, "change"); });
    reloader_->Start();
  }
  sources_->Start();
  if (faults_) faults_->Start();
  collector_->Start([this](const std::shared_ptr<const model::Snapshot>& snap) {
    if (faults_) faults_->Offer(snap);  // a pointer swap: its thread writes to the API server
    Publish(*snap);
  });
  if (Status st = server_->Start(); !st.ok()) {
    Stop();
    return Fail(config::ExitCode::kUnavailable, st.message());
  }
  log::Info("serving",
            {{"address", options_.web_systemd_socket ? "systemd socket" : options_.address},
             {"port", std::to_string(port())},
             {"web_config", options_.web_config_file.empty() ? "none" : options_.web_config_file}});
  return Status::Ok();
}

void Daemon::Stop() { (void)StopUntil(std::chrono::steady_clock::time_point::max()); }

bool Daemon::StopUntil(std::chrono::steady_clock::time_point deadline) {
  if (state_ == State::kStopped) return collector_stopped_;
  state_ = State::kStopped;
  // Each step is named for app::Run's stop deadline (app/stop_deadline.h): a step that never
  // returns is logged by name when the process gives up on it.
  NoteStopStep("collectors reloader");
  if (reloader_) reloader_->Stop();  // never blocks long: it reads regular files only
  NoteStopStep("HTTP server");
  if (server_) server_->Stop();
  // Whatever the server's drain took, a read in progress and the Xid watcher's event wait get a
  // moment to end (kCollectorStopFloor): only a call still running after that is stuck.
  const auto floor = std::chrono::steady_clock::now() + kCollectorStopFloor;
  NoteStopStep("collector");
  collector_stopped_ = collector_ == nullptr || collector_->Stop(std::max(deadline, floor));
  NoteStopStep("EMF pipeline");
  if (emf_) {
    // What is left of the stop budget (at least kMinEmfDrain, for the last collection's documents):
    // a dead or stuck receiver must not take the stop past it (hardening round two, row 10).
    auto drain = std::chrono::milliseconds::max();
    if (deadline != std::chrono::steady_clock::time_point::max()) {
      drain = std::max<std::chrono::milliseconds>(
          kMinEmfDrain, std::chrono::duration_cast<std::chrono::milliseconds>(
                            deadline - std::chrono::steady_clock::now()));
    }
    emf_->Stop(drain);
  }
  NoteStopStep("node fault reporter");
  if (faults_) faults_->Stop();
  NoteStopStep("energy per pod state");
  if (energy_store_) energy_store_->Stop();  // writes the last collection's ledger
  NoteStopStep("attribution sources");
  if (sources_) sources_->Stop();
  NoteStopStep("daemon teardown");
  return collector_stopped_;
}

std::vector<std::string> Daemon::StuckCalls() const {
  return collector_ != nullptr ? collector_->StuckCalls() : std::vector<std::string>{};
}

std::string Daemon::RenderOnce() {
  std::shared_ptr<const model::Snapshot> snap = collector_->CollectOnce();
  snap = sources_->ResolveForOnce(std::move(snap), kOnceAttributionWait);
  std::string body;
  render::RenderPrometheus(*snap, ropts_, &body);
  return body;
}

uint16_t Daemon::port() const { return state_ == State::kRunning && server_ ? server_->port() : 0; }

void Daemon::Publish(const model::Snapshot& snap) {
  sources_->Observe(snap);  // the PIDs to resolve next
  // One series model per collection feeds both outputs. It points into snap and its plan, which
  // this call holds: a reload meanwhile only makes the next snapshot's plan.
  render::BuildSeries(snap, ropts_, &series_);
  if (energy_) {
    energy_->Observe(snap);
    if (energy_store_) {
      // Handed to the store's writer (a copy: the writer serializes it on its own thread); the
      // page shows the newest ledger already written, so that no value is scraped before it
      // would survive a SIGKILL (app/energy_store.h).
      energy_store_->Offer(std::make_shared<const render::PodEnergyLedger>(*energy_), snap.time);
      energy_store_->Servable()->AddFamily(ropts_.pods, &series_);
    } else {
      energy_->AddFamily(ropts_.pods, &series_);
    }
  }
  if (emf_) emf_->OnSeries(series_, snap);  // render here, send on the sinks' threads
  // Then our own families, Prometheus only, with the sinks' counters after this round's queueing.
  AddReloadFamilies(&series_);
  if (emf_) emf_->AddFamilies(&series_);
  if (faults_) AddNodeFaultFamilies(faults_->stats(), &series_);
  AddServerFamilies(server_->stats(), !options_.web_config_file.empty(), &series_);
  if (options_.enable_exporter_metrics) {
    // Read here, once per collection: a scrape only ever serves the page.
    if (Result<ProcessStats> p = ReadProcessStats(); p.ok()) {
      AddProcessFamilies(*p, &series_);
    } else if (!process_stats_warned_) {
      process_stats_warned_ = true;
      log::Warn(
          "--enable-exporter-metrics: cannot read the process's figures; no process_* "
          "metrics",
          {{"err", p.status().ToString()}});
    }
  }
  auto page = std::make_shared<serve::Page>();
  render::RenderPrometheus(series_, &page->body);
  page->gzip_body = gzip_.Compress(page->body);
  store_->Publish(std::move(page), CountGpus(snap));
  live_->OnSnapshot(snap);  // after the page: /metrics never waits on the live page's JSON
}

}  // namespace nvmlx::app
