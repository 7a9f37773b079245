// The Node object (node_json.h): the fixture, provider ids of every form, the beta instance
// type label, GPU resources only, and bad input with a clear error.
#include "attribute/node_json.h"

#include <gtest/gtest.h>

#include <string>

#include "test/fixtures/fake_apiserver.h"

namespace nvmlx::attribute {
namespace {

TEST(InstanceIdFromProviderIdTest, AwsForms) {
  EXPECT_EQ(InstanceIdFromProviderId("aws:///us-west-2a/i-0123456789abcdef0"),
            "i-0123456789abcdef0");
  EXPECT_EQ(InstanceIdFromProviderId("aws:///us-east-1b/i-0abc1234"), "i-0abc1234");
  // Not an EC2 instance, or not AWS's form: no instance id.
  EXPECT_EQ(InstanceIdFromProviderId("aws:///us-east-1a/fargate-ip-10-0-1-2.ec2.internal"), "");
  EXPECT_EQ(InstanceIdFromProviderId("aws:///i-0123456789abcdef0"), "");   // no zone
  EXPECT_EQ(InstanceIdFromProviderId("aws:////i-0123456789abcdef0"), "");  // empty zone
  EXPECT_EQ(InstanceIdFromProviderId("aws:///us-west-2a/"), "");
  EXPECT_EQ(InstanceIdFromProviderId("aws:///us-west-2a/i-"), "");
  EXPECT_EQ(InstanceIdFromProviderId("aws:///us-west-2a/i-0123/x"), "");
  EXPECT_EQ(InstanceIdFromProviderId("aws:///us-west-2a/i-0123ABCD"), "");
  EXPECT_EQ(InstanceIdFromProviderId("gce://project/us-central1-a/vm-1"), "");
  EXPECT_EQ(InstanceIdFromProviderId("kind://docker/kind/kind-worker"), "");
  EXPECT_EQ(InstanceIdFromProviderId(""), "");
}

TEST(ParseNodeTest, TheFixture) {
  auto node = ParseNode(fixtures::ApiServerTestdata("node_node1.json"), "fixture");
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  EXPECT_EQ(node->node_name, "node1");
  EXPECT_EQ(node->instance_id, "i-0123456789abcdef0");
  EXPECT_EQ(node->instance_type, "p4d.24xlarge");
  // GPU names only (no cpu, memory, pods), a zero MIG capacity kept as 0.
  EXPECT_EQ(node->gpu_capacity,
            (std::map<std::string, int64_t>{{"nvidia.com/gpu", 8}, {"nvidia.com/mig-1g.10gb", 0}}));
  EXPECT_EQ(node->gpu_allocatable, (std::map<std::string, int64_t>{{"nvidia.com/gpu", 7}}));
}

TEST(ParseNodeTest, BetaLabelAndMissingParts) {
  auto node = ParseNode(
      R"({"kind":"Node","metadata":{"name":"n","labels":{"beta.kubernetes.io/instance-type":)"
      R"("g5.xlarge"}},"spec":{"providerID":"kind://docker/k/w"},"status":{"capacity":)"
      R"({"nvidia.com/gpu":7,"nvidia.com/mig-2g.20gb":"-1","nvidia.com/mig-3g.40gb":"x"}}})",
      "test");
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  EXPECT_EQ(node->instance_type, "g5.xlarge");
  EXPECT_EQ(node->instance_id, "");
  EXPECT_TRUE(node->gpu_capacity.empty());  // a number, a negative and a non-quantity: skipped
  EXPECT_TRUE(node->gpu_allocatable.empty());

  auto bare = ParseNode(R"({"kind":"Node","metadata":{"name":"n"}})", "test");
  ASSERT_TRUE(bare.ok()) << bare.status().ToString();
  EXPECT_EQ(bare->instance_type, "");
}

TEST(ParseNodeTest, RejectsBadInputWithAClearError) {
  struct Case {
    const char* body;
    const char* want;
  } cases[] = {
      {"{not json", "GET /api/v1/nodes/n1: invalid JSON"},
      {"[]", "GET /api/v1/nodes/n1: expected a JSON object"},
      {R"({"kind":"Status","code":404})", "expected kind Node, got \"Status\""},
      {R"({"kind":"Node","metadata":{}})", "no metadata.name"},
      {R"({"kind":"Node","metadata":7})", "no metadata.name"},
  };
  for (const Case& c : cases) {
    auto r = ParseNode(c.body, "GET /api/v1/nodes/n1");
    ASSERT_FALSE(r.ok()) << c.body;
    EXPECT_NE(r.status().message().find(c.want), std::string::npos)
        << c.body << " -> " << r.status().message();
  }
}

}  // namespace
}  // namespace nvmlx::attribute
