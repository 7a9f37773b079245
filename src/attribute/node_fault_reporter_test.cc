// NodeFaultReporter against a recorded API server (the KubeCall seam): what it writes, when, and
// how a refusing server degrades it. The real HTTPS path and the API server's own patch semantics
// are test/integration/node_conditions_test.sh's.
#include "attribute/node_fault_reporter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "util/log.h"

namespace nvmlx::attribute {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;
using std::chrono::seconds;

const WallTime kT0 = std::chrono::system_clock::from_time_t(1796000000);

class NodeFaultReporterTest : public ::testing::Test {
 protected:
  NodeFaultReporterTest() {
    static bool log_ready = [] {
      log::Init(log::Format::kText, false);
      return true;
    }();
    (void)log_ready;
    ids_->push_back({});
    (*ids_)[0].index = 0;
    (*ids_)[0].uuid = "GPU-0";
  }
  std::unique_ptr<NodeFaultReporter> Make() {
    NodeFaultReporterOptions o;
    o.node_name = "node-1";
    o.call = [this](const KubeApiCall& call, std::chrono::milliseconds) -> Result<HttpResponse> {
      calls_.push_back(call);
      if (call.method == "GET") return HttpResponse{get_status_, node_};
      return HttpResponse{write_status_, "{}"};
    };
    o.now = [this] { return now_; };
    return std::make_unique<NodeFaultReporter>(std::move(o));
  }
  std::shared_ptr<const model::Snapshot> Snap(std::vector<model::XidCount> xids) {
    auto s = std::make_shared<model::Snapshot>();
    s->identities = ids_;
    s->devices.resize(1);
    s->devices[0].identity = &(*ids_)[0];
    s->devices[0].fault_xids = std::move(xids);
    return s;
  }
  std::vector<KubeApiCall> Take(const std::string& method) {
    std::vector<KubeApiCall> out;
    for (const KubeApiCall& c : calls_) {
      if (c.method == method) out.push_back(c);
    }
    calls_.clear();
    return out;
  }

  std::shared_ptr<std::vector<model::DeviceIdentity>> ids_ =
      std::make_shared<std::vector<model::DeviceIdentity>>();
  std::vector<KubeApiCall> calls_;
  unsigned get_status_ = 200;
  unsigned write_status_ = 200;
  std::string node_ = R"({"metadata":{"name":"node-1"},"status":{"conditions":[
      {"type":"Ready","status":"True"}]}})";
  WallTime now_ = kT0;
};

TEST_F(NodeFaultReporterTest, ConditionsArePatchedOnChangeAndEveryHeartbeatOnly) {
  auto r = Make();
  r->Offer(Snap({}));
  r->RunOnce();  // reads the Node; what was decided before that is decided again
  ASSERT_FALSE(calls_.empty());
  EXPECT_EQ(calls_[0].method, "GET");
  EXPECT_EQ(calls_[0].target, "/api/v1/nodes/node-1");
  EXPECT_TRUE(Take("PATCH").empty());
  r->Offer(Snap({}));
  r->RunOnce();
  std::vector<KubeApiCall> patches = Take("PATCH");
  ASSERT_EQ(patches.size(), 1u);
  EXPECT_EQ(patches[0].target, "/api/v1/nodes/node-1/status");
  EXPECT_EQ(patches[0].content_type, "application/strategic-merge-patch+json");
  const Json body = Json::parse(patches[0].body);
  ASSERT_EQ(body["status"]["conditions"].size(), 3u) << "only ours: the list merges on type";
  EXPECT_EQ(body["status"]["conditions"][1]["type"], "GpuXidCritical");
  EXPECT_EQ(body["status"]["conditions"][1]["status"], "False");
  EXPECT_EQ(body["status"]["conditions"][1]["lastTransitionTime"], "2026-11-30T00:53:20Z");

  now_ += seconds(60);  // nothing changed, no heartbeat due
  r->Offer(Snap({}));
  r->RunOnce();
  EXPECT_TRUE(Take("PATCH").empty());
  now_ += seconds(240);  // 5 min since the write: a heartbeat, the transition time kept
  r->RunOnce();
  patches = Take("PATCH");
  ASSERT_EQ(patches.size(), 1u);
  const Json beat = Json::parse(patches[0].body)["status"]["conditions"][1];
  EXPECT_EQ(beat["lastHeartbeatTime"], "2026-11-30T00:58:20Z");
  EXPECT_EQ(beat["lastTransitionTime"], "2026-11-30T00:53:20Z");

  now_ += seconds(1);  // a critical Xid: written at once, with a new transition time
  r->Offer(Snap({{79, 1}}));
  r->RunOnce();
  patches = Take("PATCH");
  ASSERT_EQ(patches.size(), 1u);
  const Json hit = Json::parse(patches[0].body)["status"]["conditions"][1];
  EXPECT_EQ(hit["status"], "True");
  EXPECT_EQ(hit["reason"], "XidFallenOffTheBus");
  EXPECT_EQ(hit["lastTransitionTime"], "2026-11-30T00:58:21Z");
  const NodeFaultReporter::Stats stats = r->stats();
  EXPECT_EQ(stats.condition_writes, 3u);
  ASSERT_EQ(stats.problems.size(), 3u);
  EXPECT_TRUE(stats.problems[1].second);
}

// 1000 Xids in a second, then more: one Event, its count PATCHed at most every 30 s; many kinds
// at once: at most the token bucket's burst of new Events.
TEST_F(NodeFaultReporterTest, XidStormPostsABoundedNumberOfEvents) {
  auto r = Make();
  r->Offer(Snap({{48, 1000}}));
  r->RunOnce();
  std::vector<KubeApiCall> posts = Take("POST");
  ASSERT_EQ(posts.size(), 1u);
  EXPECT_EQ(posts[0].target, "/api/v1/namespaces/default/events");
  const Json event = Json::parse(posts[0].body);
  EXPECT_EQ(event["involvedObject"]["kind"], "Node");
  EXPECT_EQ(event["involvedObject"]["name"], "node-1");
  EXPECT_EQ(event["reason"], "XidDoubleBitEccError");
  EXPECT_EQ(event["type"], "Warning");
  EXPECT_EQ(event["count"], 1000);
  EXPECT_EQ(event["source"]["component"], "nvml-exporter");
  const std::string name = event["metadata"]["name"];
  EXPECT_EQ(name.rfind("node-1.", 0), 0u) << name;
  for (int s = 1; s <= 60; ++s) {
    now_ += seconds(1);
    r->Offer(Snap({{48, 1000 + 1000 * s}}));
    r->RunOnce();
  }
  std::vector<KubeApiCall> patches;
  for (const KubeApiCall& c : calls_) {
    if (c.target.find("/events/") != std::string::npos) patches.push_back(c);
  }
  EXPECT_TRUE(Take("POST").empty()) << "repeats of one key aggregate into its Event";
  ASSERT_EQ(patches.size(), 2u) << "one count PATCH per 30 s";
  EXPECT_EQ(patches[1].target, "/api/v1/namespaces/default/events/" + name);
  EXPECT_EQ(Json::parse(patches[1].body)["count"], 61000);
  // Every fault Xid on 8 GPUs at once: at most 25 new Events (the burst).
  ids_->clear();
  for (unsigned i = 0; i < 8; ++i) {
    ids_->push_back({});
    ids_->back().index = i;
    ids_->back().uuid = "GPU-x" + std::to_string(i);
  }
  auto storm = std::make_shared<model::Snapshot>();
  storm->identities = ids_;
  storm->devices.resize(8);
  for (unsigned i = 0; i < 8; ++i) {
    storm->devices[i].identity = &(*ids_)[i];
    for (int64_t x : {48, 62, 63, 64, 74, 92, 94, 95, 109, 119, 120, 140, 143}) {
      storm->devices[i].fault_xids.push_back({x, 1});
    }
  }
  auto fresh = Make();
  fresh->Offer(storm);
  fresh->RunOnce();
  EXPECT_EQ(Take("POST").size(), 25u);
  EXPECT_EQ(fresh->stats().events_rate_limited, 8u * 13u - 25u);
}

// 403 (no RBAC): no crash, one log line per streak, counted, retried after `retry`; the
// conditions wait for the Node to be readable (a restart must not overwrite what it holds).
TEST_F(NodeFaultReporterTest, RefusedWritesDegradeToALogLineAndACounter) {
  get_status_ = 403;
  auto r = Make();
  r->Offer(Snap({{95, 1}}));
  ::testing::internal::CaptureStderr();
  r->RunOnce();
  r->RunOnce();
  EXPECT_TRUE(Take("PATCH").empty()) << "no write before the Node was read";
  get_status_ = 200;
  write_status_ = 403;
  r->RunOnce();  // reads the Node, posts the pending Event (refused)
  r->Offer(Snap({{95, 1}}));
  r->RunOnce();
  EXPECT_EQ(Take("PATCH").size(), 1u);
  now_ += seconds(5);
  r->RunOnce();
  EXPECT_TRUE(Take("PATCH").empty()) << "the retry waits 10 s";
  now_ += seconds(5);
  r->RunOnce();
  EXPECT_EQ(Take("PATCH").size(), 1u);
  write_status_ = 200;
  now_ += seconds(10);
  r->RunOnce();
  EXPECT_EQ(Take("PATCH").size(), 1u);
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(log, HasSubstr("cannot read this node's Node object"));
  EXPECT_EQ(log.find("cannot read this node's Node object"),
            log.rfind("cannot read this node's Node object"))
      << "once per streak: " << log;
  EXPECT_THAT(log, HasSubstr("cannot write this node's GPU conditions"));
  EXPECT_THAT(log, HasSubstr("HTTP 403"));
  EXPECT_THAT(log, HasSubstr("writes work again"));
  const NodeFaultReporter::Stats s = r->stats();
  EXPECT_EQ(s.condition_failures, 2u);
  EXPECT_EQ(s.condition_writes, 1u);
  EXPECT_EQ(s.events_failed, 1u);
}

// The Node is the API server's and may hold anything: conditions whose members have other types
// than strings (which nlohmann's value() threw on, aborting the daemon), entries that are not
// objects, a conditions member that is not an array, a body that is not JSON. Each is adopted as
// far as it can be read, and the conditions are then written as usual.
TEST_F(NodeFaultReporterTest, MalformedNodeConditionsAreSkippedNotFatal) {
  const std::vector<std::string> nodes = {
      R"({"status":{"conditions":[{"type":"GpuXidCritical","status":1},
          {"type":"GpuHealthy","status":{"x":1},"reason":[],"message":null,
           "lastHeartbeatTime":7,"lastTransitionTime":false},
          {"type":"GpuLost","status":null},{"type":42,"status":"True"},{"type":null},
          "GpuLost",17,null,[]]}})",
      R"({"status":{"conditions":{"type":"GpuLost","status":"True"}}})",
      R"({"status":{"conditions":"GpuLost"}})",
      R"({"status":"GpuLost"})",
      R"({"status":null})",
      R"([1,2,3])",
      R"("a string")",
      R"({not json)",
      "",
  };
  ::testing::internal::CaptureStderr();
  for (const std::string& node : nodes) {
    SCOPED_TRACE(node);
    node_ = node;
    calls_.clear();
    auto r = Make();
    r->RunOnce();  // reads the Node: no throw
    r->Offer(Snap({}));
    r->RunOnce();
    std::vector<KubeApiCall> patches = Take("PATCH");
    ASSERT_EQ(patches.size(), 1u) << "adopted, then written";
    const Json body = Json::parse(patches[0].body);
    ASSERT_EQ(body["status"]["conditions"].size(), 3u);
    EXPECT_EQ(body["status"]["conditions"][1]["status"], "False");
  }
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(log, HasSubstr("skipped malformed entries of this node's status.conditions"));
  EXPECT_THAT(log, HasSubstr("no status.conditions array"));
  EXPECT_THAT(log, HasSubstr("invalid JSON"));
}

// Strings we write that came from outside (the node's name from NODE_NAME, a GPU's name) may be
// invalid UTF-8: the patch and the Event are still written, the bad bytes as U+FFFD.
TEST_F(NodeFaultReporterTest, InvalidUtf8InWrittenStringsIsReplacedNotFatal) {
  NodeFaultReporterOptions o;
  o.node_name = "node-\xff\xfe";
  o.call = [this](const KubeApiCall& call, std::chrono::milliseconds) -> Result<HttpResponse> {
    calls_.push_back(call);
    if (call.method == "GET") return HttpResponse{200, node_};
    return HttpResponse{200, "{}"};
  };
  o.now = [this] { return now_; };
  NodeFaultReporter r(std::move(o));
  r.RunOnce();
  r.Offer(Snap({{48, 1}}));
  r.RunOnce();
  std::vector<KubeApiCall> posts = Take("POST");
  ASSERT_EQ(posts.size(), 1u);
  const Json event = Json::parse(posts[0].body);
  EXPECT_EQ(event["involvedObject"]["name"], "node-\xef\xbf\xbd\xef\xbf\xbd");
}

}  // namespace
}  // namespace nvmlx::attribute
