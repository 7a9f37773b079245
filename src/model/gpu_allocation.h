// GPU allocation as CloudWatch Container Insights counts it: the pod_gpu_* and node_gpu_*
// fields of --emf-schema container-insights, computed from the API server's pods (PodMeta's
// phase, containers and gpu_resources) and the Node's capacity (NodeInfo::gpu_capacity).
//
// The rules are the Container Insights agent's (its pod store; docs/emf.md "Container Insights:
// allocation counts and node identity (sources)" names the files and commits):
//  - one resource name, nvidia.com/gpu; MIG profiles (nvidia.com/mig-*) are not counted;
//  - spec.containers only (no init containers);
//  - Succeeded and Failed pods are left out;
//  - a pod counts only when EVERY container sets a GPU limit (a pod with zero containers
//    trivially does); its request is then the sum of the requests that are set;
//  - usage_total is the pod's limit while it is Running, else 0 (the agent does not measure
//    who uses a GPU: "in use" means "allocated to a running pod");
//  - the node's limit is status.capacity["nvidia.com/gpu"] of the Node object (ours: else the
//    kubelet's allocatable nvidia.com/gpu devices); the node fields are emitted only when it
//    is known and not 0;
//  - reserved_capacity is a percentage: pod limit / node capacity * 100 for a pod, sum of pod
//    requests / node capacity * 100 for the node;
//  - unreserved_capacity and available_capacity: see NodeGpuAllocation (not verified upstream).
// Why here (model/) and pure: the renderer (render/) needs the numbers and must not depend on
// attribute/; the data comes from two refreshers that publish at different times, so it is
// computed when a page is rendered, from whatever parts are current.
//
// Thread-safety: pure functions over immutable inputs.
#ifndef NVML_EXPORTER_MODEL_GPU_ALLOCATION_H_
#define NVML_EXPORTER_MODEL_GPU_ALLOCATION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "model/attribution.h"

namespace nvmlx::model {

// The one resource name Container Insights counts.
inline constexpr std::string_view kGpuResourceName = "nvidia.com/gpu";

// The names PodMeta::gpu_resources and NodeInfo keep: the whole-GPU resource and the MIG
// profiles of the NVIDIA device plugin's "mixed" strategy (nvidia.com/mig-1g.10gb, ...).
inline bool IsGpuResourceName(std::string_view name) {
  return name == kGpuResourceName || name.substr(0, 15) == "nvidia.com/mig-";
}

struct PodGpuAllocation {
  int64_t request = 0;      // pod_gpu_request
  int64_t limit = 0;        // pod_gpu_limit
  int64_t usage_total = 0;  // pod_gpu_usage_total: the limit while Running, else 0
  // pod_gpu_reserved_capacity (percent): absent when the node capacity is unknown or 0.
  std::optional<double> reserved_capacity;
};

struct NodeGpuAllocation {
  int64_t limit = 0;             // node_gpu_limit: the Node's status.capacity
  int64_t request = 0;           // node_gpu_request: sum of the counted pods' requests
  int64_t usage_total = 0;       // node_gpu_usage_total: sum of the Running counted pods' limits
  double reserved_capacity = 0;  // node_gpu_reserved_capacity: request / limit * 100
  // node_gpu_unreserved_capacity and node_gpu_available_capacity: the agent declares both
  // (amazon-cloudwatch-agent PR #1814) but the code computing them (contrib PR #338) could not be
  // read, so these are our definitions, by analogy (docs/emf.md says so):
  double unreserved_capacity = 0;  // 100 - reserved_capacity (percent, like reserved_capacity)
  int64_t available_capacity = 0;  // limit - usage_total, at least 0 (GPUs no Running pod holds)
};

// Whether Container Insights counts `pod` at all (phase and the every-container-has-a-limit
// rule above).
inline bool CountsForGpuAllocation(const PodMeta& pod) {
  if (pod.phase == "Succeeded" || pod.phase == "Failed") return false;
  auto it = pod.gpu_resources.find(std::string(kGpuResourceName));
  if (it == pod.gpu_resources.end()) return pod.containers == 0;
  return it->second.containers_with_limit == pod.containers;
}

// The pod's fields; nullopt when the pod is not counted (it then has no pod_gpu_* fields).
// `node_capacity`: NodeInfo::gpu_capacity["nvidia.com/gpu"], nullopt when unknown.
inline std::optional<PodGpuAllocation> PodGpuAllocationOf(const PodMeta& pod,
                                                          std::optional<int64_t> node_capacity) {
  if (!CountsForGpuAllocation(pod)) return std::nullopt;
  PodGpuAllocation a;
  auto it = pod.gpu_resources.find(std::string(kGpuResourceName));
  if (it != pod.gpu_resources.end()) {
    a.request = it->second.requests;
    a.limit = it->second.limits;
  }
  if (pod.phase == "Running") a.usage_total = a.limit;
  if (node_capacity.has_value() && *node_capacity != 0) {
    a.reserved_capacity = static_cast<double>(a.limit) / static_cast<double>(*node_capacity) * 100;
  }
  return a;
}

// The node's fields over every pod of `pods` (by_uid; a static pod listed twice, under its
// mirror uid too, counts once); nullopt when the capacity is unknown or 0 (no node_gpu_*
// fields then, as the agent).
inline std::optional<NodeGpuAllocation> NodeGpuAllocationOf(const PodMetadata& pods,
                                                            std::optional<int64_t> node_capacity) {
  if (!node_capacity.has_value() || *node_capacity == 0) return std::nullopt;
  NodeGpuAllocation n;
  n.limit = *node_capacity;
  for (const auto& [uid, pod] : pods.by_uid) {
    if (uid != pod.uid) continue;  // the mirror-uid alias of a static pod
    std::optional<PodGpuAllocation> a = PodGpuAllocationOf(pod, std::nullopt);
    if (!a.has_value()) continue;
    n.request += a->request;
    n.usage_total += a->usage_total;
  }
  n.reserved_capacity = static_cast<double>(n.request) / static_cast<double>(n.limit) * 100;
  n.unreserved_capacity = 100 - n.reserved_capacity;
  n.available_capacity = n.limit > n.usage_total ? n.limit - n.usage_total : 0;
  return n;
}

// NodeInfo::gpu_capacity["nvidia.com/gpu"]; nullopt without a NodeInfo or without that name.
inline std::optional<int64_t> NodeGpuCapacity(const NodeInfo* node) {
  if (node == nullptr) return std::nullopt;
  auto it = node->gpu_capacity.find(std::string(kGpuResourceName));
  if (it == node->gpu_capacity.end()) return std::nullopt;
  return it->second;
}

// The node's GPU count for the allocation fields: the Node object's capacity (what the agent
// reads), else the kubelet's GetAllocatableResources answer (how many nvidia.com/gpu device ids
// the device plugin offers; with time-slicing, its replicas, as the capacity counts them). The
// fallback keeps node_gpu_* when the API server will not give this node (no `get` on nodes, a
// 404, no NODE_NAME) but the kubelet answers; it can be lower than the capacity while a device
// is unhealthy.
inline std::optional<int64_t> NodeGpuCapacity(const Attribution& a) {
  if (std::optional<int64_t> c = NodeGpuCapacity(a.node.get()); c.has_value()) return c;
  if (a.allocatable == nullptr) return std::nullopt;
  auto it = a.allocatable->device_ids_by_resource.find(std::string(kGpuResourceName));
  if (it == a.allocatable->device_ids_by_resource.end()) return std::nullopt;
  return static_cast<int64_t>(it->second.size());
}

}  // namespace nvmlx::model

#endif  // NVML_EXPORTER_MODEL_GPU_ALLOCATION_H_
