// PodAttribution: constructs and owns the process/pod attribution sources of
// --kubernetes-process-metrics (the ProcessAttributor over --host-proc-root, the PodWatcher on the
// API server), and hands the collector and renderer what they need from them. app.cc holds one
// when the flag is on, and owns the attribution error counters that its sources increment (the
// same counters serve every attribution source, e.g. the kubelet's).
//
// Thread-safety: Latest(), Observe() and errors() may be called from any thread (they forward to
// thread-safe parts); Start/Stop/ResolveForOnce from the controlling thread.
#ifndef NVML_EXPORTER_APP_POD_ATTRIBUTION_H_
#define NVML_EXPORTER_APP_POD_ATTRIBUTION_H_

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "attribute/error_counters.h"
#include "attribute/pod_watcher.h"
#include "attribute/process_attributor.h"
#include "config/options.h"
#include "model/attribution.h"
#include "model/snapshot.h"
#include "render/pod_families.h"
#include "util/status.h"

namespace nvmlx::app {

class PodAttribution {
 public:
  // Null when --kubernetes-process-metrics is off, unless -k with --kubernetes-enable-pod-uid:
  // then only the PodWatcher runs (pod uids for the kubelet-attributed device series), and
  // process_metrics() is false. Without an API server (not in a cluster and no
  // --kubernetes-api-server) it warns once and attributes processes to pod uids only, as
  // dcgm-exporter goes on without pod metadata. A bad --kubernetes-api-server is an error.
  // `errors` must outlive the PodAttribution.
  static Result<std::unique_ptr<PodAttribution>> Create(const config::Options& options,
                                                        const attribute::EnvLookup& getenv,
                                                        model::SourceErrors* errors);
  ~PodAttribution();

  // For CollectorOptions::attribution: the latest part of each source (cheap).
  model::Attribution Latest() const;
  // After each collection: the PIDs to resolve next.
  void Observe(const model::Snapshot& snapshot);
  // The per-pod rendering options (errors not set: app.cc sets its counters).
  render::PodFamiliesOptions RenderOptions(const config::Options& options) const;

  // Whether the per-process sources run (--kubernetes-process-metrics).
  bool process_metrics() const { return processes_ != nullptr; }

  void Start();
  void Stop();
  // --once: resolves the snapshot's PIDs now and waits (up to `wait`) for the first pod list;
  // returns a copy of the snapshot with that attribution attached.
  std::shared_ptr<const model::Snapshot> ResolveForOnce(const model::Snapshot& snapshot,
                                                        std::chrono::milliseconds wait);

 private:
  PodAttribution() = default;
  std::unique_ptr<attribute::ProcessAttributor> processes_;  // null: metadata only
  std::unique_ptr<attribute::PodWatcher> pods_;              // null without an API server
};

}  // namespace nvmlx::app

#endif  // NVML_EXPORTER_APP_POD_ATTRIBUTION_H_
