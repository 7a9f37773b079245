// The kubelet plugin loader (kubelet_plugin.h), against the real libnvmlx_kubelet.so of this
// build. This binary links no protobuf, as the daemon: the plugin brings its own. The plugin
// with a real kubelet is exercised by the daemon's integration tests (test/integration/).
#include "attribute/kubelet_plugin.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

namespace nvmlx::attribute {
namespace {

using ::testing::HasSubstr;

TEST(KubeletPluginTest, LoadsThePluginAndItsClientAnswers) {
  KubeletClientOptions o;
  o.socket_path = "/nonexistent/kubelet.sock";
  Result<std::unique_ptr<PodResourcesLister>> client = LoadKubeletClient(o, NVMLX_KUBELET_PLUGIN);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  // A client built by the plugin: no socket, so NOT_FOUND without a gRPC call.
  Result<KubeletPodList> r = (*client)->List();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr("/nonexistent/kubelet.sock: no such file"));
  // Loading again reuses the loaded plugin.
  EXPECT_TRUE(LoadKubeletClient(o, NVMLX_KUBELET_PLUGIN).ok());
}

TEST(KubeletPluginTest, MissingPluginIsAConfigurationErrorNamingThePath) {
  Result<std::unique_ptr<PodResourcesLister>> client =
      LoadKubeletClient({}, "/nonexistent/libnvmlx_kubelet.so");
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(client.status().message(), HasSubstr("/nonexistent/libnvmlx_kubelet.so"));
}

TEST(KubeletPluginTest, NoPluginBesideTheBinaryNamesWhereItLooked) {
  // This test binary's folder has no lib/libnvmlx_kubelet.so, nor ../lib/nvml-exporter/.
  std::vector<std::string> candidates = KubeletPluginCandidates();
  ASSERT_EQ(candidates.size(), 2u);
  for (const std::string& c : candidates) ASSERT_NE(access(c.c_str(), F_OK), 0) << c;
  Result<std::unique_ptr<PodResourcesLister>> client = LoadKubeletClient({});
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(client.status().message(), HasSubstr("-k needs the kubelet plugin"));
  EXPECT_THAT(client.status().message(), HasSubstr(candidates[0]));
  EXPECT_THAT(client.status().message(), HasSubstr(candidates[1]));
}

TEST(KubeletPluginTest, ALibraryThatIsNoPluginIsRefused) {
  Result<std::unique_ptr<PodResourcesLister>> client = LoadKubeletClient({}, NVMLX_SIMGPU_LIBRARY);
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(client.status().message(), HasSubstr("not an nvml-exporter kubelet plugin"));
}

}  // namespace
}  // namespace nvmlx::attribute
