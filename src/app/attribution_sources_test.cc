// AttributionSources with Options::EmfContainerInsights() (what --emf-schema container-insights
// sets): without an API server it goes on with nothing to attach; with one (the integration
// tests' fake API server over HTTPS) the pod watcher runs without any pod label or uid flag and
// the Node refresher publishes this node, so that Container Insights' GPU counts can be computed
// from Latest(); without NODE_NAME there is no Node to ask.
#include "app/attribution_sources.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "model/gpu_allocation.h"
#include "test/fixtures/fake_apiserver.h"

namespace nvmlx::app {
namespace {

std::optional<std::string> NoEnv(std::string_view) { return std::nullopt; }

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(NVMLX_SOURCE_DIR) + "/testdata/apiserver/" + name);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool HasSource(const model::SourceErrors& errors, std::string_view source) {
  for (const auto& [name, n] : errors.Counts()) {
    if (name == source) return true;
  }
  return false;
}

// Polls Latest() until `done` holds (10 s at most).
template <typename Pred>
model::Attribution AwaitLatest(const AttributionSources& s, Pred done) {
  model::Attribution a = s.Latest();
  for (int i = 0; i < 500 && !done(a); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    a = s.Latest();
  }
  return a;
}

TEST(AttributionSourcesTest, ContainerInsightsWithoutAnApiServerAttachesNothing) {
  config::Options o;
  o.emf.outputs = {"stdout"};
  o.emf.schema = config::Options::Emf::Schema::kContainerInsights;
  o.node_name = "node1";
  auto s = AttributionSources::Create(o, NoEnv);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE((*s)->enabled());
  EXPECT_FALSE((*s)->process_metrics());
  (*s)->Start();
  const model::Attribution a = (*s)->Latest();
  EXPECT_EQ(a.metadata, nullptr);
  EXPECT_EQ(a.node, nullptr);
  EXPECT_FALSE(HasSource(*(*s)->errors(), "apiserver_node"));
  // The per-pod rendering still follows the dcgm-exporter flags only.
  EXPECT_FALSE((*s)->PodRenderOptions().enabled);
}

TEST(AttributionSourcesTest, OffWithoutAnyFlag) {
  auto s = AttributionSources::Create(config::Options{}, NoEnv);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_FALSE((*s)->enabled());
}

TEST(AttributionSourcesTest, ContainerInsightsStartsThePodWatcherAndTheNodeRefresher) {
  fixtures::FakeApiServer server("pods_gpu_node1.json");
  if (!server.ok()) GTEST_SKIP() << "python3 or openssl missing: no fake API server";
  server.ServeNode("node1", Fixture("node_node1.json"));
  config::Options o;
  // and no pod label, pod uid or process flag
  o.emf.outputs = {"stdout"};
  o.emf.schema = config::Options::Emf::Schema::kContainerInsights;
  o.node_name = "node1";
  o.kubernetes_api_server = server.Url();
  o.kubernetes_token_file = server.Config().token_file;
  o.kubernetes_ca_file = server.Config().ca_file;
  auto s = AttributionSources::Create(o, NoEnv);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE(HasSource(*(*s)->errors(), "apiserver"));
  EXPECT_TRUE(HasSource(*(*s)->errors(), "apiserver_node"));
  (*s)->Start();
  const model::Attribution a = AwaitLatest(
      **s, [](const model::Attribution& x) { return x.metadata != nullptr && x.node != nullptr; });
  (*s)->Stop();
  ASSERT_NE(a.metadata, nullptr);
  ASSERT_NE(a.node, nullptr);
  EXPECT_EQ(a.node->instance_id, "i-0123456789abcdef0");
  EXPECT_EQ(a.node->instance_type, "p4d.24xlarge");
  EXPECT_TRUE(a.metadata->by_uid.at("aaaaaaaa-0000-0000-0000-000000000001").labels.empty());
  // The numbers the renderer computes from these parts (gpu_allocation_test has the rules).
  auto node = model::NodeGpuAllocationOf(*a.metadata, model::NodeGpuCapacity(a.node.get()));
  ASSERT_TRUE(node.has_value());
  EXPECT_EQ(node->limit, 8);
  EXPECT_EQ(node->request, 3);
  EXPECT_EQ(node->usage_total, 2);
}

TEST(AttributionSourcesTest, ContainerInsightsWithoutNodeNameHasNoNode) {
  fixtures::FakeApiServer server("pods_gpu_node1.json");
  if (!server.ok()) GTEST_SKIP() << "python3 or openssl missing: no fake API server";
  config::Options o;
  o.emf.outputs = {"stdout"};
  o.emf.schema = config::Options::Emf::Schema::kContainerInsights;
  o.kubernetes_api_server = server.Url();
  o.kubernetes_token_file = server.Config().token_file;
  o.kubernetes_ca_file = server.Config().ca_file;
  auto s = AttributionSources::Create(o, NoEnv);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_FALSE(HasSource(*(*s)->errors(), "apiserver_node"));  // no refresher at all
  (*s)->Start();
  const model::Attribution a =
      AwaitLatest(**s, [](const model::Attribution& x) { return x.metadata != nullptr; });
  (*s)->Stop();
  ASSERT_NE(a.metadata, nullptr);  // the pods of every node, as without NODE_NAME before
  EXPECT_EQ(a.node, nullptr);
}

}  // namespace
}  // namespace nvmlx::app
