#include "attribute/pod_resources_proto.h"

namespace nvmlx::attribute {

KubeletPodList FromProto(const v1::ListPodResourcesResponse& answer) {
  KubeletPodList out;
  out.pods.reserve(answer.pod_resources_size());
  for (const v1::PodResources& pod : answer.pod_resources()) {
    KubeletPod& p = out.pods.emplace_back();
    p.name = pod.name();
    p.namespace_name = pod.namespace_();
    p.containers.reserve(pod.containers_size());
    for (const v1::ContainerResources& container : pod.containers()) {
      KubeletContainer& c = p.containers.emplace_back();
      c.name = container.name();
      for (const v1::ContainerDevices& devices : container.devices()) {
        c.devices.push_back(
            {devices.resource_name(), {devices.device_ids().begin(), devices.device_ids().end()}});
      }
      for (const v1::DynamicResource& claim : container.dynamic_resources()) {
        KubeletClaim& k = c.dynamic_resources.emplace_back();
        k.claim_name = claim.claim_name();
        k.claim_namespace = claim.claim_namespace();
        for (const v1::ClaimResource& res : claim.claim_resources()) {
          k.claim_resources.push_back({res.driver_name(), res.pool_name(), res.device_name()});
        }
      }
    }
  }
  return out;
}

KubeletAllocatable FromProto(const v1::AllocatableResourcesResponse& answer) {
  KubeletAllocatable out;
  out.devices.reserve(answer.devices_size());
  for (const v1::ContainerDevices& devices : answer.devices()) {
    out.devices.push_back(
        {devices.resource_name(), {devices.device_ids().begin(), devices.device_ids().end()}});
  }
  return out;
}

}  // namespace nvmlx::attribute
