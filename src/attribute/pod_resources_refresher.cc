#include "attribute/pod_resources_refresher.h"

#include <algorithm>
#include <string>
#include <utility>

#include "util/log.h"

namespace nvmlx::attribute {

std::chrono::milliseconds KubeletDeadlineFor(std::chrono::milliseconds period) {
  return std::clamp<std::chrono::milliseconds>(period, std::chrono::milliseconds(100),
                                               std::chrono::seconds(10));
}

PodResourcesRefresher::PodResourcesRefresher(KubeletClientOptions client, PodMatcher matcher,
                                             std::chrono::milliseconds period,
                                             std::shared_ptr<model::SourceErrors> errors)
    : client_(std::move(client)),
      matcher_(std::move(matcher)),
      period_(period),
      errors_(std::move(errors)),
      streak_(std::string(kSource), errors_.get()) {
  if (errors_) errors_->Register(kSource);
}

PodResourcesRefresher::~PodResourcesRefresher() { Stop(); }

bool PodResourcesRefresher::RefreshOnce() {
  Result<v1::ListPodResourcesResponse> answer = client_.List();
  if (!answer.ok()) {
    streak_.Fail("list pod resources from the kubelet", answer.status().ToString());
    return false;
  }
  MatchStats stats;
  std::shared_ptr<const model::DeviceAttribution> matched = matcher_.Match(*answer, &stats);
  streak_.Succeed();
  log::Debug("kubelet pod-resources refreshed",
             {{"pods", std::to_string(answer->pod_resources_size())},
              {"gpu_device_ids", std::to_string(stats.gpu_devices)},
              {"unmatched", std::to_string(stats.unmatched)},
              {"devices_attributed", std::to_string(matched->pods_by_device.size())}});
  std::lock_guard<std::mutex> lock(mu_);
  latest_ = std::move(matched);
  return true;
}

void PodResourcesRefresher::Start() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = false;
  }
  thread_ = std::thread([this] { Loop(); });
}

void PodResourcesRefresher::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void PodResourcesRefresher::RefreshSoon() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    soon_ = true;
  }
  cv_.notify_all();
}

std::shared_ptr<const model::DeviceAttribution> PodResourcesRefresher::Latest() const {
  std::lock_guard<std::mutex> lock(mu_);
  return latest_;
}

void PodResourcesRefresher::Loop() {
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, period_, [this] { return stop_ || soon_; });
      if (stop_) return;
      soon_ = false;
    }
    RefreshOnce();
  }
}

}  // namespace nvmlx::attribute
