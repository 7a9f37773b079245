// PodResourcesRefresher: keeps the latest kubelet attribution (DeviceAttribution) fresh on its
// own background thread, so that no scrape and no collection ever waits for the kubelet.
//
// - Refreshes every `period` (the app: the collect interval, but at least 1 s) and at once when
//   RefreshSoon() is called (a device change).
// - Each refresh is List (deadline = min(period, 10 s): a call never outlives its period) then
//   PodMatcher::Match, and publishes a new immutable DeviceAttribution.
// - On failure the last good attribution stays published (null if there never was one), the
//   "kubelet" counter of SourceErrors goes up, and one warning is logged per failure streak;
//   the first success after a streak logs one info line.
//
// Thread-safety: Latest() and RefreshSoon() from any thread; Start/Stop/RefreshOnce from one
// controlling thread (RefreshOnce only while the thread is not running).
#ifndef NVML_EXPORTER_ATTRIBUTE_POD_RESOURCES_REFRESHER_H_
#define NVML_EXPORTER_ATTRIBUTE_POD_RESOURCES_REFRESHER_H_

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "attribute/error_counters.h"
#include "attribute/kubelet_client.h"
#include "attribute/pod_matcher.h"
#include "model/attribution.h"
#include "model/source_errors.h"
#include "util/thread_annotations.h"

namespace nvmlx::attribute {

class PodResourcesRefresher {
 public:
  static constexpr std::string_view kSource = "kubelet";

  // `errors` may be null (no counting).
  PodResourcesRefresher(KubeletClientOptions client, PodMatcher matcher,
                        std::chrono::milliseconds period,
                        std::shared_ptr<model::SourceErrors> errors);
  ~PodResourcesRefresher();
  PodResourcesRefresher(const PodResourcesRefresher&) = delete;
  PodResourcesRefresher& operator=(const PodResourcesRefresher&) = delete;

  // One refresh on the calling thread; true when it succeeded.
  bool RefreshOnce();
  // Starts the thread; its first refresh is one period from now (the caller runs RefreshOnce
  // first, so that the first published page already has pod labels).
  void Start();
  void Stop();
  // Wakes the thread for a refresh now (e.g. after the device set changed).
  void RefreshSoon();

  std::shared_ptr<const model::DeviceAttribution> Latest() const;

 private:
  void Loop();

  KubeletClient client_;
  PodMatcher matcher_;
  const std::chrono::milliseconds period_;
  std::shared_ptr<model::SourceErrors> errors_;
  FailureStreak streak_;  // only the refreshing thread touches it

  mutable std::mutex mu_;
  std::shared_ptr<const model::DeviceAttribution> latest_ NVMLX_GUARDED_BY(mu_);
  bool stop_ NVMLX_GUARDED_BY(mu_) = false;
  bool soon_ NVMLX_GUARDED_BY(mu_) = false;
  std::condition_variable cv_;
  std::thread thread_;
};

// The deadline of one List call for a refresh period: the period itself, at most 10 s (the
// timeout dcgm-exporter uses) and at least 100 ms.
std::chrono::milliseconds KubeletDeadlineFor(std::chrono::milliseconds period);

}  // namespace nvmlx::attribute

#endif  // NVML_EXPORTER_ATTRIBUTE_POD_RESOURCES_REFRESHER_H_
