// PodResourcesRefresher: keeps the latest kubelet attribution (DeviceAttribution) fresh on its
// own background thread, so that no scrape and no collection ever waits for the kubelet.
//
// - Refreshes every `period` (the app: the collect interval, but at least 1 s) and at once when
//   RefreshSoon() is called (a device change).
// - Each refresh is List (deadline = min(period, 10 s): a call never outlives its period) then
//   PodMatcher::Match, and publishes a new immutable DeviceAttribution.
// - On failure the last good attribution stays published (null if there never was one), the
//   "kubelet" counter of model::SourceErrors goes up, and one warning is logged per failure streak;
//   the first success after a streak logs one info line.
//
// - With EnableAllocatable() (--emf-schema container-insights), each refresh also asks
//   GetAllocatableResources and publishes the GPU resource names' device ids
//   (model::AllocatableDevices), after a List that succeeded (a kubelet that is down counts once,
//   as "kubelet"). Its own failures count as source "kubelet_allocatable" and never fail the
//   List part. A kubelet that does not serve the call (older than
//   1.23, or its KubeletPodResourcesGetAllocatable gate off: gRPC UNIMPLEMENTED) is counted
//   once, logged once, and not asked again: it will not grow the call without a restart, and the
//   Node object's capacity (NodeRefresher) still gives node_gpu_limit.
//
// The thread is a util::PeriodicWorker (kAfterRun: the period counts from the end of a refresh) on
// an injectable util::Clock, so tests drive it with a FakeClock.
//
// Thread-safety: Latest() and RefreshSoon() from any thread; Start/Stop/RefreshOnce from one
// controlling thread (RefreshOnce only while the thread is not running: both use streak_).
#ifndef NVML_EXPORTER_ATTRIBUTE_POD_RESOURCES_REFRESHER_H_
#define NVML_EXPORTER_ATTRIBUTE_POD_RESOURCES_REFRESHER_H_

#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <string>

#include "attribute/error_counters.h"
#include "attribute/pod_matcher.h"
#include "attribute/pod_resources.h"
#include "model/source_errors.h"
#include "util/clock.h"
#include "util/latest.h"
#include "util/periodic_worker.h"

namespace nvmlx::attribute {

class PodResourcesRefresher {
 public:
  static constexpr std::string_view kSource = "kubelet";
  static constexpr std::string_view kAllocatableSource = "kubelet_allocatable";

  // `client` lists the pods (a KubeletClient from the kubelet plugin: kubelet_plugin.h).
  // `errors` may be null (no counting). `clock` (null: the real one) must outlive the refresher.
  PodResourcesRefresher(std::unique_ptr<PodResourcesLister> client, PodMatcher matcher,
                        std::chrono::milliseconds period,
                        std::shared_ptr<model::SourceErrors> errors, util::Clock* clock = nullptr);
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

  // Asks GetAllocatableResources at every refresh from now on (see above). Call before the first
  // refresh.
  void EnableAllocatable();
  // Null until the first successful GetAllocatableResources (so always without
  // EnableAllocatable(), and with a kubelet that lacks the call).
  std::shared_ptr<const model::AllocatableDevices> LatestAllocatable() const;

  // DRA (--kubernetes-enable-dra): each refresh resolves the answer's claims with `latest()`'s
  // ResourceSlices (a null result: claims are not attributed this time), and calls
  // `refresh_soon()` (may be empty) when a claim names a device those slices do not know and
  // the previous refresh did not already report it unknown (a new claim on a newly published
  // slice is then picked up at once, while a claim that stays unknown does not make every
  // refresh list the slices again). Call before the first refresh.
  void UseDraSlices(std::function<std::shared_ptr<const DraSlices>()> latest,
                    std::function<void()> refresh_soon);

 private:
  std::unique_ptr<PodResourcesLister> client_;  // only the refreshing thread uses it
  PodMatcher matcher_;
  std::shared_ptr<model::SourceErrors> errors_;
  std::function<std::shared_ptr<const DraSlices>()> dra_latest_;
  std::function<void()> dra_refresh_soon_;
  // "<pool>/<device>" unknown at the previous refresh; only the refreshing thread touches it.
  std::set<std::string> dra_unknown_;
  FailureStreak streak_;  // only the refreshing thread touches it
  util::Latest<model::DeviceAttribution> latest_;
  // GetAllocatableResources: asked while `allocatable_` (cleared for good by an UNIMPLEMENTED
  // answer); only the refreshing thread touches these after EnableAllocatable().
  bool allocatable_ = false;
  FailureStreak allocatable_streak_;
  util::Latest<model::AllocatableDevices> latest_allocatable_;
  void RefreshAllocatable();
  util::PeriodicWorker worker_;  // last: stopped (by its destructor) before the members above go
};

// The deadline of one List call for a refresh period: the period itself, at most 10 s (the
// timeout dcgm-exporter uses) and at least 100 ms.
std::chrono::milliseconds KubeletDeadlineFor(std::chrono::milliseconds period);

}  // namespace nvmlx::attribute

#endif  // NVML_EXPORTER_ATTRIBUTE_POD_RESOURCES_REFRESHER_H_
