#include "app/app.h"

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "app/emf_pipeline.h"
#include "app/page_store.h"
#include "app/pod_attribution.h"
#include "app/version.h"
#include "attribute/hpc_jobs.h"
#include "attribute/pod_resources_refresher.h"
#include "attribute/source_errors.h"
#include "collect/collector.h"
#include "config/collectors_csv.h"
#include "config/options.h"
#include "nvml/nvml.h"
#include "render/gzip.h"
#include "render/prometheus.h"
#include "serve/http_server.h"
#include "util/log.h"

namespace nvmlx::app {
namespace {

std::optional<std::string> GetEnv(std::string_view name) {
  const char* v = std::getenv(std::string(name).c_str());
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

// The simulated libnvidia-ml.so.1: next to the binary in a bundle or install, else in the build
// tree this binary came from.
std::string FindSimulator(const char* argv0) {
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) exe = argv0;
  const std::filesystem::path dir = exe.parent_path();
  for (const auto& candidate :
       {dir / "simgpu" / "libnvidia-ml.so.1", dir / ".." / "lib" / "simgpu" / "libnvidia-ml.so.1",
        std::filesystem::path(NVMLX_SIMGPU_BUILD_PATH)}) {
    if (std::filesystem::exists(candidate, ec)) return candidate.lexically_normal().string();
  }
  return NVMLX_SIMGPU_BUILD_PATH;
}

std::string Hostname(const config::Options& o) {
  if (o.no_hostname) return "";
  if (!o.node_name.empty()) return o.node_name;
  char buf[HOST_NAME_MAX + 1] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "";
  return buf;
}

// Rows whose values come from stages that later issues build (or that have no NVML source):
// say so once, like DCGM's "metric not enabled", instead of serving a family that never has
// series.
std::vector<config::CollectorEntry> DropUncollected(std::vector<config::CollectorEntry> rows,
                                                    const std::string& source) {
  std::vector<config::CollectorEntry> kept;
  for (auto& row : rows) {
    const fields::FieldDef* f = row.field;
    const char* why = nullptr;
    switch (f->source) {
      case fields::Source::kProfiling:
        // GPM-backed rows are kept; the collector warns per GPU where GPM is unavailable.
        if (f->gpm_metric_id == 0) why = "no NVML GPM metric for this profiling field";
        break;
      case fields::Source::kExporter:
        // DCGM_EXP_XID_ERRORS_COUNT comes from the collector's XidWatcher,
        // DCGM_EXP_CLOCK_EVENTS_COUNT from its clock-event windows.
        if (f->id != 9001 && f->id != 9002) {
          why = "exporter-computed DCGM_EXP_* counters come in a later release";
        }
        break;
      case fields::Source::kEvent:
        // DCGM_FI_DEV_XID_ERRORS comes from the collector's XidWatcher.
        if (f->id != 230) why = "event-driven fields come in a later release";
        break;
      default:
        if (row.type != config::MetricType::kLabel && f->read == nullptr && f->nvml_field_id == 0) {
          why = "no NVML source for this field";
        }
        break;
    }
    if (why != nullptr) {
      log::Warn("skipping collectors row: metric not enabled", {{"file", source},
                                                                {"line", std::to_string(row.line)},
                                                                {"field", row.name},
                                                                {"reason", why}});
      continue;
    }
    kept.push_back(std::move(row));
  }
  return kept;
}

// GPUs only: a MIG instance is up exactly when its GPU is, and /health speaks of GPUs.
int CountGpus(const collect::Snapshot& s) {
  int n = 0;
  for (const auto& d : s.devices) n += (d.identity != nullptr && !d.identity->mig) ? 1 : 0;
  return n;
}

int CountUp(const collect::Snapshot& s) {
  int up = 0;
  for (const auto& d : s.devices) up += (d.up && d.identity != nullptr && !d.identity->mig) ? 1 : 0;
  return up;
}

}  // namespace

int Run(int argc, char** argv) {
  Result<config::Options> parsed = config::ParseOptions(argc, argv, GetEnv);
  if (!parsed.ok()) {
    std::fprintf(stderr, "nvml-exporter: %s\n", parsed.status().message().c_str());
    return 2;
  }
  const config::Options& opts = *parsed;
  if (opts.help_or_version_requested) {
    std::fputs(opts.help_text.c_str(), stdout);
    return 0;
  }
  log::Init(opts.log_format == config::LogFormat::kJson ? log::Format::kJson : log::Format::kText,
            opts.debug);

  // Only our sigwait() below sees SIGINT/SIGTERM: every thread started later inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  Result<std::vector<config::CollectorEntry>> rows = config::LoadCollectorsCsv(opts.collectors);
  if (!rows.ok()) {
    std::fprintf(stderr, "nvml-exporter: %s\n", rows.status().message().c_str());
    log::Error("cannot load collectors file", {{"err", rows.status().message()}});
    return 2;
  }
  std::string library = opts.nvml_library;
  if (opts.fake_gpus) {
    library = FindSimulator(argv[0]);
    if (!opts.fake_gpus_scenario.empty()) {
      setenv("NVMLX_SIMGPU_SCENARIO", opts.fake_gpus_scenario.c_str(), 1);
    }
  }
  Result<std::unique_ptr<nvml::Library>> lib = nvml::Library::Load(library);
  if (!lib.ok()) {
    std::fprintf(stderr, "nvml-exporter: %s\n", lib.status().ToString().c_str());
    return 1;
  }
  const nvml::Library& nvml = **lib;
  // After NVML: a host without a driver gets exactly one line (the one above), not warnings.
  std::vector<config::CollectorEntry> entries =
      DropUncollected(std::move(rows).value(), opts.collectors);
  Result<std::string> driver = nvml.DriverVersion();
  log::Info("NVML loaded",
            {{"library", nvml.resolved_path()},
             {"simulated", opts.fake_gpus ? "true" : "false"},
             {"scenario", !opts.fake_gpus                   ? "none"
                          : opts.fake_gpus_scenario.empty() ? "built-in"
                                                            : opts.fake_gpus_scenario},
             {"driver", driver.ok() ? *driver : driver.status().ToString()}});
  if (auto missing = nvml.MissingSymbols(); !missing.empty()) {
    std::string names;
    for (const auto& m : missing) names += (names.empty() ? "" : ",") + m;
    log::Debug("NVML symbols absent in this driver; their fields are disabled",
               {{"symbols", names}});
  }

  // Failures of every attribution source (nvml_exporter_attribution_errors_total), and
  // --kubernetes-process-metrics: per-process data and its attribution to pods (null when off).
  auto attribution_errors = std::make_shared<attribute::SourceErrors>();
  Result<std::unique_ptr<PodAttribution>> pods =
      PodAttribution::Create(opts, GetEnv, attribution_errors.get());
  if (!pods.ok()) {
    std::fprintf(stderr, "nvml-exporter: %s\n", pods.status().message().c_str());
    return 2;
  }
  PodAttribution* attribution = pods->get();

  collect::CollectorOptions copts;
  copts.interval = std::chrono::milliseconds(opts.collect_interval_ms);
  copts.entries = entries;
  copts.devices = opts.devices;
  copts.replace_blanks_in_model_name = opts.replace_blanks_in_model_name;
  copts.xid_window = std::chrono::milliseconds(opts.xid_count_window_ms);
  copts.clock_events_window = std::chrono::milliseconds(opts.clock_events_count_window_ms);
  // Attribution sources (the kubelet and HPC refreshers are created below, once the collector
  // knows the devices; they outlive it, being declared first). The collector copies their latest
  // parts into each snapshot.
  std::unique_ptr<attribute::PodResourcesRefresher> kubelet;
  std::unique_ptr<attribute::HpcJobRefresher> hpc_jobs;
  copts.process_metrics = attribution != nullptr && attribution->process_metrics();
  if (opts.kubernetes || !opts.hpc_job_mapping_dir.empty() || attribution != nullptr) {
    copts.attribution = [&kubelet, &hpc_jobs, attribution] {
      attribute::Attribution a;
      if (attribution != nullptr) a = attribution->Latest();
      if (kubelet) a.devices = kubelet->Latest();
      if (hpc_jobs) a.hpc = hpc_jobs->Latest();
      return a;
    };
  }
  Result<std::unique_ptr<collect::Collector>> collector =
      collect::Collector::Create(nvml, std::move(copts));
  if (!collector.ok()) {
    std::fprintf(stderr, "nvml-exporter: %s\n", collector.status().ToString().c_str());
    return 1;
  }
  size_t gpus = 0;
  for (const auto& id : (*collector)->identities()) gpus += id.mig ? 0 : 1;
  log::Info("collecting",
            {{"gpus", std::to_string(gpus)},
             {"mig_instances", std::to_string((*collector)->identities().size() - gpus)},
             {"interval_ms", std::to_string(opts.collect_interval_ms)},
             {"fields", std::to_string(entries.size())}});

  // Refreshed on their own threads every collect interval (at least 1 s), never in a scrape.
  const std::chrono::milliseconds attribution_period = std::max<std::chrono::milliseconds>(
      std::chrono::milliseconds(opts.collect_interval_ms), std::chrono::seconds(1));
  if (opts.kubernetes) {
    attribute::MatchOptions mopts;
    mopts.id_type = opts.kubernetes_gpu_id_type == config::KubernetesGpuIdType::kDeviceName
                        ? attribute::GpuIdType::kDeviceName
                        : attribute::GpuIdType::kUid;
    mopts.extra_resource_names = opts.nvidia_resource_names;
    mopts.virtual_gpus = opts.kubernetes_virtual_gpus;
    attribute::KubeletClientOptions kopts;
    kopts.socket_path = opts.pod_resources_socket;
    kopts.deadline = attribute::KubeletDeadlineFor(attribution_period);
    kubelet = std::make_unique<attribute::PodResourcesRefresher>(
        kopts, attribute::PodMatcher((*collector)->identities(), std::move(mopts)),
        attribution_period, attribution_errors);
    log::Info("kubernetes pod attribution on",
              {{"socket", kopts.socket_path},
               {"refresh_ms", std::to_string(attribution_period.count())},
               {"deadline_ms", std::to_string(kopts.deadline.count())},
               {"virtual_gpus", opts.kubernetes_virtual_gpus ? "true" : "false"}});
    kubelet->RefreshOnce();  // bounded by the deadline; the first page gets pod labels
  }
  if (!opts.hpc_job_mapping_dir.empty()) {
    hpc_jobs = std::make_unique<attribute::HpcJobRefresher>(opts.hpc_job_mapping_dir,
                                                            (*collector)->identities(),
                                                            attribution_period, attribution_errors);
    hpc_jobs->RefreshOnce();
  }

  render::PrometheusOptions ropts;
  ropts.entries = entries;
  ropts.hostname = Hostname(opts);
  ropts.use_old_namespace = opts.use_old_namespace;
  ropts.device_pod_uid = opts.kubernetes && opts.kubernetes_enable_pod_uid;
  ropts.build = {NVMLX_VERSION, NVMLX_REVISION, nvml.resolved_path(), driver.ok() ? *driver : ""};
  ropts.attribution_errors = attribution_errors;  // rendered once a source has registered
  if (attribution != nullptr) ropts.pods = attribution->RenderOptions(opts);

  if (opts.once) {
    if (!opts.emf.outputs.empty()) {
      log::Warn("--once prints the Prometheus page only; --emf-output is ignored");
    }
    std::shared_ptr<const collect::Snapshot> snap = (*collector)->CollectOnce();
    if (attribution != nullptr) snap = attribution->ResolveForOnce(*snap, std::chrono::seconds(5));
    std::string body;
    render::RenderPrometheus(*snap, ropts, &body);
    std::fwrite(body.data(), 1, body.size(), stdout);
    // Flush before the teardown (the Xid watcher's thread may take up to its wait timeout to
    // stop): a reader such as `| grep -q` must get the whole page before it goes away.
    std::fflush(stdout);
    return 0;
  }

  std::unique_ptr<EmfPipeline> emf;
  if (!opts.emf.outputs.empty()) {
    Result<std::unique_ptr<EmfPipeline>> p = EmfPipeline::Create(opts, entries, ropts.hostname);
    if (!p.ok()) {
      std::fprintf(stderr, "nvml-exporter: %s\n", p.status().message().c_str());
      log::Error("cannot start EMF output", {{"err", p.status().message()}});
      return 2;
    }
    emf = std::move(*p);
  }

  PageStore store(std::chrono::milliseconds(opts.collect_interval_ms));
  serve::ServerOptions sopts;
  sopts.address = opts.address;
  sopts.read_timeout = opts.web_read_timeout;
  sopts.write_timeout = opts.web_write_timeout;
  // Keep idle connections long enough for Prometheus to reuse them across scrapes (15 s to 1 min
  // intervals); Go's default (idle = read timeout, 10 s) forces a new connection every scrape.
  sopts.idle_timeout =
      std::max<std::chrono::milliseconds>(opts.web_read_timeout, std::chrono::seconds(120));
  serve::HttpServer server(
      sopts, [&store] { return store.Latest(); }, [&store] { return store.Health(); });

  if (kubelet) kubelet->Start();
  if (hpc_jobs) hpc_jobs->Start();
  if (attribution != nullptr) attribution->Start();
  render::SeriesModel model;  // the collector thread's, reused across collections
  (*collector)
      ->Start([&store, &ropts, &emf, &model,
               attribution](const std::shared_ptr<const collect::Snapshot>& snap) {
        if (attribution != nullptr) attribution->Observe(*snap);  // the PIDs to resolve next
        // One series model per collection feeds both outputs (it points into *snap).
        render::BuildSeries(*snap, ropts, &model);
        auto page = std::make_shared<serve::Page>();
        render::RenderPrometheus(model, &page->body);
        if (emf) {  // render here, send on the sinks' threads; then its counters for /metrics
          emf->OnSeries(model, snap->time);
          emf->AppendMetrics(&page->body);
        }
        page->gzip_body = render::GzipCompress(page->body);
        store.Publish(std::move(page), CountGpus(*snap), CountUp(*snap));
      });
  if (Status st = server.Start(); !st.ok()) {
    std::fprintf(stderr, "nvml-exporter: %s\n", st.message().c_str());
    log::Error("cannot start HTTP server", {{"err", st.message()}});
    (*collector)->Stop();
    if (emf) emf->Stop();
    return 1;
  }
  log::Info("serving", {{"address", opts.address}, {"port", std::to_string(server.port())}});

  int sig = 0;
  sigwait(&signals, &sig);
  log::Info("shutting down", {{"signal", sig == SIGINT ? "SIGINT" : "SIGTERM"}});
  server.Stop();
  (*collector)->Stop();
  if (emf) emf->Stop();
  if (kubelet) kubelet->Stop();
  if (hpc_jobs) hpc_jobs->Stop();
  if (attribution != nullptr) attribution->Stop();
  return 0;
}

}  // namespace nvmlx::app
