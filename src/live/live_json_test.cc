#include "live/live_json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace nvmlx::live {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using ::testing::HasSubstr;

struct Fixture {
  std::shared_ptr<std::vector<model::DeviceIdentity>> ids =
      std::make_shared<std::vector<model::DeviceIdentity>>();
  Fixture() {
    for (int i = 0; i < 3; ++i) {
      model::DeviceIdentity id;
      id.index = static_cast<unsigned>(i);
      id.uuid = "GPU-" + std::to_string(i);
      id.pci_bus_id = "00000000:0" + std::to_string(6 + i) + ":00.0";
      id.model_name = "NVIDIA H200";
      ids->push_back(id);
    }
  }
  model::Snapshot Snap() const {
    model::Snapshot s;
    s.time = std::chrono::system_clock::time_point(milliseconds(1700000000123));
    s.collect_seconds = 0.0123456;
    s.identities = ids;
    s.xid_window_ms = 300000;
    for (const model::DeviceIdentity& id : *ids) {
      model::DeviceSnapshot d;
      d.identity = &id;
      s.devices.push_back(std::move(d));
    }
    auto& g0 = s.devices[0];
    g0.samples = {{112, int64_t{0x1 | 0x4}}, {150, int64_t{61}}, {155, 690.5},
                  {203, int64_t{100}},       {230, int64_t{0}},  {250, int64_t{143771}},
                  {252, int64_t{80000}},     {1004, 0.93712345}};
    g0.xid_watched = true;
    g0.health = {{"ALL", "DCGM_FR_OK", 0}};
    auto& g1 = s.devices[1];
    g1.samples = {{203, int64_t{42}}};
    s.devices[2].samples = {{251, int64_t{100}}, {252, int64_t{50}}, {253, int64_t{10}}};
    g1.xid_watched = true;
    g1.xid_counts = {{48, 2}};
    auto& g2 = s.devices[2];
    g2.up = false;
    g2.lost = true;
    g2.health = {{"PCIE", "DCGM_FR_OK", 0}, {"ALL", "DCGM_FR_GPU_LOST", 20}};
    auto pods = std::make_shared<model::DeviceAttribution>();
    pods->pods_by_device["GPU-0"] = {{"team-a", "trainer", "main", ""}};
    pods->pods_by_device["GPU-1"] = {{"team-b", "z-infer", "srv", "1"},
                                     {"team-b", "a-infer", "srv", "0"}};
    s.attribution.devices = pods;
    return s;
  }
};

json Parse(const std::string& s) {
  json j = json::parse(s, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(j.is_discarded()) << s;
  return j;
}

TEST(LiveJson, SnapshotDocument) {
  Fixture f;
  const std::string prefix =
      RenderSnapshotPrefix(f.Snap(), {"node1", milliseconds(1000), "0.1.0", true});
  json j = Parse(FinishSnapshot(prefix, 0.4567, false));
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["hostname"], "node1");
  EXPECT_EQ(j["interval_ms"], 1000);
  EXPECT_EQ(j["time_unix_ms"], 1700000000123);
  EXPECT_EQ(j["age_seconds"], 0.457);
  EXPECT_EQ(j["stale"], false);
  EXPECT_EQ(j["kubernetes"], true);
  EXPECT_EQ(j["pods_known"], true);
  ASSERT_EQ(j["gpus"].size(), 3u);
  const json& g0 = j["gpus"][0];
  EXPECT_EQ(g0["gpu"], 0);
  EXPECT_EQ(g0["uuid"], "GPU-0");
  EXPECT_EQ(g0["model"], "NVIDIA H200");
  EXPECT_EQ(g0["state"], "ok");
  EXPECT_EQ(g0["gpu_util"], 100);
  EXPECT_EQ(g0["tensor_active"], 0.9371);
  EXPECT_TRUE(g0["dram_active"].is_null());
  EXPECT_EQ(g0["fb_used_mib"], 80000);
  EXPECT_EQ(g0["fb_total_mib"], 143771);
  EXPECT_EQ(g0["power_w"], 690.5);
  EXPECT_EQ(g0["temp_c"], 61);
  EXPECT_EQ(g0["throttle_reasons"], json({"gpu_idle", "power_cap"}));
  EXPECT_EQ(g0["xid_last"], 0);
  EXPECT_EQ(g0["xid_counts"], json::array());
  EXPECT_EQ(g0["health"], "pass");
  const json& g1 = j["gpus"][1];
  EXPECT_TRUE(g1["throttle_reasons"].is_null());  // not collected
  EXPECT_TRUE(g1["fb_total_mib"].is_null());
  EXPECT_TRUE(g1["health"].is_null());
  EXPECT_EQ(g1["xid_counts"], json::parse(R"([{"xid":48,"count":2}])"));
  const json& g2 = j["gpus"][2];
  EXPECT_EQ(g2["state"], "lost");
  EXPECT_EQ(g2["up"], false);
  EXPECT_EQ(g2["health"], "fail");
  EXPECT_EQ(g2["health_watches"][1]["error_code"], "DCGM_FR_GPU_LOST");
  EXPECT_TRUE(g2["gpu_util"].is_null());
  EXPECT_EQ(g2["fb_total_mib"], 160.0);  // no FB_TOTAL: used + free + reserved
  // Pods: sorted, share of the device, memory as the share of its used memory.
  ASSERT_EQ(j["pods"].size(), 3u);
  EXPECT_EQ(j["pods"][0]["pod"], "trainer");
  EXPECT_EQ(j["pods"][0]["share"], 1.0);
  EXPECT_EQ(j["pods"][0]["memory_mib"], 80000.0);
  EXPECT_EQ(j["pods"][0]["memory_source"], "share");
  EXPECT_EQ(j["pods"][1]["pod"], "a-infer");
  EXPECT_EQ(j["pods"][1]["gpu"], 1);
  EXPECT_EQ(j["pods"][1]["vgpu"], "0");
  EXPECT_EQ(j["pods"][1]["share"], 0.5);
  EXPECT_TRUE(j["pods"][1]["memory_mib"].is_null());  // GPU 1 reports no used memory
  EXPECT_EQ(j["pods"][2]["pod"], "z-infer");
}

TEST(LiveJson, PodMemoryFromAttributedProcesses) {
  Fixture f;
  model::Snapshot s = f.Snap();
  s.devices[0].processes = {
      {101, 3u << 30, false, 0, 0}, {102, 1u << 30, false, 0, 0}, {103, 5u << 20, false, 0, 0}};
  auto procs = std::make_shared<model::ProcessAttribution>();
  procs->by_pid[101] = {"uid-t", "c1"};
  procs->by_pid[102] = {"uid-t", "c1"};
  procs->by_pid[103] = {"uid-x", "c9"};  // a pod the kubelet does not list on this GPU
  auto meta = std::make_shared<model::PodMetadata>();
  meta->by_uid["uid-t"] = {"team-a", "trainer", "uid-t", {}, {{"c1", "main"}}};
  meta->by_uid["uid-x"] = {"team-x", "extra", "uid-x", {}, {{"c9", "side"}}};
  s.attribution.processes = procs;
  s.attribution.metadata = meta;
  json j = Parse(FinishSnapshot(RenderSnapshotPrefix(s, {}), 1, true));
  EXPECT_EQ(j["stale"], true);
  ASSERT_EQ(j["pods"].size(), 4u);
  EXPECT_EQ(j["pods"][0]["pod"], "trainer");
  EXPECT_EQ(j["pods"][0]["memory_mib"], 4096.0);
  EXPECT_EQ(j["pods"][0]["memory_source"], "processes");
  EXPECT_EQ(j["pods"][3]["pod"], "extra");
  EXPECT_EQ(j["pods"][3]["container"], "side");
  EXPECT_TRUE(j["pods"][3]["share"].is_null());  // holds no device through the kubelet
  EXPECT_EQ(j["pods"][3]["memory_mib"], 5.0);
}

TEST(LiveJson, EmptySnapshotBeforeTheFirstCollection) {
  json j = Parse(EmptySnapshot({"n", milliseconds(500), "v"}, 2.5));
  EXPECT_EQ(j["gpus"], json::array());
  EXPECT_EQ(j["stale"], true);
  EXPECT_TRUE(j["time_unix_ms"].is_null());
  EXPECT_EQ(j["interval_ms"], 500);
  EXPECT_EQ(j["kubernetes"], false);
  EXPECT_EQ(j["pods_known"], false);
}

TEST(LiveJson, HistoryQuery) {
  auto minutes = [](std::string_view q, int kept) { return ParseHistoryQuery(q, kept)->minutes; };
  EXPECT_EQ(minutes("", 15), 15);
  EXPECT_EQ(minutes("", 5), 5);  // the default never exceeds what is kept
  EXPECT_EQ(minutes("", 60), 15);
  EXPECT_EQ(minutes("minutes=15", 15), 15);
  EXPECT_EQ(minutes("minutes=1&", 15), 1);
  EXPECT_FALSE(ParseHistoryQuery("", 15)->since_ms);
  Result<HistoryQuery> both = ParseHistoryQuery("since=1700000000123&minutes=5", 15);
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->minutes, 5);
  EXPECT_EQ(both->since_ms, 1700000000123);
  auto error = [](std::string_view q, int kept) {
    Result<HistoryQuery> r = ParseHistoryQuery(q, kept);
    EXPECT_FALSE(r.ok()) << q;
    return r.ok() ? std::string() : r.status().message();
  };
  EXPECT_EQ(error("minutes=16", 15),
            "minutes=16 is more than the 15 minutes of history kept (--live-history-minutes)");
  EXPECT_EQ(error("minutes=0", 15), "minutes=\"0\" is not a whole number of minutes from 1 to 15");
  EXPECT_EQ(error("minutes=abc", 15),
            "minutes=\"abc\" is not a whole number of minutes from 1 to 15");
  EXPECT_EQ(error("minutes=-3", 15),
            "minutes=\"-3\" is not a whole number of minutes from 1 to 15");
  EXPECT_EQ(error("minutes=", 15), "minutes=\"\" is not a whole number of minutes from 1 to 15");
  EXPECT_EQ(error("minutes=99999999999", 15),
            "minutes=\"99999999999\" is not a whole number of minutes from 1 to 15");
  EXPECT_EQ(error("hours=1", 15), "unknown query parameter \"hours\" (expected minutes or since)");
  EXPECT_EQ(error("since=yesterday", 15),
            "since=\"yesterday\" is not a time in Unix milliseconds (a \"t\" value of an earlier "
            "answer)");
  EXPECT_EQ(error("since=1&since=2", 15), "since given more than once");
  EXPECT_EQ(error("minutes=1&minutes=2", 15), "minutes given more than once");
  EXPECT_EQ(error("minutes=1", 0),
            "minutes=1 is more than the 0 minutes of history kept "
            "(--live-history-minutes)");
  EXPECT_EQ(minutes("", 0), 0);
}

TEST(LiveJson, HistoryDocumentIsColumnarWithNullForAbsent) {
  Fixture f;
  History h({.minutes = 15, .interval = milliseconds(1000)});
  model::Snapshot s = f.Snap();
  h.Add(s);
  s.time += milliseconds(1000);
  s.devices[0].samples[3] = {203, int64_t{0}};
  h.Add(s);
  json j = Parse(
      RenderHistory(h.Query(15), {15, std::nullopt, 15, milliseconds(1000), h.BytesPerDevice()}));
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["minutes"], 15);
  EXPECT_EQ(j["bytes_per_gpu"], 901 * 32);
  ASSERT_EQ(j["series"].size(), kHistorySeriesCount);
  EXPECT_EQ(j["series"][0]["name"], "gpu_util");
  ASSERT_EQ(j["gpus"].size(), 3u);
  const json& g0 = j["gpus"][0];
  EXPECT_EQ(g0["device_key"], "GPU-0");
  EXPECT_EQ(g0["t"], json({1700000000123, 1700000001123}));
  EXPECT_EQ(g0["gpu_util"], json({100.0, 0.0}));
  EXPECT_EQ(g0["tensor_active"][0], 0.9371);
  EXPECT_EQ(g0["dram_active"], json({nullptr, nullptr}));
  EXPECT_EQ(j["gpus"][2]["gpu_util"], json({nullptr, nullptr}));  // the lost GPU
  EXPECT_TRUE(j["since_unix_ms"].is_null());
  EXPECT_THAT(RenderHistory({}, {0, std::nullopt, 0, milliseconds(1000), 0}),
              HasSubstr("\"gpus\":[]"));
  // A poll: only the points after `since`.
  json poll = Parse(
      RenderHistory(h.Query(15, 1700000000123), {15, 1700000000123, 15, milliseconds(1000), 0}));
  EXPECT_EQ(poll["since_unix_ms"], 1700000000123);
  EXPECT_EQ(poll["gpus"][0]["t"], json({1700000001123}));
  EXPECT_EQ(poll["gpus"][0]["gpu_util"], json({0.0}));
}

}  // namespace
}  // namespace nvmlx::live
