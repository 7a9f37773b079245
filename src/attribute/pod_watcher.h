// PodWatcher: the pods of this node from the Kubernetes API server, kept current on its own
// thread and published as an immutable model::PodMetadata (uid -> namespace, name, labels,
// container names), never touched on the scrape path.
//
// Protocol (an informer's, reduced): list pods with fieldSelector=spec.nodeName=$NODE_NAME (all
// pods, with a warning, when NODE_NAME is unset, as dcgm-exporter does), then watch from the
// list's resourceVersion with bookmarks; each server-side watch timeout re-watches from the
// latest resourceVersion; 410 Gone (HTTP or an ERROR event) re-lists. Needs RBAC get/list/watch
// on pods only.
//
// Failures (server down, 401/403, bad JSON, a dropped watch): the last published model::PodMetadata
// stays in place, the failure counts as source "apiserver" in model::SourceErrors and is logged
// once per streak, and the watcher retries with exponential backoff (1 s doubling to 30 s). A
// dropped watch resumes from its resourceVersion; a bad event re-lists.
//
// Thread-safety: Latest() from any thread; Start/Stop from one controlling thread.
#ifndef NVML_EXPORTER_ATTRIBUTE_POD_WATCHER_H_
#define NVML_EXPORTER_ATTRIBUTE_POD_WATCHER_H_

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "attribute/error_counters.h"
#include "attribute/kube_client.h"
#include "attribute/pod_json.h"
#include "util/clock.h"
#include "util/latest.h"
#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace nvmlx::attribute {

struct PodWatcherOptions {
  KubeApiConfig api;
  std::string node_name;                      // empty: every pod of the cluster
  std::shared_ptr<const LabelFilter> labels;  // null: no labels
  model::SourceErrors* errors = nullptr;      // may be null; must outlive the watcher
  std::chrono::milliseconds backoff_initial{1000};
  std::chrono::milliseconds backoff_max{30000};
  std::chrono::milliseconds request_timeout{30000};
  // Asked of the server (timeoutSeconds) so that a watch ends cleanly and is renewed; a watch
  // with no byte (not even a bookmark) for watch_idle is considered dead.
  std::chrono::seconds watch_timeout{290};
  std::chrono::milliseconds watch_idle{330000};
  // Times the backoff waits (null: the real clock); must outlive the watcher.
  util::Clock* clock = nullptr;
};

// Builds the model::PodMetadata published for `pods` (uid -> record): by_uid also holds each static
// pod's kubelet uid (mirror annotation), uid_by_name "namespace/pod" -> uid. Exposed for tests.
std::shared_ptr<const model::PodMetadata> BuildPodMetadata(
    const std::map<std::string, PodRecord>& pods);

class PodWatcher {
 public:
  explicit PodWatcher(PodWatcherOptions options);
  ~PodWatcher();
  PodWatcher(const PodWatcher&) = delete;
  PodWatcher& operator=(const PodWatcher&) = delete;

  // Null until the first successful list.
  std::shared_ptr<const model::PodMetadata> Latest() const;

  void Start();
  void Stop();

 private:
  // kRenew: the server ended the watch after events (its timeout); kIdle: it ended one at once
  // without any; kRelist: 410 Gone or a bad event; kFailed: transport or HTTP error.
  enum class WatchEnd { kRenew, kIdle, kRelist, kFailed };
  void Loop();
  Status List();
  WatchEnd Watch();
  void Publish();
  // Sleeps the current backoff (woken by Stop), then doubles it. False when stopping.
  bool Backoff() NVMLX_EXCLUDES(mu_);

  const PodWatcherOptions options_;
  util::Clock* const clock_;
  KubeApiClient client_;

  util::Mutex mu_;
  util::CondVar cv_;
  bool stopping_ NVMLX_GUARDED_BY(mu_) = false;
  util::Latest<model::PodMetadata> latest_;

  // The watcher thread's own state.
  std::map<std::string, PodRecord> pods_;  // by uid
  std::string resource_version_;
  std::chrono::milliseconds backoff_;
  FailureStreak streak_;
  std::thread thread_;
};

}  // namespace nvmlx::attribute

#endif  // NVML_EXPORTER_ATTRIBUTE_POD_WATCHER_H_
