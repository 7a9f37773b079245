// AttributionSources: the one owner of every attribution source the flags enable, and of the
// error counters they share (nvml_exporter_attribution_errors_total):
//  - the ProcessAttributor (--kubernetes-process-metrics, or -k with --kubernetes-virtual-gpus
//    as dcgm-exporter 4.8 reads per-process data there): GPU processes -> pod uid and container
//    through <host-proc-root>/<pid>/cgroup;
//  - the PodWatcher (API server pod metadata): with the ProcessAttributor, or with -k and
//    --kubernetes-enable-pod-uid (pod uids for the kubelet-attributed device series);
//  - the PodResourcesRefresher (-k): which pods hold which device, from the kubelet;
//  - the ResourceSliceRefresher (-k --kubernetes-enable-dra, with an API server): the DRA GPU
//    driver's devices, so that the kubelet refresher resolves DRA claims to devices;
//  - the HpcJobRefresher (--hpc-job-mapping-dir): which HPC jobs use which device;
//  - the ContainerLabelRefresher (--container-labels without -k): which running containers of a
//    Docker-compatible engine use which device;
//  - for --emf-schema container-insights (Options::EmfContainerInsights()): the PodWatcher even
//    without the flags above (the pods' GPU requests, limits and phases), the NodeRefresher
//    (this node's instance id, instance type and GPU capacity; needs NODE_NAME) and, with -k,
//    the kubelet's GetAllocatableResources.
// Latest() bundles the latest part of each into one Attribution for the collector, which
// attaches it to every snapshot.
//
// Life cycle, in this order, because the kubelet and HPC sources key their data by device while
// the collector, which reads Latest(), is the one that enumerates the devices:
//   1. Create(): builds the process and pod-metadata sources from the options, and with -k loads
//      the kubelet plugin (a bad Kubernetes API configuration, or a missing plugin, fails
//      here). Latest() is usable from now on.
//   2. AttachDevices(): once the collector knows its devices, builds the kubelet, HPC and
//      engine-container refreshers for them and refreshes each once, so that the first page has
//      their labels. Until then Latest() has null kubelet, HPC and container parts.
//   3. Start(): every source's background thread. Stop() (also done by the destructor) stops
//      them; the sources themselves live until destruction.
//
// Thread-safety: Latest(), Observe() and errors() may be called from any thread at any time
// between Create() and destruction (the collector's fast loop calls Latest() and, through the
// publish callback, Observe()). Create, AttachDevices, Start, Stop and ResolveForOnce come from
// one controlling thread.
#ifndef NVML_EXPORTER_APP_ATTRIBUTION_SOURCES_H_
#define NVML_EXPORTER_APP_ATTRIBUTION_SOURCES_H_

#include <chrono>
#include <memory>
#include <vector>

#include "attribute/container_runtime.h"
#include "attribute/hpc_jobs.h"
#include "attribute/node_refresher.h"
#include "attribute/pod_resources_refresher.h"
#include "attribute/pod_watcher.h"
#include "attribute/process_attributor.h"
#include "attribute/resource_slices.h"
#include "config/options.h"
#include "model/attribution.h"
#include "model/snapshot.h"
#include "model/source_errors.h"
#include "render/pod_families.h"
#include "util/mutex.h"
#include "util/status.h"
#include "util/thread_annotations.h"

namespace nvmlx::app {

class AttributionSources {
 public:
  // Without an API server (not in a cluster and no --kubernetes-api-server) the pod metadata
  // source is left out with one warning, and per-process series carry pod uids only, as
  // dcgm-exporter goes on without pod metadata. A bad --kubernetes-api-server (or its token or
  // CA file) is an error. `options` is copied.
  static Result<std::unique_ptr<AttributionSources>> Create(const config::Options& options,
                                                            const attribute::EnvLookup& getenv);
  ~AttributionSources();
  AttributionSources(const AttributionSources&) = delete;
  AttributionSources& operator=(const AttributionSources&) = delete;

  // Whether any source is enabled (else Latest() is always empty and the collector need not
  // ask).
  bool enabled() const { return enabled_; }
  // Whether the per-process sources run (--kubernetes-process-metrics, or -k with
  // --kubernetes-virtual-gpus): the collector must then read each GPU's processes.
  bool process_metrics() const { return processes_ != nullptr; }

  // Step 2: builds the kubelet (-k), HPC (--hpc-job-mapping-dir) and engine-container
  // (--container-labels) refreshers for `identities` and refreshes each once on the calling
  // thread (the kubelet's bounded by its deadline, the engine's by 2 s). Call once, before
  // Start().
  void AttachDevices(const std::vector<model::DeviceIdentity>& identities);

  void Start();
  void Stop();

  // The latest part of every source (cheap: a few shared_ptr copies; null parts for disabled
  // sources, sources that never succeeded, and the kubelet and HPC ones before AttachDevices).
  model::Attribution Latest() const;
  // After each collection: the PIDs to resolve next.
  void Observe(const model::Snapshot& snapshot);

  // --once: resolves the snapshot's PIDs now, waits (up to `wait`) for the first pod list and
  // GETs the Node once (Container Insights); returns the snapshot with that attribution attached
  // (the same snapshot when neither the process nor the pod-metadata source runs).
  std::shared_ptr<const model::Snapshot> ResolveForOnce(
      std::shared_ptr<const model::Snapshot> snapshot, std::chrono::milliseconds wait);

  // The per-pod rendering options (their `errors` not set: the renderer gets errors()).
  // Default-constructed (nothing rendered) when neither the process nor the pod-metadata source
  // is configured.
  render::PodFamiliesOptions PodRenderOptions() const;
  // The failure counters of every source, for the renderer.
  const std::shared_ptr<model::SourceErrors>& errors() const { return errors_; }

 private:
  explicit AttributionSources(const config::Options& options);
  // Whether `options` need per-process data and its cgroup attribution.
  static bool PerProcessWanted(const config::Options& options);
  // Sets node_ for Container Insights (a warning instead without NODE_NAME).
  void CreateNodeRefresher(const attribute::KubeApiConfig& api);

  // The refreshers AttachDevices() set (null before, or when off), read under the lock.
  struct Attached {
    attribute::PodResourcesRefresher* kubelet;
    attribute::HpcJobRefresher* hpc_jobs;
    attribute::ContainerLabelRefresher* containers;
  };
  Attached AttachedRefreshers() const NVMLX_EXCLUDES(mu_);

  const config::Options options_;
  const std::chrono::milliseconds period_;  // the kubelet's, HPC and container refreshers'
  const bool enabled_;
  const bool per_process_;  // PerProcessWanted(options_)
  const std::shared_ptr<model::SourceErrors> errors_;
  // Set by Create(), never changed after.
  bool pod_sources_ = false;  // per_process_, or -k with pod uids or pod labels
  std::unique_ptr<attribute::ProcessAttributor> processes_;        // null: metadata only, or off
  std::unique_ptr<attribute::PodWatcher> pods_;                    // null without an API server
  std::unique_ptr<attribute::ResourceSliceRefresher> dra_slices_;  // null: DRA off, or no API
  std::unique_ptr<attribute::NodeRefresher> node_;  // null: not Container Insights, no API/name
  // -k: the plugin's kubelet client, until AttachDevices() moves it into the refresher (both on
  // the start-up thread, before Start()).
  std::unique_ptr<attribute::PodResourcesLister> kubelet_client_;

  // Set once by AttachDevices() while Latest() may already run on another thread; destroyed only
  // with this object, so a pointer read under the lock stays valid after it is released.
  mutable util::Mutex mu_;
  std::unique_ptr<attribute::PodResourcesRefresher> kubelet_ NVMLX_GUARDED_BY(mu_);
  std::unique_ptr<attribute::HpcJobRefresher> hpc_jobs_ NVMLX_GUARDED_BY(mu_);
  std::unique_ptr<attribute::ContainerLabelRefresher> containers_ NVMLX_GUARDED_BY(mu_);
};

}  // namespace nvmlx::app

#endif  // NVML_EXPORTER_APP_ATTRIBUTION_SOURCES_H_
