// Attribution: who uses each GPU (Kubernetes pods, their processes, HPC jobs, the containers of a
// Docker-compatible engine), as plain data.
//
// The attribution sources (attribute/) produce the parts, the collector attaches them to each
// Snapshot, the renderers (render/) read them; those stages know this header, not each other.
// Each source has its own background refresher (never on the scrape path) that publishes an
// immutable part; an Attribution bundles the latest part of every source. The renderers join the
// parts with the snapshot's devices and processes. A part is null when its source is disabled or
// has never succeeded; a source that fails later keeps its last good part (see the refresher of
// each source).
//
// Keys: a device is named by its "device key": the GPU's UUID ("GPU-…") for a whole GPU, the
// MIG device UUID ("MIG-…") for a MIG instance (model::DeviceIdentity::DeviceKey()).
//
// Thread-safety: every part is immutable once published and shared as shared_ptr<const T>;
// any number of threads may read it.
#ifndef NVML_EXPORTER_MODEL_ATTRIBUTION_H_
#define NVML_EXPORTER_MODEL_ATTRIBUTION_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace nvmlx::model {

// A device allocated to a container through Dynamic Resource Allocation (resource.k8s.io), as
// the kubelet names it (claim, driver, pool, device) plus, for a MIG device, what the driver's
// ResourceSlice says of it. The renderer prints these as dcgm-exporter's dra_* attributes.
struct DraAllocation {
  std::string claim_name;
  std::string claim_namespace;
  std::string driver;
  std::string pool;
  std::string device;
  std::string mig_profile;      // empty for a whole GPU
  std::string mig_device_uuid;  // empty for a whole GPU
};

// A container of a pod that holds a device (from the kubelet) or runs a process on it.
struct PodRef {
  std::string namespace_name;
  std::string pod;
  std::string container;
  // The sharing replica for time-sliced / virtual GPUs ("3" of "GPU-…::3", "/vgpu3", GKE
  // "nvidia0/gi0/vgpu3"), empty when the pod holds the device exclusively.
  std::string vgpu;
  // Set when the container holds the device through a DRA claim (--kubernetes-enable-dra), not
  // through the device plugin.
  std::optional<DraAllocation> dra = std::nullopt;
};

// From the kubelet pod-resources API: device key -> containers holding it (several when the
// device is shared by time-slicing or MPS).
struct DeviceAttribution {
  std::unordered_map<std::string, std::vector<PodRef>> pods_by_device;
};

// One GPU resource name's requests and limits over a pod's spec.containers.
// Why the counts as well as the sums: CloudWatch Container Insights counts a pod's GPU limit
// only when every container of spec.containers sets one (and a negative quantity counts as
// unset), so the sums alone cannot tell a fully limited pod from one with an unlimited sidecar.
struct GpuResourceAmount {
  int64_t requests = 0;             // sum of resources.requests[name], each rounded up
  int64_t limits = 0;               // sum of resources.limits[name], each rounded up
  int containers_with_request = 0;  // of spec.containers
  int containers_with_limit = 0;
};

// From the Kubernetes API server (pods on this node): uid, labels and container ids, and what
// the pod asks of the GPUs (for --emf-schema container-insights: model/gpu_allocation.h).
struct PodMeta {
  std::string namespace_name;
  std::string pod;
  std::string uid;
  // Sanitised label names (as dcgm-exporter does) and values, sorted by name; only the
  // labels the allowlist admits.
  std::vector<std::pair<std::string, std::string>> labels;
  // Container id (64 hex, runtime prefix stripped) -> container name.
  std::unordered_map<std::string, std::string> container_names;

  // The GPU allocation part. Each member has a default initializer so that a PodMeta
  // brace-initialised with the members above only (as tests do) stays free of
  // -Wmissing-field-initializers.
  // status.phase ("Pending", "Running", "Succeeded", "Failed", "Unknown"; empty when absent):
  // Container Insights leaves Succeeded and Failed pods out of GPU allocation and counts a pod's
  // GPUs as in use only while it is Running.
  std::string phase{};
  // How many spec.containers the pod has (see GpuResourceAmount for why).
  int containers = 0;
  // GPU resource name ("nvidia.com/gpu", "nvidia.com/mig-1g.10gb", ...) -> its amounts over
  // spec.containers, only for names some container requests or limits. Init containers are not
  // summed (the Container Insights agent sums spec.containers only; docs/emf.md "Container
  // Insights: allocation counts and node identity (sources)"), and MIG profiles stay apart
  // because one MIG slice is not one GPU.
  std::map<std::string, GpuResourceAmount> gpu_resources{};
  // metadata.ownerReferences' controller (else the first owner): Container Insights names a
  // pod's workload by it (PodName: a ReplicaSet's Deployment, a Job's CronJob). Empty for a
  // bare pod.
  std::string owner_kind{};
  std::string owner_name{};
};
struct PodMetadata {
  std::unordered_map<std::string, PodMeta> by_uid;
  // "namespace/pod" -> uid, to join kubelet answers (which carry no uid) with labels.
  std::unordered_map<std::string, std::string> uid_by_name;
};

// From /proc/<pid>/cgroup: the pod uid and container id of each GPU process.
struct ProcessOwner {
  std::string pod_uid;       // with dashes, lower case
  std::string container_id;  // 64 hex
};
struct ProcessAttribution {
  std::unordered_map<unsigned, ProcessOwner> by_pid;  // host PIDs
};

// From --hpc-job-mapping-dir: device key -> job ids.
struct HpcJobs {
  std::unordered_map<std::string, std::vector<std::string>> jobs_by_device;
};

// From --container-labels (a Docker-compatible engine's API, without -k): device key -> the
// `container` label values (sanitised names) of the running containers given that device, oldest
// first (the engine's list order among equals), each once, at most
// attribute::kMaxContainerLabelsPerDevice per device. A container given a whole GPU is listed on
// that GPU's MIG instances too, as dcgm-exporter matches a MIG instance's series by its GPU's
// UUID as well.
struct RuntimeContainers {
  std::unordered_map<std::string, std::vector<std::string>> names_by_device;
  // (container, device) pairs left out by the per-device cap at this refresh.
  size_t dropped = 0;
};

// This node as the Kubernetes API server describes it (GET /api/v1/nodes/$NODE_NAME), for the
// identity and capacity dimensions of --emf-schema container-insights.
struct NodeInfo {
  std::string node_name;
  // From spec.providerID "aws:///<zone>/<instance-id>"; empty on any other provider.
  std::string instance_id;
  // Label node.kubernetes.io/instance-type (else the deprecated beta.kubernetes.io/…); empty
  // when neither is set.
  std::string instance_type;
  // status.capacity and status.allocatable, GPU resource names only (nvidia.com/gpu and
  // nvidia.com/mig-*), each rounded up to an integer. Container Insights' node_gpu_limit is
  // status.capacity["nvidia.com/gpu"].
  std::map<std::string, int64_t> gpu_capacity;
  std::map<std::string, int64_t> gpu_allocatable;
};

// From the kubelet pod-resources API GetAllocatableResources: the device ids the device plugins
// offer this node, by resource name (GPU resource names only). What the kubelet itself can
// allocate, with no API server in between; null when the kubelet lacks the call (older than
// 1.23, or its KubeletPodResourcesGetAllocatable gate off).
struct AllocatableDevices {
  std::map<std::string, std::vector<std::string>> device_ids_by_resource;
};

struct Attribution {
  std::shared_ptr<const DeviceAttribution> devices;
  std::shared_ptr<const PodMetadata> metadata;
  std::shared_ptr<const ProcessAttribution> processes;
  std::shared_ptr<const HpcJobs> hpc;
  std::shared_ptr<const RuntimeContainers> containers;
  std::shared_ptr<const NodeInfo> node;                   // --emf-schema container-insights only
  std::shared_ptr<const AllocatableDevices> allocatable;  // likewise, with -k
};

// The uid of a kubelet-attributed pod, joined through the API server's metadata; null when that
// part is absent or does not know the pod (yet).
inline const std::string* FindPodUid(const Attribution& attribution, const PodRef& pod) {
  if (attribution.metadata == nullptr) return nullptr;
  const auto& by_name = attribution.metadata->uid_by_name;
  auto it = by_name.find(pod.namespace_name + "/" + pod.pod);
  return it == by_name.end() ? nullptr : &it->second;
}

}  // namespace nvmlx::model

#endif  // NVML_EXPORTER_MODEL_ATTRIBUTION_H_
