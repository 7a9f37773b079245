// Issue 23: a reload of the collectors file against the EMF render of a collection. Before the
// field plan, Publish built the collection's series model under a render lock but the EMF
// pipeline rendered it after the lock was released, reading the collectors rows (name, type,
// field) that the model's families pointed to, while a reload replaced (and freed) those rows:
// this test failed on that code in 30 of 30 TSan runs and 10 of 10 ASan runs (3cd6c89). Now each
// snapshot carries the plan it was collected under, which the render holds. The test reloads,
// many times, between two lists that really differ while the daemon collects as often as it may
// and renders every collection to an EMF file; under TSan (make tsan: LABELS concurrency) and
// ASan any render reading rows a reload replaced is reported. It uses the daemon's public API and
// files only.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "app/daemon.h"
#include "app/daemon_test_util.h"
#include "util/log.h"

namespace nvmlx::app {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using Clock = std::chrono::steady_clock;
using testing::Flags;
using testing::HttpGet;
using testing::SimulatedGpus;

// Two lists that differ in length, in rows and in help text: every reload from one to the other
// replaces the rendered rows (equal lists are left alone). Every metric is one the built-in EMF
// rules send, so each collection gives EMF documents.
constexpr char kListA[] =
    "DCGM_FI_DEV_GPU_UTIL, gauge, GPU utilization (in %) in list A.\n"
    "DCGM_FI_DEV_GPU_TEMP, gauge, GPU temperature (in C) in list A.\n";
constexpr char kListB[] =
    "DCGM_FI_DEV_GPU_UTIL,      gauge, Share of time the GPU was busy in percent (list B).\n"
    "DCGM_FI_DEV_MEM_COPY_UTIL, gauge, Memory copy engine utilization (in %) in list B.\n"
    "DCGM_FI_DEV_POWER_USAGE,   gauge, Power draw (in W) in list B.\n"
    "DCGM_FI_DEV_MEMORY_TEMP,   gauge, Memory temperature (in C) in list B.\n";

// How long the reloads go on, and at most how many: the collector publishes every 100 ms (the
// least --collect-interval allows), so this spans some 25 collections even under TSan.
constexpr auto kReloadFor = std::chrono::milliseconds(2500);
constexpr int kMaxReloads = 20000;

// Replaces `path` whole (a new file renamed over it): the reloader thread's own polls never
// read half a list.
void WriteAtomically(const std::string& path, const char* text) {
  const std::string tmp = path + ".new";
  std::ofstream(tmp, std::ios::trunc) << text;
  ASSERT_EQ(std::rename(tmp.c_str(), path.c_str()), 0) << path;
}

// Polls /metrics (10 s at most) until every string of `want` is in the page and none of
// `unwanted`; returns the last page.
std::string AwaitPage(uint16_t port, const std::vector<std::string>& want,
                      const std::vector<std::string>& unwanted) {
  std::string page;
  for (const auto deadline = Clock::now() + std::chrono::seconds(10); Clock::now() < deadline;
       std::this_thread::sleep_for(std::chrono::milliseconds(20))) {
    page = HttpGet(port, "/metrics");
    bool done = page.rfind("HTTP/1.1 200", 0) == 0;
    for (const std::string& w : want) done = done && page.find(w) != std::string::npos;
    for (const std::string& u : unwanted) done = done && page.find(u) == std::string::npos;
    if (done) break;
  }
  return page;
}

TEST(DaemonReloadRaceTest, ReloadsDuringEmfRenderOfEveryCollection) {
  // Eight GPUs: each collection's EMF render has eight label sets to write.
  setenv("NVMLX_SIMGPU_SCENARIO", NVMLX_SOURCE_DIR "/testdata/scenarios/eight_gpus.yaml", 1);
  // Each applied reload logs a line at info: keep warnings and errors only.
  log::Init(log::Format::kText, false);
  spdlog::set_level(spdlog::level::warn);

  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) /
                                    ("daemon_reload_race_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(std::filesystem::create_directories(dir));
  const std::string csv = dir / "collectors.csv";
  const std::string emf = dir / "emf.jsonl";
  WriteAtomically(csv, kListA);

  Result<std::unique_ptr<Daemon>> d = Daemon::Create(
      Flags({"-f", csv, "-a", "127.0.0.1:0", "-c", "100", "--emf-output", "file:" + emf}),
      SimulatedGpus());
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  Daemon& daemon = **d;
  ASSERT_TRUE(daemon.Start().ok());
  const uint16_t port = daemon.port();
  ASSERT_NE(port, 0);
  // Collections publish before the reloads begin.
  ASSERT_THAT(AwaitPage(port, {"DCGM_FI_DEV_GPU_TEMP{gpu=\"7\""}, {}),
              HasSubstr("DCGM_FI_DEV_GPU_TEMP{gpu=\"7\""));

  // The reloads, each from one list to the other, back to back while the collector publishes.
  int reloads = 0;
  const auto start = Clock::now();
  for (; reloads < kMaxReloads && Clock::now() - start < kReloadFor; ++reloads) {
    WriteAtomically(csv, reloads % 2 == 0 ? kListB : kListA);
    daemon.ReloadNow(true, "test");
  }
  EXPECT_GE(reloads, 50) << "too few reloads to meet the collections";

  // Each list, once more, reaches the page (and so the EMF render of the same collection).
  WriteAtomically(csv, kListA);
  daemon.ReloadNow(true, "test");
  EXPECT_THAT(AwaitPage(port, {"DCGM_FI_DEV_GPU_TEMP{gpu=\"7\"", "list A.\n"},
                        {"DCGM_FI_DEV_POWER_USAGE{"}),
              AllOf(HasSubstr("DCGM_FI_DEV_GPU_TEMP{gpu=\"7\""),
                    HasSubstr("# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %) in list A.\n"),
                    Not(HasSubstr("DCGM_FI_DEV_POWER_USAGE{"))));
  WriteAtomically(csv, kListB);
  daemon.ReloadNow(true, "test");
  const std::string page = AwaitPage(port, {"DCGM_FI_DEV_POWER_USAGE{gpu=\"7\"", "list B).\n"},
                                     {"DCGM_FI_DEV_GPU_TEMP{"});
  EXPECT_THAT(page, HasSubstr("DCGM_FI_DEV_POWER_USAGE{gpu=\"7\""));
  EXPECT_THAT(page, HasSubstr("# HELP DCGM_FI_DEV_GPU_UTIL Share of time the GPU was busy in "
                              "percent (list B).\n"));
  EXPECT_THAT(page, Not(HasSubstr("DCGM_FI_DEV_GPU_TEMP{")));
  EXPECT_THAT(page, HasSubstr("nvml_exporter_config_reload_failures_total 0\n"))
      << "every list written was valid";
  daemon.Stop();

  // The EMF file (the sink drained at Stop): one JSON document a line, from many collections,
  // with the metrics of both lists.
  std::ifstream in(emf);
  ASSERT_TRUE(in) << emf;
  size_t docs = 0, with_a = 0, with_b = 0;
  std::set<int64_t> collections;
  for (std::string line; std::getline(in, line);) {
    nlohmann::json doc = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(doc.is_discarded()) << "not JSON: " << line;
    ++docs;
    collections.insert(doc["_aws"]["Timestamp"].get<int64_t>());
    with_a += doc.contains("DCGM_FI_DEV_GPU_TEMP") ? 1 : 0;
    with_b += doc.contains("DCGM_FI_DEV_POWER_USAGE") ? 1 : 0;
  }
  EXPECT_GE(collections.size(), 10u) << docs << " EMF documents";
  EXPECT_GT(with_a, 0u) << "no EMF document with list A's DCGM_FI_DEV_GPU_TEMP";
  EXPECT_GT(with_b, 0u) << "no EMF document with list B's DCGM_FI_DEV_POWER_USAGE";
  std::printf(
      "%d reloads; %zu EMF documents from %zu collections (%zu with list A's, %zu with "
      "list B's metrics)\n",
      reloads, docs, collections.size(), with_a, with_b);
  std::filesystem::remove_all(dir);
}

// The page's collection time, the line that changes with every collection.
std::string CollectionStamp(const std::string& page) {
  const std::string key = "\nnvml_exporter_last_collect_timestamp_seconds ";
  const size_t at = page.find(key);
  return at == std::string::npos ? "" : page.substr(at, page.find('\n', at + 1) - at);
}

// Issue 36, item 4: a reload never holds up a collection. ReloadNow held the lock that the
// collection thread takes for the reload counters (Publish) while it read and parsed the file and
// while it ran the restart handler (app::Run's re-execution), so a slow file system or handler
// stopped the page. Here the handler waits for the page to move on: on that code it waited its
// whole 3 s and the page stayed where it was.
TEST(DaemonReloadRaceTest, AReloadNeverHoldsUpACollection) {
  log::Init(log::Format::kText, false);
  spdlog::set_level(spdlog::level::err);  // the reload's restart warning is expected
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) /
                                    ("daemon_reload_hold_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(std::filesystem::create_directories(dir));
  const std::string csv = dir / "collectors.csv";
  WriteAtomically(csv, kListA);
  Result<std::unique_ptr<Daemon>> d =
      Daemon::Create(Flags({"-f", csv, "-a", "127.0.0.1:0", "-c", "100"}), SimulatedGpus());
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  Daemon& daemon = **d;
  ASSERT_TRUE(daemon.Start().ok());
  const uint16_t port = daemon.port();
  ASSERT_FALSE(
      CollectionStamp(AwaitPage(port, {"nvml_exporter_last_collect_timestamp_seconds "}, {}))
          .empty());
  std::atomic<bool> moved_on{false};
  std::atomic<bool> called{false};
  daemon.SetRestartHandler([&] {
    called = true;
    const std::string before = CollectionStamp(HttpGet(port, "/metrics"));
    for (const auto deadline = Clock::now() + std::chrono::seconds(3); Clock::now() < deadline;
         std::this_thread::sleep_for(std::chrono::milliseconds(20))) {
      if (CollectionStamp(HttpGet(port, "/metrics")) != before) {
        moved_on = true;
        return;
      }
    }
  });
  // An Xid field needs the Xid watcher, which starts with the daemon: the reload asks for a
  // restart.
  const std::string with_xid =
      std::string(kListA) + "DCGM_FI_DEV_XID_ERRORS, gauge, Value of the last XID error seen.\n";
  WriteAtomically(csv, with_xid.c_str());
  daemon.ReloadNow(true, "test");
  EXPECT_TRUE(called.load()) << "the reload did not ask for a restart";
  EXPECT_TRUE(moved_on.load()) << "no collection was published while the reload ran";
  daemon.Stop();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace nvmlx::app
