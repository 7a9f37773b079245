// A checker of CloudWatch Container Insights' GPU events (docs/emf.md §7), written from what the
// CloudWatch agent publishes for EKS (its metric declarations, units, kept labels and event
// members), not from our renderer: every test of --emf-schema container-insights applies it,
// after ValidateEmf (the EMF specification itself).
//
// Checks: log group /aws/containerinsights/<cluster>/performance; one directive in namespace
// ContainerInsights; Type one of ContainerGPU, PodGPU, NodeGPU, Pod, Node, Version "0", Timestamp
// the _aws Timestamp as a string, ClusterName the cluster, NodeName present, InstanceId present
// when the node's identity is known; each metric a name of its Type with the agent's unit; the
// declared dimension sets exactly the agent's sets for the Type whose keys the event has; the
// members the Type's level keeps and no others; Sources an array and `kubernetes` an object whose
// host is NodeName on the GPU types; percent values within 0..100 and memory used <= total.
//
// Pure functions: thread-safe.
#ifndef NVML_EXPORTER_TEST_EMF_CI_SCHEMA_VALIDATOR_H_
#define NVML_EXPORTER_TEST_EMF_CI_SCHEMA_VALIDATOR_H_

#include <string>
#include <string_view>
#include <vector>

namespace nvmlx::testing {

struct CiSchemaOptions {
  std::string cluster_name;
  bool instance_known = true;  // InstanceId and InstanceType must be members
};

// Every problem found (empty: valid). The document must already be valid EMF.
std::vector<std::string> ValidateContainerInsights(std::string_view document,
                                                   const CiSchemaOptions& options);

}  // namespace nvmlx::testing

#endif  // NVML_EXPORTER_TEST_EMF_CI_SCHEMA_VALIDATOR_H_
