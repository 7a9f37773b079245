// NodeFaultReporter: writes what the NodeFaultTracker decides to this node's Kubernetes Node
// (--kubernetes-node-conditions; docs/faults.md §5): its three GPU conditions, by a strategic-
// merge PATCH of nodes/<node>/status (the conditions list merges on `type`, so the kubelet's and
// other owners' conditions are never touched), and an Event per fault (core/v1, in "default",
// involvedObject the Node, as the kubelet and node-problem-detector post theirs).
//
// When it writes: the conditions when one changes, every `heartbeat` otherwise (a fresh
// lastHeartbeatTime, as node-problem-detector does), and again `retry` after a failed write;
// lastTransitionTime moves only when a status does. Events: the first occurrence of a key (fault
// on one GPU) is POSTed; repeats within `aggregate` add to its count, PATCHed at most every
// `repeat_patch`; a token bucket (`event_burst`, one more every `event_refill`) bounds the new
// Events an Xid storm can post. At start it reads the Node once and adopts its own conditions
// there (NodeFaultTracker::Adopt), so a restart neither clears nor flaps them.
//
// A refused or failing API server (403 without the RBAC, 5xx, no route) degrades this part only:
// one log line per streak and kind of write, the counters below, and the next try later; the
// collection never waits on it (Offer only swaps a pointer).
//
// Thread-safety: Offer, Stop and the counters from any thread; everything else runs on the
// reporter's own thread.
#ifndef NVML_EXPORTER_ATTRIBUTE_NODE_FAULT_REPORTER_H_
#define NVML_EXPORTER_ATTRIBUTE_NODE_FAULT_REPORTER_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attribute/kube_client.h"
#include "attribute/node_faults.h"
#include "model/snapshot.h"
#include "util/mutex.h"
#include "util/periodic_worker.h"
#include "util/thread_annotations.h"

namespace nvmlx::attribute {

// Makes one API server request; the seam tests replace the HTTPS client with.
using KubeCall =
    std::function<Result<HttpResponse>(const KubeApiCall& call, std::chrono::milliseconds)>;

struct NodeFaultReporterOptions {
  KubeApiConfig api;
  std::string node_name;                   // required
  std::chrono::milliseconds hold{600000};  // --kubernetes-node-conditions-hold
  std::chrono::seconds heartbeat{300};
  std::chrono::seconds retry{10};
  std::chrono::seconds aggregate{600};
  std::chrono::seconds repeat_patch{30};
  int event_burst = 25;
  std::chrono::seconds event_refill{300};
  std::chrono::milliseconds request_timeout{5000};
  // Null: a KubeApiClient on `api`. Tests give a function instead.
  KubeCall call;
  // The wall clock (Event and condition times, the hold); null: the system clock.
  std::function<WallTime()> now;
};

class NodeFaultReporter {
 public:
  explicit NodeFaultReporter(NodeFaultReporterOptions options);
  ~NodeFaultReporter();
  NodeFaultReporter(const NodeFaultReporter&) = delete;
  NodeFaultReporter& operator=(const NodeFaultReporter&) = delete;

  // Starts the thread: it reads the Node, then looks at the latest snapshot every second.
  void Start();
  // Each collection: the tracker decides at once (every snapshot, so that a health failure shorter
  // than the reporter's second is not missed; a few µs per GPU), the reporter's thread writes.
  // Thread-safe.
  void Offer(std::shared_ptr<const model::Snapshot> snap) NVMLX_EXCLUDES(mu_);
  void Stop();

  // Counters for the daemon's own families (nvml_exporter_node_fault_*).
  struct Stats {
    uint64_t condition_writes = 0;  // PATCHes of the Node's status that the server took
    uint64_t condition_failures = 0;
    uint64_t events_created = 0;
    uint64_t events_updated = 0;  // count PATCHes of an Event already posted
    uint64_t events_failed = 0;
    uint64_t events_rate_limited = 0;  // new Events the token bucket dropped
    // Per condition type: 1 while in its problem state as last decided; absent before.
    std::vector<std::pair<std::string, bool>> problems;
  };
  Stats stats() const;

  // One pass (the thread's run); public for tests that drive it without the thread.
  void RunOnce() NVMLX_EXCLUDES(mu_);

 private:
  struct PostedEvent {
    std::string name;
    WallTime first;
    WallTime last;
    int64_t count = 0;
    int64_t sent_count = 0;  // what the server has
    WallTime patched;
    std::string reason;
    std::string message;
  };
  WallTime Now() const;  // options_.now, or the system clock
  Result<HttpResponse> Send(const KubeApiCall& call);
  void AdoptNode() NVMLX_EXCLUDES(mu_);
  void SyncConditions(const std::vector<NodeCondition>& want, WallTime now);
  void RecordEvents(const std::vector<NodeEvent>& events, WallTime now);
  void FlushEvents(WallTime now);
  bool TakeToken(WallTime now);
  // Logs a failed write once per streak of `kind` ("conditions", "events"); false when the
  // streak was already logged.
  void NoteFailure(const std::string& kind, const std::string& what);
  void NoteSuccess(const std::string& kind);

  const NodeFaultReporterOptions options_;
  std::unique_ptr<KubeApiClient> client_;  // null when options_.call is set
  // What Offer decided and the reporter's thread has not written yet.
  util::Mutex mu_;
  NodeFaultTracker tracker_ NVMLX_GUARDED_BY(mu_);
  std::vector<NodeCondition> decided_ NVMLX_GUARDED_BY(mu_);
  std::vector<NodeEvent> pending_events_ NVMLX_GUARDED_BY(mu_);  // one per key, counts added

  // The reporter's thread's own.
  bool adopted_ = false;
  std::vector<NodeCondition> wanted_;            // what the tracker last decided, as taken
  std::vector<NodeCondition> written_;           // what the server has, as last written
  std::map<std::string, WallTime> transitions_;  // per type: lastTransitionTime
  std::optional<WallTime> written_at_;
  std::optional<WallTime> retry_at_;
  std::map<std::string, PostedEvent> events_;  // per key
  double tokens_ = 0;
  std::optional<WallTime> tokens_at_;
  std::map<std::string, bool> failing_;  // per kind: inside a logged failure streak

  mutable util::Mutex stats_mu_;
  Stats stats_ NVMLX_GUARDED_BY(stats_mu_);

  util::PeriodicWorker worker_;  // last: stopped before the members above go
};

}  // namespace nvmlx::attribute

#endif  // NVML_EXPORTER_ATTRIBUTE_NODE_FAULT_REPORTER_H_
