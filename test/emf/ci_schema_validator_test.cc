// The Container Insights checker must reject each way an event can leave the agent's schema;
// otherwise the renderer tests that rely on it prove nothing.
#include "ci_schema_validator.h"

#include <gtest/gtest.h>

#include <string>

namespace nvmlx::testing {
namespace {

// A node-level GPU event as the agent publishes it (values invented).
constexpr const char* kNode =
    R"({"_aws":{"Timestamp":1700000000000,"LogGroupName":"/aws/containerinsights/c1/performance",)"
    R"("CloudWatchMetrics":[{"Namespace":"ContainerInsights","Dimensions":[["ClusterName"],)"
    R"(["ClusterName","InstanceId","NodeName"],)"
    R"(["ClusterName","GpuDevice","InstanceId","InstanceType","NodeName"]],)"
    R"("Metrics":[{"Name":"node_gpu_utilization","Unit":"Percent"},)"
    R"({"Name":"node_gpu_memory_used","Unit":"Bytes"},{"Name":"node_gpu_memory_total","Unit":"Bytes"}]}]},)"
    R"("ClusterName":"c1","GpuDevice":"nvidia0","InstanceId":"i-1","InstanceType":"g5.xlarge",)"
    R"("NodeName":"n1","Sources":["dcgm","pod","calculated"],"Timestamp":"1700000000000",)"
    R"("Type":"NodeGPU","Version":"0","kubernetes":{"host":"n1"},)"
    R"("node_gpu_utilization":42,"node_gpu_memory_used":1048576,"node_gpu_memory_total":2097152})";

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

TEST(CiSchemaValidatorTest, AcceptsTheAgentsNodeEvent) {
  EXPECT_EQ(ValidateContainerInsights(kNode, {"c1", true}), std::vector<std::string>{});
}

TEST(CiSchemaValidatorTest, RejectsEachDeparture) {
  const std::string g = kNode;
  struct Case {
    std::string doc, expect;
  };
  const Case cases[] = {
      {Replace(g, "/performance", "/prometheus"), "log group"},
      {Replace(g, R"("Namespace":"ContainerInsights")", R"("Namespace":"CI")"), "namespace"},
      {Replace(g, R"("Type":"NodeGPU")", R"("Type":"GPU")"), "unknown Type"},
      {Replace(g, R"("Version":"0")", R"("Version":"1")"), "Version"},
      {Replace(g, R"("Timestamp":"1700000000000")", R"("Timestamp":"1")"), "Timestamp"},
      {Replace(g, R"("ClusterName":"c1")", R"("ClusterName":"c2")"), "ClusterName"},
      {Replace(g, R"("InstanceId":"i-1",)", ""), "without InstanceId"},
      {Replace(g, R"("Unit":"Bytes"})", R"("Unit":"Megabytes"})"), "the agent's is Bytes"},
      {Replace(g, R"("node_gpu_utilization","Unit")", R"("gpu_util","Unit")"),
       "does not publish there"},
      {Replace(g, R"(["ClusterName","InstanceId","NodeName"],)", ""), "dimension sets"},
      {Replace(g, R"([["ClusterName"],)", R"([["ClusterName"],["NodeName"],)"), "dimension sets"},
      {Replace(g, R"("GpuDevice":"nvidia0",)", R"("GpuDevice":"nvidia0","modelName":"A10G",)"),
       "member the agent drops: modelName"},
      {Replace(g, R"("Sources":["dcgm","pod","calculated"])", R"("Sources":"dcgm")"), "Sources"},
      {Replace(g, R"({"host":"n1"})", R"({"host":"n2"})"), "kubernetes"},
      {Replace(g, R"("node_gpu_utilization":42)", R"("node_gpu_utilization":142)"), "0..100"},
      {Replace(g, R"("node_gpu_memory_used":1048576)", R"("node_gpu_memory_used":4194304)"),
       "above"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> errors = ValidateContainerInsights(c.doc, {"c1", true});
    bool found = false;
    for (const auto& e : errors) found = found || e.find(c.expect) != std::string::npos;
    EXPECT_TRUE(found) << "expected \"" << c.expect << "\" for " << c.doc;
  }
}

}  // namespace
}  // namespace nvmlx::testing
