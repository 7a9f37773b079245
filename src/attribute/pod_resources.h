// The kubelet's pod-resources v1 List answer as plain structs, and the interface that fetches
// it. Only the parts attribution reads are kept (pods, containers, device-plugin devices, DRA
// claims; no CPU ids, memory or topology).
//
// Why plain structs and not the protobuf messages: the gRPC client and protobuf cost ~7 MiB of
// resident memory once linked (their libraries' pages and static initialisers, abseil, upb), so
// they live in a plugin, libnvmlx_kubelet.so (kubelet_client.h, kubelet_plugin.h), loaded only
// with -k. Everything that stays in the daemon (PodMatcher, PodResourcesRefresher) sees these
// types only. The plugin and the daemon are built from one tree with one compiler, so the C++
// types cross the boundary as they are (kubelet_plugin.h checks the build matches).
//
// Thread-safety: plain values; PodResourcesLister implementations say their own.
#ifndef NVML_EXPORTER_ATTRIBUTE_POD_RESOURCES_H_
#define NVML_EXPORTER_ATTRIBUTE_POD_RESOURCES_H_

#include <chrono>
#include <string>
#include <vector>

#include "util/status.h"

namespace nvmlx::attribute {

// v1.ContainerDevices: device-plugin devices of one resource.
struct KubeletDevices {
  std::string resource_name;
  std::vector<std::string> device_ids;
};

// v1.ClaimResource: one device of a DRA claim.
struct KubeletClaimResource {
  std::string driver_name;
  std::string pool_name;
  std::string device_name;
};

// v1.DynamicResource: one DRA claim of a container.
struct KubeletClaim {
  std::string claim_name;
  std::string claim_namespace;
  std::vector<KubeletClaimResource> claim_resources;
};

// v1.ContainerResources.
struct KubeletContainer {
  std::string name;
  std::vector<KubeletDevices> devices;
  std::vector<KubeletClaim> dynamic_resources;
};

// v1.PodResources.
struct KubeletPod {
  std::string name;
  std::string namespace_name;
  std::vector<KubeletContainer> containers;
};

// v1.ListPodResourcesResponse.
struct KubeletPodList {
  std::vector<KubeletPod> pods;
};

// v1.AllocatableResourcesResponse: the devices the device plugins offer this node (no CPU ids,
// memory or topology).
struct KubeletAllocatable {
  std::vector<KubeletDevices> devices;
};

struct KubeletClientOptions {
  std::string socket_path = "/var/lib/kubelet/pod-resources/kubelet.sock";
  std::chrono::milliseconds deadline{10000};
  int max_receive_bytes = 64 << 20;
};

// Lists the pod resources of this node. The refresher calls it from one thread at a time.
class PodResourcesLister {
 public:
  virtual ~PodResourcesLister() = default;
  // NOT_FOUND: no socket; UNAVAILABLE: refused, deadline exceeded or the kubelet went away;
  // INTERNAL: any other error (the message names the gRPC status code).
  virtual Result<KubeletPodList> List() = 0;
  // GetAllocatableResources: errors as List(), and NOT_SUPPORTED when the kubelet does not
  // serve the call (gRPC UNIMPLEMENTED: a kubelet before 1.23, or its
  // KubeletPodResourcesGetAllocatable feature gate off). This default is that answer, for
  // listers that have no such call.
  virtual Result<KubeletAllocatable> GetAllocatable() {
    return NotSupported("GetAllocatableResources is not implemented by this lister");
  }
};

}  // namespace nvmlx::attribute

#endif  // NVML_EXPORTER_ATTRIBUTE_POD_RESOURCES_H_
