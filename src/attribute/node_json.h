// The Kubernetes API server's Node object (GET /api/v1/nodes/<name>), reduced to what
// --emf-schema container-insights needs: model::NodeInfo (attribution.h) - the EC2 instance id
// from spec.providerID, the instance type label, and the GPU resources of status.capacity and
// status.allocatable.
//
// Thread-safety: pure functions. nlohmann exceptions are caught here; errors are Status values
// naming what was wrong.
#ifndef NVML_EXPORTER_ATTRIBUTE_NODE_JSON_H_
#define NVML_EXPORTER_ATTRIBUTE_NODE_JSON_H_

#include <string>
#include <string_view>

#include "model/attribution.h"
#include "util/status.h"

namespace nvmlx::attribute {

// "aws:///<zone>/<instance-id>" (the AWS cloud provider's spec.providerID) -> "<instance-id>";
// empty for any other form: another provider, a missing zone, or an id that is not an EC2
// instance's ("i-" and lower-case hex; EKS Fargate and hybrid nodes name other things there,
// and the InstanceId dimension must not carry them).
std::string InstanceIdFromProviderId(std::string_view provider_id);

// A Node object as JSON -> NodeInfo. `where` names the source in errors ("GET
// /api/v1/nodes/node1"). Errors: not JSON, not an object of kind Node, no metadata.name. A
// provider id of another form gives an empty instance_id (logged at debug level), not an error.
Result<model::NodeInfo> ParseNode(std::string_view body, const std::string& where);

}  // namespace nvmlx::attribute

#endif  // NVML_EXPORTER_ATTRIBUTE_NODE_JSON_H_
