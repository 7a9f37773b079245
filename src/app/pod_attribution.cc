#include "app/pod_attribution.h"

#include <thread>

#include "util/log.h"

namespace nvmlx::app {

Result<std::unique_ptr<PodAttribution>> PodAttribution::Create(const config::Options& o,
                                                               const attribute::EnvLookup& getenv,
                                                               model::SourceErrors* errors) {
  // Pod labels on the device series are not rendered yet: only pod_uid needs the watcher there.
  const bool device_metadata = o.kubernetes && o.kubernetes_enable_pod_uid;
  if (!o.kubernetes_process_metrics && !device_metadata) return std::unique_ptr<PodAttribution>();
  std::unique_ptr<PodAttribution> a(new PodAttribution());
  if (o.kubernetes_process_metrics) {
    errors->Register("cgroup");
    a->processes_ = std::make_unique<attribute::ProcessAttributor>(
        attribute::ProcessAttributorOptions{o.host_proc_root, errors});
  }
  Result<attribute::KubeApiConfig> api = attribute::ResolveKubeApiConfig(
      o.kubernetes_api_server, o.kubernetes_token_file, o.kubernetes_ca_file, getenv);
  if (!api.ok()) {
    if (api.status().code() != StatusCode::kNotFound) return api.status();
    log::Warn(
        "no Kubernetes API server: no pod_uid on device series; per-pod series carry pod_uid "
        "only",
        {{"err", api.status().message()}});
    return a;
  }
  errors->Register("apiserver");
  attribute::PodWatcherOptions w;
  w.api = *api;
  w.node_name = o.node_name;
  w.labels = attribute::LabelFilter::Create(o.kubernetes_enable_pod_labels,
                                            o.kubernetes_pod_label_allowlist_regex);
  w.errors = errors;
  a->pods_ = std::make_unique<attribute::PodWatcher>(std::move(w));
  return a;
}

PodAttribution::~PodAttribution() { Stop(); }

model::Attribution PodAttribution::Latest() const {
  model::Attribution out;
  if (processes_ != nullptr) out.processes = processes_->Latest();
  if (pods_ != nullptr) out.metadata = pods_->Latest();
  return out;
}

void PodAttribution::Observe(const model::Snapshot& snapshot) {
  if (processes_ != nullptr) processes_->Observe(snapshot);
}

render::PodFamiliesOptions PodAttribution::RenderOptions(const config::Options& o) const {
  render::PodFamiliesOptions r;
  r.enabled = processes_ != nullptr;
  // dcgm-exporter 4.8 emits per-pod GPU_UTIL / FB_USED for shared GPUs under
  // --kubernetes-virtual-gpus; with per-process data each pod gets its own share there (see
  // pod_families.h). Without the flag the device series keep their kubelet pod labels and our
  // own nvml_exporter_pod_gpu_* families carry the shares.
  r.dcgm_per_pod_series = o.kubernetes_virtual_gpus;
  r.pod_uid_label = o.kubernetes_enable_pod_uid;
  r.use_old_namespace = o.use_old_namespace;
  return r;
}

void PodAttribution::Start() {
  if (processes_ != nullptr) processes_->Start();
  if (pods_ != nullptr) pods_->Start();
}

void PodAttribution::Stop() {
  if (processes_ != nullptr) processes_->Stop();
  if (pods_ != nullptr) pods_->Stop();
}

std::shared_ptr<const model::Snapshot> PodAttribution::ResolveForOnce(
    const model::Snapshot& snapshot, std::chrono::milliseconds wait) {
  if (processes_ != nullptr) {
    processes_->Observe(snapshot);
    processes_->ResolveNow();
  }
  if (pods_ != nullptr) {
    pods_->Start();
    const auto deadline = std::chrono::steady_clock::now() + wait;
    while (pods_->Latest() == nullptr && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  auto copy = std::make_shared<model::Snapshot>(snapshot);
  if (processes_ != nullptr) copy->attribution.processes = processes_->Latest();
  if (pods_ != nullptr) copy->attribution.metadata = pods_->Latest();
  return copy;
}

}  // namespace nvmlx::app
