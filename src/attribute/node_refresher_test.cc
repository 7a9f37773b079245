// NodeRefresher (node_refresher.h): through a fake GET, what is published, that 403 / 404 /
// transport errors / bad JSON keep the last good NodeInfo and count "apiserver_node" errors, and
// the thread (a GET at start, then every period) on a fake clock; then once end to end over HTTPS
// against the fake API server of the integration tests (test/integration/fake_apiserver.py, skipped
// without python3 or openssl), including a 403 as an RBAC without nodes/get gives.
#include "attribute/node_refresher.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "test/fixtures/fake_apiserver.h"
#include "util/clock.h"

namespace nvmlx::attribute {
namespace {

std::string Fixture() { return fixtures::ApiServerTestdata("node_node1.json"); }

uint64_t ErrorsOf(const model::SourceErrors& errors) {
  for (const auto& [source, n] : errors.Counts()) {
    if (source == NodeRefresher::kSource) return n;
  }
  return ~uint64_t{0};  // not registered
}

// A scripted API server: each GET takes the next answer (the last one repeats).
struct Script {
  explicit Script(std::vector<Result<HttpResponse>> a) : answers(std::move(a)) {}
  std::vector<Result<HttpResponse>> answers;
  std::vector<std::string> targets;
  size_t next = 0;
  KubeGet Get() {
    return [this](const std::string& target, std::chrono::milliseconds) {
      targets.push_back(target);
      const size_t i = std::min(next++, answers.size() - 1);
      return answers[i];
    };
  }
};

NodeRefresherOptions Options(Script* script, model::SourceErrors* errors) {
  NodeRefresherOptions o;
  o.node_name = "node1";
  o.errors = errors;
  o.get = script->Get();
  return o;
}

TEST(NodeRefresherTest, PublishesTheNode) {
  model::SourceErrors errors;
  Script script{{HttpResponse{200, Fixture()}}};
  NodeRefresher r(Options(&script, &errors));
  EXPECT_EQ(ErrorsOf(errors), 0u);  // registered at zero
  EXPECT_EQ(r.Latest(), nullptr);
  ASSERT_TRUE(r.RefreshOnce());
  ASSERT_NE(r.Latest(), nullptr);
  EXPECT_EQ(r.Latest()->instance_id, "i-0123456789abcdef0");
  EXPECT_EQ(r.Latest()->instance_type, "p4d.24xlarge");
  EXPECT_EQ(r.Latest()->gpu_capacity.at("nvidia.com/gpu"), 8);
  EXPECT_EQ(script.targets, (std::vector<std::string>{"/api/v1/nodes/node1"}));
  EXPECT_EQ(NodeRefresher::Target("a b/c"), "/api/v1/nodes/a%20b%2Fc");
}

TEST(NodeRefresherTest, FailuresKeepTheLastGoodNodeAndCount) {
  model::SourceErrors errors;
  Script script{
      {HttpResponse{200, Fixture()}, HttpResponse{403, R"({"kind":"Status","reason":"Forbidden"})"},
       HttpResponse{404, R"({"kind":"Status","reason":"NotFound"})"},
       Result<HttpResponse>(Unavailable("connect: refused")), HttpResponse{200, "{not json"},
       HttpResponse{200, R"({"kind":"Pod"})"}, HttpResponse{200, Fixture()}}};
  NodeRefresher r(Options(&script, &errors));
  ASSERT_TRUE(r.RefreshOnce());
  const std::shared_ptr<const model::NodeInfo> good = r.Latest();
  for (int i = 1; i <= 5; ++i) {
    EXPECT_FALSE(r.RefreshOnce()) << i;
    EXPECT_EQ(r.Latest(), good) << i;  // the very same published object
    EXPECT_EQ(ErrorsOf(errors), static_cast<uint64_t>(i));
  }
  EXPECT_TRUE(r.RefreshOnce());  // recovers
  EXPECT_NE(r.Latest(), good);
  EXPECT_EQ(ErrorsOf(errors), 5u);
}

TEST(NodeRefresherTest, NothingPublishedBeforeTheFirstSuccess) {
  model::SourceErrors errors;
  Script script{{HttpResponse{403, "forbidden"}}};
  NodeRefresher r(Options(&script, &errors));
  EXPECT_FALSE(r.RefreshOnce());
  EXPECT_FALSE(r.RefreshOnce());
  EXPECT_EQ(r.Latest(), nullptr);
  EXPECT_EQ(ErrorsOf(errors), 2u);
}

TEST(NodeRefresherTest, RefreshesEveryPeriod) {
  util::FakeClock clock;
  model::SourceErrors errors;
  std::atomic<int> gets{0};
  NodeRefresherOptions o;
  o.node_name = "node1";
  o.errors = &errors;
  o.clock = &clock;
  o.period = std::chrono::seconds(60);
  o.get = [&gets](const std::string&, std::chrono::milliseconds) -> Result<HttpResponse> {
    ++gets;
    return HttpResponse{200, Fixture()};
  };
  NodeRefresher r(std::move(o));
  const auto await_gets = [&gets](int n) {
    for (int spin = 0; spin < 2000 && gets.load() < n; ++spin) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return gets.load();
  };
  r.Start();
  EXPECT_EQ(await_gets(1), 1);  // the first GET at once, the clock not moved
  for (int i = 2; i <= 4; ++i) {
    ASSERT_TRUE(clock.AwaitWaiters(1, std::chrono::seconds(10)));  // parked until the period
    EXPECT_EQ(gets.load(), i - 1);
    clock.Advance(std::chrono::seconds(60));
    EXPECT_EQ(await_gets(i), i);
  }
  r.Stop();
  EXPECT_NE(r.Latest(), nullptr);
}

TEST(NodeRefresherHttpsTest, AgainstTheFakeApiServer) {
  fixtures::FakeApiServer server;
  if (!server.ok()) GTEST_SKIP() << "python3 or openssl missing: no fake API server";
  model::SourceErrors errors;
  NodeRefresherOptions o;
  o.api = server.Config();
  o.node_name = "node1";
  o.errors = &errors;
  NodeRefresher r(std::move(o));
  EXPECT_FALSE(r.RefreshOnce());  // 404: no such node yet
  EXPECT_EQ(ErrorsOf(errors), 1u);
  server.ServeNode("node1", Fixture());
  ASSERT_TRUE(r.RefreshOnce());
  ASSERT_NE(r.Latest(), nullptr);
  EXPECT_EQ(r.Latest()->instance_id, "i-0123456789abcdef0");
  const auto good = r.Latest();
  server.SetMode("403");  // the ClusterRole lost get on nodes
  EXPECT_FALSE(r.RefreshOnce());
  EXPECT_EQ(r.Latest(), good);
  EXPECT_EQ(ErrorsOf(errors), 2u);
  server.SetMode("ok");
  EXPECT_TRUE(r.RefreshOnce());
}

}  // namespace
}  // namespace nvmlx::attribute
