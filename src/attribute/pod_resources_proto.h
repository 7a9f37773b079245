// The kubelet's pod-resources v1 List and GetAllocatableResources answers (protobuf) -> the plain
// structs of pod_resources.h.
// Part of the kubelet plugin (kubelet_plugin.h), with the fuzz target and the tests that build
// answers as protobuf messages; the daemon itself never includes protobuf.
//
// Thread-safety: a pure function.
#ifndef NVML_EXPORTER_ATTRIBUTE_POD_RESOURCES_PROTO_H_
#define NVML_EXPORTER_ATTRIBUTE_POD_RESOURCES_PROTO_H_

#include "attribute/pod_resources.h"
#include "attribute/pod_resources.pb.h"

namespace nvmlx::attribute {

// The parts of the answer attribution reads.
KubeletPodList FromProto(const v1::ListPodResourcesResponse& answer);
// GetAllocatableResources' answer: its device-plugin devices.
KubeletAllocatable FromProto(const v1::AllocatableResourcesResponse& answer);

}  // namespace nvmlx::attribute

#endif  // NVML_EXPORTER_ATTRIBUTE_POD_RESOURCES_PROTO_H_
