#include "app/live_page.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace nvmlx::app {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using ::testing::HasSubstr;

model::Snapshot OneGpu(std::shared_ptr<std::vector<model::DeviceIdentity>> ids, int64_t t_ms) {
  model::Snapshot s;
  s.time = std::chrono::system_clock::time_point(milliseconds(t_ms));
  s.identities = ids;
  model::DeviceSnapshot d;
  d.identity = &(*ids)[0];
  d.samples = {{203, int64_t{77}}};
  s.devices.push_back(std::move(d));
  return s;
}

TEST(LivePage, AnswersFilesSnapshotHistoryAndBadQueries) {
  const auto t0 = LivePage::Clock::time_point(std::chrono::seconds(1000));
  LivePage page({.history_minutes = 15,
                 .interval = milliseconds(1000),
                 .hostname = "node1",
                 .version = "9.9",
                 .stale_after = LivePage::StaleAfter(milliseconds(1000))},
                t0);
  EXPECT_EQ(LivePage::StaleAfter(milliseconds(1000)), milliseconds(3000));
  EXPECT_EQ(LivePage::StaleAfter(milliseconds(30000)), milliseconds(90000));

  std::optional<serve::Resource> index = page.Answer("/", "", t0);
  ASSERT_TRUE(index);
  EXPECT_EQ(index->status, 200);
  EXPECT_EQ(index->content_type, "text/html; charset=utf-8");
  EXPECT_THAT(*index->body, HasSubstr("href=\"metrics\""));
  ASSERT_TRUE(page.Answer("/live/live.js", "", t0));
  ASSERT_TRUE(page.Answer("/live/live.css", "", t0));
  EXPECT_FALSE(page.Answer("/live/nope.js", "", t0));
  EXPECT_FALSE(page.Answer("/api/v1/other", "", t0));

  // Before the first collection: an empty, stale document.
  std::optional<serve::Resource> empty =
      page.Answer("/api/v1/snapshot", "", t0 + milliseconds(500));
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->no_store);
  EXPECT_EQ(json::parse(*empty->body)["stale"], true);

  auto ids = std::make_shared<std::vector<model::DeviceIdentity>>(1);
  (*ids)[0].uuid = "GPU-a";
  page.OnSnapshot(OneGpu(ids, 1000), t0 + milliseconds(1000));
  page.OnSnapshot(OneGpu(ids, 2000), t0 + milliseconds(2000));
  json fresh = json::parse(*page.Answer("/api/v1/snapshot", "", t0 + milliseconds(2500))->body);
  EXPECT_EQ(fresh["stale"], false);
  EXPECT_EQ(fresh["age_seconds"], 0.5);
  EXPECT_EQ(fresh["hostname"], "node1");
  EXPECT_EQ(fresh["gpus"][0]["gpu_util"], 77);
  // No collection for longer than stale_after: the same document, marked stale.
  json old = json::parse(*page.Answer("/api/v1/snapshot", "", t0 + milliseconds(5001))->body);
  EXPECT_EQ(old["stale"], true);

  std::optional<serve::Resource> hist = page.Answer("/api/v1/history", "minutes=15", t0);
  ASSERT_TRUE(hist);
  EXPECT_EQ(hist->status, 200);
  EXPECT_EQ(hist->content_type, "application/json");
  json h = json::parse(*hist->body);
  EXPECT_EQ(h["gpus"][0]["t"], json({1000, 2000}));
  EXPECT_EQ(h["gpus"][0]["gpu_util"], json({77.0, 77.0}));

  json poll = json::parse(*page.Answer("/api/v1/history", "since=1000", t0)->body);
  EXPECT_EQ(poll["gpus"][0]["t"], json({2000}));
  std::optional<serve::Resource> bad = page.Answer("/api/v1/history", "minutes=lots", t0);
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_EQ(*bad->body,
            "bad request: minutes=\"lots\" is not a whole number of minutes from 1 to 15\n");
  EXPECT_EQ(page.Answer("/api/v1/history", "minutes=60", t0)->status, 400);
}

}  // namespace
}  // namespace nvmlx::app
