// NodeRefresher: this node's Node object from the Kubernetes API server, fetched at start and
// then every minute on its own thread, and published as an immutable model::NodeInfo (instance
// id, instance type, GPU capacity) for --emf-schema container-insights. Never on the scrape
// path.
//
// Why a separate refresher and not the PodWatcher: the Node is one object that changes rarely
// (its labels and capacity only when the node is re-provisioned or a device plugin restarts),
// so a GET a minute is cheaper and simpler than a second watch, and it fails on its own: a
// ClusterRole without `get` on nodes (403) must not stop pod attribution. It needs the node's
// name (NODE_NAME, the downward API's spec.nodeName): without it there is no node to ask.
//
// Failures (server down, 401/403 - e.g. RBAC without nodes/get -, 404, bad JSON): the last good
// NodeInfo stays published (null if there never was one), the failure counts as source
// "apiserver_node" in model::SourceErrors, and one warning is logged per failure streak (as
// every attribution source: FailureStreak). The next try is the next period: a Node that
// changes once a month is not worth a faster retry.
//
// Thread-safety: Latest() from any thread; Start/Stop/RefreshOnce from one controlling thread
// (RefreshOnce only while the thread is not running: both use streak_).
#ifndef NVML_EXPORTER_ATTRIBUTE_NODE_REFRESHER_H_
#define NVML_EXPORTER_ATTRIBUTE_NODE_REFRESHER_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "attribute/error_counters.h"
#include "attribute/kube_client.h"
#include "model/attribution.h"
#include "model/source_errors.h"
#include "util/clock.h"
#include "util/latest.h"
#include "util/periodic_worker.h"
#include "util/status.h"

namespace nvmlx::attribute {

// GETs one API server path; the seam tests replace the HTTPS client with.
using KubeGet =
    std::function<Result<HttpResponse>(const std::string& target, std::chrono::milliseconds)>;

struct NodeRefresherOptions {
  KubeApiConfig api;
  std::string node_name;  // required (the caller checks: no name, no refresher)
  std::chrono::milliseconds period{60000};
  std::chrono::milliseconds request_timeout{5000};  // also bounds the start-up GET
  model::SourceErrors* errors = nullptr;            // may be null; must outlive the refresher
  util::Clock* clock = nullptr;  // null: the real clock; must outlive the refresher
  // Null: a KubeApiClient on `api`. Tests give a function instead.
  KubeGet get;
};

class NodeRefresher {
 public:
  static constexpr std::string_view kSource = "apiserver_node";

  explicit NodeRefresher(NodeRefresherOptions options);
  ~NodeRefresher();
  NodeRefresher(const NodeRefresher&) = delete;
  NodeRefresher& operator=(const NodeRefresher&) = delete;

  // One GET on the calling thread; true when it succeeded (then published).
  bool RefreshOnce();
  // Starts the thread, whose first GET is at once (then every period).
  void Start();
  void Stop();

  // Null until the first successful GET.
  std::shared_ptr<const model::NodeInfo> Latest() const;

  // The path asked for `node_name` (exposed for tests).
  static std::string Target(std::string_view node_name);

 private:
  const NodeRefresherOptions options_;
  std::unique_ptr<KubeApiClient> client_;  // null when options_.get is set
  // Only the refreshing thread touches it.
  FailureStreak streak_;
  util::Latest<model::NodeInfo> latest_;
  util::PeriodicWorker worker_;  // last: stopped before the members above go
};

}  // namespace nvmlx::attribute

#endif  // NVML_EXPORTER_ATTRIBUTE_NODE_REFRESHER_H_
