// Daemon: the running exporter, and the owner of every part of it:
//
//   NVML library -> AttributionSources -> Collector -> (publish) -> EmfPipeline + PageStore
//                                                                     -> HttpServer
//
// Create() builds the parts in dependency order, each from the options and what the parts
// before it know:
//   1. the collectors CSV, as the start-up field plan (plan/field_plan.h; rows nothing collects
//      are dropped there, each with its warning);
//   2. the NVML library;
//   3. the AttributionSources (process and pod-metadata sources), before the collector, whose
//      attribution callback reads them: the object that callback reads exists, fully built,
//      before the collector does;
//   4. the Collector (it enumerates the GPUs), then the sources' kubelet and HPC refreshers for
//      those GPUs (AttributionSources::AttachDevices);
//   5. unless --once: the EMF pipeline (its sinks' threads run from here on), the node fault
//      reporter (--kubernetes-node-conditions), the energy-per-pod ledger and its EnergyStore
//      (--kubernetes-process-metrics), the PageStore, the LivePage and the HttpServer (not yet
//      listening).
// Start() starts what runs on its own threads, again in dependency order: the collectors
// reloader, the attribution sources (before the collector that reads them), the node fault
// reporter, the collector (whose publish callback feeds the fault reporter, the EMF pipeline and
// the page store, all ready since Create), and the server last (it serves the page store).
// Stop() goes the other way: reloader, server (no new scrapes), collector (no new snapshots),
// EMF pipeline (its sinks drain what was queued), fault reporter, EnergyStore (it writes the
// last ledger), attribution sources. The parts are destroyed in reverse order of their
// members; the NVML library goes last.
//
// Errors: a failing step reports itself where it fails, with the one line an operator sees on
// stderr ("nvml-exporter: <why>", whatever the log format) and, for some steps, a log entry; what
// was built or started before it is stopped and destroyed. The returned Status's code gives the
// exit code through config::ExitCodeFor (INVALID_ARGUMENT: kUsage, bad flags or files; any other
// code: kUnavailable, NVML, a selected GPU or the listen address unusable), its message is that
// stderr line.
//
// Thread-safety: Create, Start, Stop, RenderOnce and the destructor from one controlling thread.
// port() and state() from that thread too. Internally the publish callback runs on the
// collector's thread and the page store is read by the server's threads (PageStore is
// thread-safe). The render options are fixed once Create returns; the fields come with each
// snapshot's plan, so a reload (on the reloader thread) never touches what a render in flight
// reads.
#ifndef NVML_EXPORTER_APP_DAEMON_H_
#define NVML_EXPORTER_APP_DAEMON_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "app/attribution_sources.h"
#include "app/emf_pipeline.h"
#include "app/energy_store.h"
#include "app/live_page.h"
#include "app/page_store.h"
#include "attribute/node_fault_reporter.h"
#include "collect/collector.h"
#include "config/options.h"
#include "cupti/cupti.h"
#include "model/snapshot.h"
#include "nvml/nvml.h"
#include "plan/field_plan.h"
#include "render/gzip.h"
#include "render/pod_energy.h"
#include "render/prometheus.h"
#include "serve/http_server.h"
#include "util/mutex.h"
#include "util/periodic_worker.h"
#include "util/status.h"
#include "util/thread_annotations.h"

namespace nvmlx::app {

class Daemon {
 public:
  // What the daemon takes from its process besides the options (a test passes its own).
  struct Environment {
    // The NVML library to dlopen: --nvml-library, or the simulator's path under --fake-gpus
    // (app::Run resolves it and sets the simulator's scenario variable).
    std::string nvml_library;
    // CUPTI for PM sampling: --cupti-library, or the simulated one beside the simulated NVML.
    std::string cupti_library;
    // The process environment (the in-cluster Kubernetes API configuration).
    config::GetEnvFn getenv;
  };

  enum class State { kBuilt, kRunning, kStopped };

  // Builds every part (steps 1-5 above). With options.once, only what --once needs: no EMF
  // pipeline, page store or server (an --emf-output is then ignored with a warning); call
  // RenderOnce() instead of Start().
  static Result<std::unique_ptr<Daemon>> Create(const config::Options& options, Environment env);
  ~Daemon();  // Stop()
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Starts the sources, the collector and the server (in that order) and returns once the server
  // listens. On failure (the address cannot be bound) everything started is stopped again
  // (state() is kStopped). Call once, on a daemon built without --once.
  Status Start();
  // Stops the server, the collector, the EMF pipeline and the sources, in that order. Returns
  // when their threads have ended; idempotent.
  void Stop();
  // As Stop, but the collector waits for NVML calls in progress only until `deadline`. True when
  // every thread has ended; false when some are stuck inside NVML (StuckCalls() says where): the
  // Daemon must then not be destroyed (its destructor would wait for them); app::Run leaves the
  // process with _exit instead (docs/faults.md).
  bool StopUntil(std::chrono::steady_clock::time_point deadline);
  // Asks for a reload of the collectors file (SIGHUP): done on the reloader thread, so the
  // caller (the signal-waiting main thread) never blocks on the file or NVML. Running only.
  void Reload(std::string_view why);
  // Pauses or resumes PM sampling on every GPU (SIGUSR1 / SIGUSR2); logged. Thread-safe.
  void SetProfilingPaused(bool paused);
  // /api/v1/profiling (GET: the state) and its /pause and /resume (POST, with
  // --profiling-pause-endpoint): the HTTP form of SIGUSR1 / SIGUSR2. nullopt: not such a path.
  // Thread-safe (the server's io threads call them).
  std::optional<serve::Resource> ProfilingResource(std::string_view path) const;
  std::optional<serve::Resource> ProfilingAction(std::string_view path);
  // Reloads the collectors file now, on the calling thread, when `force` or when the file
  // changed since the last read (size, mtime, inode) and has stayed the same since the previous
  // call (a file still being written waits for the next poll): a file that parses into at least
  // one field becomes the next field plan (Collector::SetPlan), which the next collection reads
  // and renders under; one that does not, or that holds no field, is rejected with its
  // `file:line` error, logged and counted, and the current list stays. Not a regular file
  // (a FIFO, a directory): rejected without opening it. The reloader thread calls it every
  // kCollectorsPoll and on Reload(); a test may call it directly. Not with a ConfigMap source
  // (-m): that is read at start only.
  // The file system is touched under reload_io_mu_ only: a collection (Publish, which reads the
  // reload counters under reload_mu_) never waits for a reload's read, parse or restart handler.
  void ReloadNow(bool force, std::string_view why) NVMLX_EXCLUDES(reload_io_mu_, reload_mu_);
  // What a reload that cannot be applied in place calls (a list that needs the Xid watcher):
  // app::Run's re-execution of the daemon. Unset: the reload logs that a restart is needed.
  // Thread-safe; called on the reloader thread.
  void SetRestartHandler(std::function<void()> restart) NVMLX_EXCLUDES(reload_mu_);
  // A GPU whose set-up outlasted the start-up finished it (Collector's on_late_gpu): it needs a
  // new start. Calls the restart handler, or, before one is set, when it is set. Thread-safe.
  void RequestRestart() NVMLX_EXCLUDES(reload_mu_);

  // How often the reloader looks at the collectors file.
  static constexpr std::chrono::seconds kCollectorsPoll{2};
  // What StopUntil left stuck (Collector::StuckCalls), one line each.
  std::vector<std::string> StuckCalls() const;

  // --once: one full collection on the calling thread, with its attribution resolved, rendered
  // as the Prometheus page. Not after Start().
  std::string RenderOnce();

  // The port the server listens on (the bound one when options.address asks for port 0); 0 when
  // not running.
  uint16_t port() const;
  State state() const { return state_; }

 private:
  explicit Daemon(const config::Options& options) : options_(options) {}
  Status Build(const Environment& env);                                // Create's steps
  Status BuildCollector(std::shared_ptr<const plan::FieldPlan> plan);  // steps 3 and 4
  // --kubernetes-node-conditions: the reporter (usage errors without NODE_NAME or an API server).
  Status BuildNodeFaults(const Environment& env);
  // Energy per pod (with --kubernetes-process-metrics), restored from --state-dir.
  void BuildEnergy();
  Status BuildOutputs(const Environment& env);  // step 5
  void BuildRenderOptions(const std::string& driver);
  // The collector's publish callback (collector thread): render once (the series model under the
  // snapshot's own plan), feed the EMF pipeline, add the exporter's own families, swap the page
  // in for the server.
  void Publish(const model::Snapshot& snap) NVMLX_EXCLUDES(reload_mu_);
  // Counts and logs a rejected reload (`err` names file and line).
  void RejectReload(std::string_view why, const std::string& err) NVMLX_EXCLUDES(reload_mu_);
  // The reload counters, as our own families of the page.
  void AddReloadFamilies(render::SeriesModel* model) NVMLX_EXCLUDES(reload_mu_);

  const config::Options options_;
  std::unique_ptr<nvml::Library> nvml_;
  // CUPTI for PM sampling (docs/pm-sampling.md), loaded on the collector's first need; tried once.
  const cupti::Library* LoadCupti() NVMLX_EXCLUDES(cupti_mu_);
  std::string cupti_path_;
  util::Mutex cupti_mu_;
  bool cupti_tried_ NVMLX_GUARDED_BY(cupti_mu_) = false;
  std::unique_ptr<cupti::Library> cupti_ NVMLX_GUARDED_BY(cupti_mu_);
  std::unique_ptr<AttributionSources> sources_;
  std::unique_ptr<collect::Collector> collector_;
  config::GetEnvFn getenv_;
  std::string collectors_name_;         // the collectors source, for messages
  bool collectors_reloadable_ = false;  // a file: polled and reread (not -m, not metrics.fields)
  // Rendering options: written by Create (BuildRenderOptions) before any thread that reads them
  // starts, constant afterwards.
  render::PrometheusOptions ropts_;
  // The collector thread's (Publish), reused across collections. Its names and labels point into
  // the snapshot being published (and its plan) and into ropts_, both alive while Publish runs.
  render::SeriesModel series_;
  // Energy per pod (render/pod_energy.h), with --kubernetes-process-metrics; the publish
  // step's own: the live ledger, which each collection observes.
  std::optional<render::PodEnergyLedger> energy_;
  // --state-dir's pod-energy.json, written after every collection on the store's own thread;
  // the page shows the ledger it last wrote (app/energy_store.h says why). Null without
  // --state-dir: the page shows the live ledger.
  std::unique_ptr<EnergyStore> energy_store_;
  render::GzipCompressor gzip_;        // the collector thread's (Publish), one zlib stream
  bool process_stats_warned_ = false;  // the collector thread's (Publish)
  std::unique_ptr<EmfPipeline> emf_;   // null without --emf-output
  // --kubernetes-node-conditions: GPU faults to the Node; null without it (and with --once).
  std::unique_ptr<attribute::NodeFaultReporter> faults_;
  std::unique_ptr<PageStore> store_;           // null with --once
  std::unique_ptr<LivePage> live_;             // null with --once
  std::unique_ptr<serve::HttpServer> server_;  // null with --once
  State state_ = State::kBuilt;
  bool collector_stopped_ = true;  // what the first StopUntil found

  // Reload state. reload_io_mu_: what only ReloadNow uses (the reloader thread, or a test), held
  // across its file system calls; reload_mu_: what other threads read or write too (Reload()
  // from the signal thread, the counters from the collection thread, the restart handler), held
  // only to copy or update those fields. Taken in that order.
  util::Mutex reload_io_mu_ NVMLX_ACQUIRED_BEFORE(reload_mu_);
  util::Mutex reload_mu_;
  struct FileId {
    int64_t size = -1, mtime_ns = -1;
    uint64_t inode = 0;
    bool regular = false;
    bool operator==(const FileId&) const = default;
  };
  static FileId Identify(const std::string& path);
  bool forced_ NVMLX_GUARDED_BY(reload_mu_) = false;    // Reload() asked: reload even if unchanged
  std::string forced_by_ NVMLX_GUARDED_BY(reload_mu_);  // its trigger ("SIGHUP"), for the log
  FileId seen_ NVMLX_GUARDED_BY(reload_io_mu_);         // the file as last read (or rejected)
  // A change seen at the last poll, applied once the next poll finds the file the same: a file
  // being written (truncated, then filled) is never read half-way.
  std::optional<FileId> changing_ NVMLX_GUARDED_BY(reload_io_mu_);
  std::function<void()> restart_ NVMLX_GUARDED_BY(reload_mu_);  // SetRestartHandler
  bool restart_wanted_ NVMLX_GUARDED_BY(reload_mu_) = false;    // RequestRestart before a handler
  uint64_t reload_failures_ NVMLX_GUARDED_BY(reload_mu_) = 0;
  double last_reload_success_s_ NVMLX_GUARDED_BY(reload_mu_) = 0;  // Unix time; start-up too
  std::unique_ptr<util::PeriodicWorker> reloader_;                 // null with -m or --once
};

}  // namespace nvmlx::app

#endif  // NVML_EXPORTER_APP_DAEMON_H_
