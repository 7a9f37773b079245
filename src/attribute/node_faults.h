// NodeFaultTracker: from each collection's snapshot, what this node's Kubernetes Node should show
// of its GPUs' faults (--kubernetes-node-conditions; docs/faults.md §5): the three conditions the
// daemon owns (fields/gpu_faults.h) and the Events to post, one per new occurrence of a fault Xid
// (or a GPU lost without one). It decides; NodeFaultReporter (attribute/node_fault_reporter.h)
// writes.
//
// Hysteresis: GpuXidCritical stays True for `hold` after the last critical Xid, and GpuHealthy
// stays False for `hold` after the last failing health check, so that a fault that comes and goes
// does not flap the Node; GpuLost follows the GPUs as they are (a lost GPU stays lost until the
// node is rebooted or the GPU reset, and the daemon restarted). A restart of the daemon loses its
// Xid history: Adopt() seeds the hold from the Node as the daemon finds it (a problem condition
// True there is held from its last heartbeat), so that a restart neither clears nor flaps it, and
// a GPU the Node already shows lost is not announced by a second Event.
//
// Thread-safety: not thread-safe; one thread (the reporter's) uses it.
#ifndef NVML_EXPORTER_ATTRIBUTE_NODE_FAULTS_H_
#define NVML_EXPORTER_ATTRIBUTE_NODE_FAULTS_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/snapshot.h"

namespace nvmlx::attribute {

using WallTime = std::chrono::system_clock::time_point;

// One Node condition as the daemon wants it (times are the reporter's business).
struct NodeCondition {
  std::string type;
  std::string status;  // "True", "False" or "Unknown"
  std::string reason;
  std::string message;
  bool operator==(const NodeCondition&) const = default;
  // In its problem state (GpuHealthy False, GpuXidCritical or GpuLost True).
  bool Problem() const;
};

// One of the daemon's conditions as found on the Node at start.
struct FoundCondition {
  std::string type;
  std::string status;
  std::string reason;
  std::string message;
  WallTime last_heartbeat;
};

// One Event to post: `count` new occurrences of one fault on one GPU. `key` names the fault and
// the GPU ("GPU-…/95"): the reporter aggregates repeats of a key into one Event.
struct NodeEvent {
  std::string key;
  std::string reason;
  std::string message;
  int64_t count = 0;
};

class NodeFaultTracker {
 public:
  explicit NodeFaultTracker(std::chrono::milliseconds hold) : hold_(hold) {}

  // The daemon's conditions found on the Node at start.
  void Adopt(const std::vector<FoundCondition>& found);

  struct Outcome {
    std::vector<NodeCondition> conditions;  // always the three, in fields/gpu_faults.h's order
    std::vector<NodeEvent> events;          // new since the previous Observe
  };
  // One collection, at `now`.
  Outcome Observe(const model::Snapshot& snap, WallTime now);

 private:
  struct Latest {
    WallTime at;
    std::string reason;
    std::string message;
  };
  void ObserveXids(const model::Snapshot& snap, size_t i, WallTime now,
                   std::vector<NodeEvent>* events);
  NodeCondition XidCondition(WallTime now) const;
  NodeCondition HealthCondition(const model::Snapshot& snap, WallTime now);
  NodeCondition LostCondition(const model::Snapshot& snap, std::vector<NodeEvent>* events);

  const std::chrono::milliseconds hold_;
  // Per GPU (UUID, else "gpu<index>"): the Xid totals seen so far.
  std::map<std::string, std::map<int64_t, int64_t>> seen_;
  std::optional<Latest> critical_;   // the last critical Xid
  std::optional<Latest> unhealthy_;  // the last failing health check
  bool health_seen_ = false;         // some collection carried health results
  std::set<std::string> lost_;       // GPUs known lost
  // GpuLost's message as found True on the Node at the start (Adopt): a GPU it names was lost
  // before this process and had its Event then, so it gets no second one after a restart.
  std::string adopted_lost_;
};

}  // namespace nvmlx::attribute

#endif  // NVML_EXPORTER_ATTRIBUTE_NODE_FAULTS_H_
