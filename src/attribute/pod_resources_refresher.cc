#include "attribute/pod_resources_refresher.h"

#include <algorithm>
#include <string>
#include <utility>

#include "model/gpu_allocation.h"
#include "util/log.h"

namespace nvmlx::attribute {

std::chrono::milliseconds KubeletDeadlineFor(std::chrono::milliseconds period) {
  return std::clamp<std::chrono::milliseconds>(period, std::chrono::milliseconds(100),
                                               std::chrono::seconds(10));
}

PodResourcesRefresher::PodResourcesRefresher(std::unique_ptr<PodResourcesLister> client,
                                             PodMatcher matcher, std::chrono::milliseconds period,
                                             std::shared_ptr<model::SourceErrors> errors,
                                             util::Clock* clock)
    : client_(std::move(client)),
      matcher_(std::move(matcher)),
      errors_(std::move(errors)),
      streak_(std::string(kSource), errors_.get()),
      allocatable_streak_(std::string(kAllocatableSource), errors_.get()),
      worker_({.name = "kubelet refresher", .period = period, .clock = clock},
              [this] { RefreshOnce(); }) {
  if (errors_) errors_->Register(kSource);
}

PodResourcesRefresher::~PodResourcesRefresher() { Stop(); }

void PodResourcesRefresher::EnableAllocatable() {
  allocatable_ = true;
  if (errors_) errors_->Register(kAllocatableSource);
}

void PodResourcesRefresher::RefreshAllocatable() {
  Result<KubeletAllocatable> answer = client_->GetAllocatable();
  if (!answer.ok()) {
    if (answer.status().code() == StatusCode::kNotSupported) {
      // Counted and logged once (a one-failure streak), then never asked again.
      allocatable_ = false;
      allocatable_streak_.Fail(
          "GetAllocatableResources (not served by this kubelet: no "
          "allocatable device ids; node_gpu_limit comes from the Node object)",
          answer.status().ToString());
      return;
    }
    allocatable_streak_.Fail("GetAllocatableResources", answer.status().ToString());
    return;
  }
  auto devices = std::make_shared<model::AllocatableDevices>();
  for (const KubeletDevices& d : answer->devices) {
    if (!model::IsGpuResourceName(d.resource_name)) continue;
    auto& ids = devices->device_ids_by_resource[d.resource_name];
    ids.insert(ids.end(), d.device_ids.begin(), d.device_ids.end());
  }
  allocatable_streak_.Succeed();
  latest_allocatable_.Publish(std::move(devices));
}

std::shared_ptr<const model::AllocatableDevices> PodResourcesRefresher::LatestAllocatable() const {
  return latest_allocatable_.Get();
}

bool PodResourcesRefresher::RefreshOnce() {
  Result<KubeletPodList> answer = client_->List();
  if (!answer.ok()) {
    streak_.Fail("list pod resources from the kubelet", answer.status().ToString());
    return false;
  }
  // Only after a List that worked: a kubelet that is down counts as "kubelet" alone.
  if (allocatable_) RefreshAllocatable();
  MatchStats stats;
  std::shared_ptr<const DraSlices> dra = dra_latest_ ? dra_latest_() : nullptr;
  std::shared_ptr<const model::DeviceAttribution> matched =
      matcher_.Match(*answer, &stats, dra.get());
  std::set<std::string> unknown(stats.dra_unknown.begin(), stats.dra_unknown.end());
  const bool new_unknown = std::any_of(unknown.begin(), unknown.end(), [this](const auto& key) {
    return dra_unknown_.count(key) == 0;
  });
  if (new_unknown && dra_refresh_soon_) dra_refresh_soon_();
  dra_unknown_ = std::move(unknown);
  streak_.Succeed();
  log::Debug("kubelet pod-resources refreshed",
             {{"pods", std::to_string(answer->pods.size())},
              {"gpu_device_ids", std::to_string(stats.gpu_devices)},
              {"unmatched", std::to_string(stats.unmatched)},
              {"dra_claims", std::to_string(stats.dra_claims)},
              {"dra_unresolved", std::to_string(stats.dra_unresolved)},
              {"devices_attributed", std::to_string(matched->pods_by_device.size())}});
  latest_.Publish(std::move(matched));
  return true;
}

void PodResourcesRefresher::UseDraSlices(std::function<std::shared_ptr<const DraSlices>()> latest,
                                         std::function<void()> refresh_soon) {
  dra_latest_ = std::move(latest);
  dra_refresh_soon_ = std::move(refresh_soon);
}

void PodResourcesRefresher::Start() { worker_.Start(); }

void PodResourcesRefresher::Stop() { worker_.Stop(); }

void PodResourcesRefresher::RefreshSoon() { worker_.RunSoon(); }

std::shared_ptr<const model::DeviceAttribution> PodResourcesRefresher::Latest() const {
  return latest_.Get();
}

}  // namespace nvmlx::attribute
