#include "app/attribution_sources.h"

#include <algorithm>
#include <string>
#include <thread>
#include <utility>

#include "attribute/kubelet_plugin.h"
#include "util/log.h"

namespace nvmlx::app {

AttributionSources::AttributionSources(const config::Options& o)
    : options_(o),
      // Refreshed on their own threads every collect interval (at least 1 s), never in a scrape.
      period_(std::max<std::chrono::milliseconds>(std::chrono::milliseconds(o.collect_interval_ms),
                                                  std::chrono::seconds(1))),
      enabled_(o.kubernetes || !o.hpc_job_mapping_dir.empty() || o.kubernetes_process_metrics ||
               o.container_labels || o.EmfContainerInsights()),
      per_process_(PerProcessWanted(o)),
      errors_(std::make_shared<model::SourceErrors>()) {}

Result<std::unique_ptr<AttributionSources>> AttributionSources::Create(
    const config::Options& o, const attribute::EnvLookup& getenv) {
  std::unique_ptr<AttributionSources> s(new AttributionSources(o));
  if (o.kubernetes) {
    // The kubelet client lives in a plugin (attribute/kubelet_plugin.h) that only -k loads; a
    // missing one is a configuration error at start-up, before NVML is touched.
    attribute::KubeletClientOptions kopts;
    kopts.socket_path = o.pod_resources_socket;
    kopts.deadline = attribute::KubeletDeadlineFor(s->period_);
    Result<std::unique_ptr<attribute::PodResourcesLister>> client =
        attribute::LoadKubeletClient(kopts);
    if (!client.ok()) return client.status();
    s->kubelet_client_ = std::move(*client);
  }
  if (o.kubernetes && o.kubernetes_enable_dra) {
    Result<attribute::KubeApiConfig> api = attribute::ResolveKubeApiConfig(
        o.kubernetes_api_server, o.kubernetes_token_file, o.kubernetes_ca_file, getenv);
    if (!api.ok()) {
      if (api.status().code() != StatusCode::kNotFound) return api.status();
      // dcgm-exporter too goes on without its ResourceSlice informer, with a warning.
      log::Warn("no Kubernetes API server: DRA claims are not attributed",
                {{"err", api.status().message()}});
    } else {
      attribute::ResourceSliceOptions r;
      r.api = *api;
      r.node_name = o.node_name;
      r.errors = s->errors_.get();
      s->dra_slices_ = std::make_unique<attribute::ResourceSliceRefresher>(std::move(r));
    }
  }
  // The device series need the API server's pod metadata for pod_uid and for pod labels;
  // Container Insights' schema needs the pods' GPU requests and limits, and the Node.
  const bool device_metadata =
      o.kubernetes && (o.kubernetes_enable_pod_uid || o.kubernetes_enable_pod_labels);
  if (!s->per_process_ && !device_metadata && !o.EmfContainerInsights()) return s;
  // The per-pod rendering follows the dcgm-exporter flags only, not the EMF schema.
  s->pod_sources_ = s->per_process_ || device_metadata;
  if (s->per_process_) {
    s->errors_->Register("cgroup");
    s->processes_ = std::make_unique<attribute::ProcessAttributor>(
        attribute::ProcessAttributorOptions{o.host_proc_root, s->errors_.get()});
  }
  Result<attribute::KubeApiConfig> api = attribute::ResolveKubeApiConfig(
      o.kubernetes_api_server, o.kubernetes_token_file, o.kubernetes_ca_file, getenv);
  if (!api.ok()) {
    if (api.status().code() != StatusCode::kNotFound) return api.status();
    // dcgm-exporter goes on the same way: its pod uids come from its API server informer.
    log::Warn(
        s->per_process_
            ? "no Kubernetes API server: processes cannot be joined to the kubelet's pod names; "
              "per-pod shares carry pod_uid only, kubelet pods on a shared GPU read 0"
        : device_metadata
            ? "no Kubernetes API server: no pod_uid or pod labels on device series"
            : "no Kubernetes API server: Container Insights EMF has no pod GPU requests or "
              "limits and no node identity or GPU capacity",
        {{"err", api.status().message()}});
    return s;
  }
  if (o.EmfContainerInsights()) s->CreateNodeRefresher(*api);
  s->errors_->Register("apiserver");
  attribute::PodWatcherOptions w;
  w.api = *api;
  w.node_name = o.node_name;
  w.labels = attribute::LabelFilter::Create(o.kubernetes_enable_pod_labels,
                                            o.kubernetes_pod_label_allowlist_regex);
  w.errors = s->errors_.get();
  s->pods_ = std::make_unique<attribute::PodWatcher>(std::move(w));
  return s;
}

void AttributionSources::CreateNodeRefresher(const attribute::KubeApiConfig& api) {
  if (options_.node_name.empty()) {
    // Without the node's name there is no Node to GET (and listing every node to guess would
    // need a wider ClusterRole).
    log::Warn("NODE_NAME is not set: Container Insights EMF has no node identity or GPU capacity");
    return;
  }
  attribute::NodeRefresherOptions n;
  n.api = api;
  n.node_name = options_.node_name;
  n.errors = errors_.get();
  node_ = std::make_unique<attribute::NodeRefresher>(std::move(n));
}

bool AttributionSources::PerProcessWanted(const config::Options& o) {
  // dcgm-exporter's --kubernetes-virtual-gpus acts only with -k (its pod mapper is off without).
  return o.kubernetes_process_metrics || (o.kubernetes && o.kubernetes_virtual_gpus);
}

AttributionSources::~AttributionSources() { Stop(); }

void AttributionSources::AttachDevices(const std::vector<model::DeviceIdentity>& identities) {
  const config::Options& o = options_;
  std::unique_ptr<attribute::PodResourcesRefresher> kubelet;
  std::unique_ptr<attribute::HpcJobRefresher> hpc_jobs;
  std::unique_ptr<attribute::ContainerLabelRefresher> containers;
  if (o.kubernetes && kubelet_client_ != nullptr) {
    attribute::MatchOptions mopts;
    mopts.id_type = o.kubernetes_gpu_id_type == config::KubernetesGpuIdType::kDeviceName
                        ? attribute::GpuIdType::kDeviceName
                        : attribute::GpuIdType::kUid;
    mopts.extra_resource_names = o.nvidia_resource_names;
    mopts.virtual_gpus = o.kubernetes_virtual_gpus;
    kubelet = std::make_unique<attribute::PodResourcesRefresher>(
        std::move(kubelet_client_), attribute::PodMatcher(identities, std::move(mopts)), period_,
        errors_);
    log::Info("kubernetes pod attribution on",
              {{"socket", o.pod_resources_socket},
               {"refresh_ms", std::to_string(period_.count())},
               {"deadline_ms", std::to_string(attribute::KubeletDeadlineFor(period_).count())},
               {"virtual_gpus", o.kubernetes_virtual_gpus ? "true" : "false"},
               {"dra", dra_slices_ != nullptr ? "true" : "false"}});
    if (dra_slices_ != nullptr) {
      attribute::ResourceSliceRefresher* slices = dra_slices_.get();
      slices->RefreshOnce();  // bounded by its request timeout
      kubelet->UseDraSlices([slices] { return slices->Latest(); },
                            [slices] { slices->RefreshSoon(); });
    }
    // Container Insights' schema: the device ids the kubelet can allocate, beside List.
    if (o.EmfContainerInsights()) kubelet->EnableAllocatable();
    kubelet->RefreshOnce();  // bounded by the deadline; the first page gets pod labels
  }
  if (!o.hpc_job_mapping_dir.empty()) {
    hpc_jobs = std::make_unique<attribute::HpcJobRefresher>(o.hpc_job_mapping_dir, identities,
                                                            period_, errors_);
    hpc_jobs->RefreshOnce();
  }
  // dcgm-exporter ignores --container-labels under -k (config/ warned): the kubelet names pods'
  // containers.
  if (o.container_labels && !o.kubernetes) {
    attribute::ContainerLabelOptions c;
    c.socket_path = o.container_runtime_socket;
    c.period = period_;
    c.errors = errors_;
    containers = std::make_unique<attribute::ContainerLabelRefresher>(std::move(c), identities);
    log::Info("runtime container labels on", {{"socket", o.container_runtime_socket},
                                              {"refresh_ms", std::to_string(period_.count())}});
    containers->RefreshOnce();  // bounded by its 2 s timeout; the first page gets the labels
  }
  // Swapped, not assigned: should these ever replace earlier refreshers, those stop (joining a
  // thread that may sit in a kubelet call) in the locals' destructors, after the lock.
  util::MutexLock lock(&mu_);
  kubelet_.swap(kubelet);
  hpc_jobs_.swap(hpc_jobs);
  containers_.swap(containers);
}

AttributionSources::Attached AttributionSources::AttachedRefreshers() const {
  util::MutexLock lock(&mu_);
  return {kubelet_.get(), hpc_jobs_.get(), containers_.get()};
}

void AttributionSources::Start() {
  const Attached attached = AttachedRefreshers();
  if (attached.kubelet != nullptr) attached.kubelet->Start();
  if (attached.hpc_jobs != nullptr) attached.hpc_jobs->Start();
  if (attached.containers != nullptr) attached.containers->Start();
  if (processes_ != nullptr) processes_->Start();
  if (pods_ != nullptr) pods_->Start();
  if (dra_slices_ != nullptr) dra_slices_->Start();
  if (node_ != nullptr) node_->Start();  // its first GET at once, on its own thread
}

void AttributionSources::Stop() {
  const Attached attached = AttachedRefreshers();
  if (attached.kubelet != nullptr) attached.kubelet->Stop();
  if (attached.hpc_jobs != nullptr) attached.hpc_jobs->Stop();
  if (attached.containers != nullptr) attached.containers->Stop();
  if (processes_ != nullptr) processes_->Stop();
  if (pods_ != nullptr) pods_->Stop();
  if (dra_slices_ != nullptr) dra_slices_->Stop();
  if (node_ != nullptr) node_->Stop();
}

model::Attribution AttributionSources::Latest() const {
  model::Attribution a;
  if (processes_ != nullptr) a.processes = processes_->Latest();
  if (pods_ != nullptr) a.metadata = pods_->Latest();
  if (node_ != nullptr) a.node = node_->Latest();
  util::MutexLock lock(&mu_);
  if (kubelet_ != nullptr) {
    a.devices = kubelet_->Latest();
    a.allocatable = kubelet_->LatestAllocatable();
  }
  if (hpc_jobs_ != nullptr) a.hpc = hpc_jobs_->Latest();
  if (containers_ != nullptr) a.containers = containers_->Latest();
  return a;
}

void AttributionSources::Observe(const model::Snapshot& snapshot) {
  if (processes_ != nullptr) processes_->Observe(snapshot);
}

render::PodFamiliesOptions AttributionSources::PodRenderOptions() const {
  render::PodFamiliesOptions r;
  if (!pod_sources_) return r;
  const config::Options& o = options_;
  r.enabled = processes_ != nullptr;
  // dcgm-exporter 4.8 emits per-pod GPU_UTIL / FB_USED for shared GPUs under
  // --kubernetes-virtual-gpus, each pod with its own share (see pod_families.h); that flag alone
  // turns the per-process sources on. Without it the device series keep their kubelet pod
  // labels. Our own nvml_exporter_pod_gpu_* families come only with our flag.
  r.dcgm_per_pod_series = o.kubernetes_virtual_gpus;
  r.families = o.kubernetes_process_metrics;
  r.pod_uid_label = o.kubernetes_enable_pod_uid;
  r.use_old_namespace = o.use_old_namespace;
  return r;
}

std::shared_ptr<const model::Snapshot> AttributionSources::ResolveForOnce(
    std::shared_ptr<const model::Snapshot> snapshot, std::chrono::milliseconds wait) {
  if (processes_ == nullptr && pods_ == nullptr) return snapshot;
  if (processes_ != nullptr) {
    processes_->Observe(*snapshot);
    processes_->ResolveNow();
  }
  if (pods_ != nullptr) {
    pods_->Start();
    const auto deadline = std::chrono::steady_clock::now() + wait;
    while (pods_->Latest() == nullptr && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  if (node_ != nullptr) node_->RefreshOnce();  // bounded by its request timeout
  auto copy = std::make_shared<model::Snapshot>(*snapshot);
  if (processes_ != nullptr) copy->attribution.processes = processes_->Latest();
  if (pods_ != nullptr) copy->attribution.metadata = pods_->Latest();
  if (node_ != nullptr) copy->attribution.node = node_->Latest();
  return copy;
}

}  // namespace nvmlx::app
