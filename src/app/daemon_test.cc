// The Daemon on the simulated GPUs: it starts, serves /metrics over a real socket, and stops
// promptly; a failing step gives the right exit code and leaves nothing running.
#include "app/daemon.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "app/daemon_test_util.h"
#include "config/exit_code.h"
#include "util/log.h"

namespace nvmlx::app {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using Clock = std::chrono::steady_clock;

constexpr char kCounters[] = NVMLX_SOURCE_DIR "/etc/default-counters.csv";

using testing::Flags;
using testing::HttpGet;
using testing::SimulatedGpus;

// The log goes to stderr, where the reload tests read it; log::Init may run once per process.
void InitLogOnce() {
  static bool log_ready = [] {
    log::Init(log::Format::kText, false);
    return true;
  }();
  (void)log_ready;
}

class DaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The simulator reads its scenario once, when it is first loaded in this process.
    setenv("NVMLX_SIMGPU_SCENARIO", NVMLX_SOURCE_DIR "/testdata/scenarios/one_gpu.yaml", 1);
  }
};

TEST_F(DaemonTest, ServesMetricsOverASocketAndStopsPromptly) {
  Result<std::unique_ptr<Daemon>> d =
      Daemon::Create(Flags({"-f", kCounters, "-a", "127.0.0.1:0", "-c", "100"}), SimulatedGpus());
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  Daemon& daemon = **d;
  EXPECT_EQ(daemon.state(), Daemon::State::kBuilt);
  ASSERT_TRUE(daemon.Start().ok());
  EXPECT_EQ(daemon.state(), Daemon::State::kRunning);
  const uint16_t port = daemon.port();
  ASSERT_NE(port, 0);

  // The first page is published as soon as the first collection ends.
  std::string metrics;
  for (const auto deadline = Clock::now() + std::chrono::seconds(10); Clock::now() < deadline;
       std::this_thread::sleep_for(std::chrono::milliseconds(50))) {
    metrics = HttpGet(port, "/metrics");
    if (metrics.rfind("HTTP/1.1 200", 0) == 0) break;
  }
  ASSERT_THAT(metrics, HasSubstr("HTTP/1.1 200"));
  EXPECT_THAT(metrics, HasSubstr("# TYPE DCGM_FI_DEV_GPU_UTIL gauge"));
  EXPECT_THAT(metrics, HasSubstr("UUID=\"GPU-bc2976c1-5d4e-4a9e-8f3a-1c2b3d4e5f60\""));
  EXPECT_THAT(HttpGet(port, "/health"), HasSubstr("HTTP/1.1 200"));

  const auto before = Clock::now();
  daemon.Stop();
  EXPECT_LT(Clock::now() - before, std::chrono::seconds(3));
  EXPECT_EQ(daemon.state(), Daemon::State::kStopped);
  EXPECT_EQ(daemon.port(), 0);
  EXPECT_EQ(HttpGet(port, "/metrics"), "") << "the server must not listen after Stop()";
  daemon.Stop();  // idempotent
  EXPECT_FALSE(daemon.Start().ok()) << "a stopped daemon does not start again";
}

TEST_F(DaemonTest, OnceRendersOnePage) {
  Result<std::unique_ptr<Daemon>> d =
      Daemon::Create(Flags({"-f", kCounters, "--once", "--emf-output", "stdout"}), SimulatedGpus());
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  const std::string page = (*d)->RenderOnce();
  EXPECT_THAT(page, HasSubstr("# TYPE DCGM_FI_DEV_GPU_UTIL gauge"));
  EXPECT_THAT(page, HasSubstr("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\""));
}

TEST_F(DaemonTest, AddressInUseFailsStartAndStopsWhatStarted) {
  // Hold a listening socket on a free port.
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string address = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));

  Result<std::unique_ptr<Daemon>> d =
      Daemon::Create(Flags({"-f", kCounters, "-a", address, "-c", "100"}), SimulatedGpus());
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  const auto before = Clock::now();
  Status st = (*d)->Start();
  EXPECT_LT(Clock::now() - before, std::chrono::seconds(5));
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(config::ExitCodeFor(st), config::ExitCode::kUnavailable);
  EXPECT_THAT(st.message(), HasSubstr("cannot listen on " + address));
  // Sources and collector were started before the server: they are stopped again.
  EXPECT_EQ((*d)->state(), Daemon::State::kStopped);
  EXPECT_EQ((*d)->port(), 0);
  d->reset();  // the destructor has nothing left to stop
  close(fd);
}

TEST_F(DaemonTest, BadCollectorsFileIsAUsageError) {
  const std::string path = ::testing::TempDir() + "/daemon_test_bad.csv";
  std::ofstream(path) << "DCGM_FI_DEV_SM_CLOCK, gauge, SM clock\nDCGM_FI_DEV_GPU_UTL, gauge, x\n";
  Result<std::unique_ptr<Daemon>> d =
      Daemon::Create(Flags({"-f", path, "-a", "127.0.0.1:0", "--collectors-unknown-fields=fatal"}),
                     SimulatedGpus());
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(config::ExitCodeFor(d.status()), config::ExitCode::kUsage);
  EXPECT_THAT(d.status().message(), HasSubstr("daemon_test_bad.csv:2: unknown field"));
  // The default skips the unknown row (a newer release's field must not stop the daemon).
  d = Daemon::Create(Flags({"-f", path, "-a", "127.0.0.1:0"}), SimulatedGpus());
  ASSERT_TRUE(d.ok()) << d.status().message();
  d->reset();

  d = Daemon::Create(Flags({"-f", "/nonexistent/counters.csv"}), SimulatedGpus());
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(config::ExitCodeFor(d.status()), config::ExitCode::kUsage);
  std::remove(path.c_str());
}

// --config-file: its metrics.file, or its inline metrics.fields, is the collectors list; a
// collection that matches none of that list's fields stops the start, naming the YAML line.
TEST_F(DaemonTest, ConfigFileChoosesTheCollectors) {
  const std::string dir = ::testing::TempDir();
  const std::string csv = dir + "/daemon_test_yaml.csv";
  std::ofstream(csv) << "DCGM_FI_DEV_GPU_TEMP, gauge, Temperature\n";
  const std::string yaml = dir + "/daemon_test_file.yaml";
  std::ofstream(yaml) << "version: 2\nmetrics:\n  file: " << csv << "\n";
  Result<std::unique_ptr<Daemon>> d =
      Daemon::Create(Flags({"--config-file", yaml, "--once"}), SimulatedGpus());
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  std::string page = (*d)->RenderOnce();
  EXPECT_THAT(page, HasSubstr("# TYPE DCGM_FI_DEV_GPU_TEMP gauge"));
  EXPECT_THAT(page, ::testing::Not(HasSubstr("DCGM_FI_DEV_GPU_UTIL")));

  const std::string inline_yaml = dir + "/daemon_test_inline.yaml";
  std::ofstream(inline_yaml) << "version: 2\nmetrics:\n  fields:\n"
                                "    - name: DCGM_FI_DEV_POWER_USAGE\n"
                                "      prometheusType: gauge\n      help: Power draw (in W).\n";
  d = Daemon::Create(Flags({"--config-file", inline_yaml, "--once"}), SimulatedGpus());
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  page = (*d)->RenderOnce();
  EXPECT_THAT(page, HasSubstr("# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W)."));
  EXPECT_THAT(page, HasSubstr("# TYPE DCGM_FI_DEV_POWER_USAGE gauge"));
  EXPECT_THAT(page, ::testing::Not(HasSubstr("DCGM_FI_DEV_GPU_TEMP")));

  const std::string stray = dir + "/daemon_test_stray.yaml";
  std::ofstream(stray) << "version: 2\nmetrics:\n  file: " << csv
                       << "\ncollections:\n  - name: nv\n    every: 1s\n"
                          "    metrics:\n      include: [DCGM_FI_DEV_NVLINK_*]\n";
  d = Daemon::Create(Flags({"--config-file", stray, "--once"}), SimulatedGpus());
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(config::ExitCodeFor(d.status()), config::ExitCode::kUsage);
  EXPECT_THAT(d.status().message(),
              HasSubstr(stray + ":5: collection \"nv\" matches none of the fields of " + csv));
  for (const std::string& f : {csv, yaml, inline_yaml, stray}) std::remove(f.c_str());
}

// A reload keeps the config file's collections satisfiable: a collectors list that drops every
// field a collection names is rejected, and the fields in use stay.
TEST_F(DaemonTest, ReloadThatStrandsACollectionIsRejected) {
  InitLogOnce();
  const std::string dir = ::testing::TempDir();
  const std::string csv = dir + "/daemon_test_yaml_reload.csv";
  std::ofstream(csv) << "DCGM_FI_DEV_GPU_UTIL, gauge, util\nDCGM_FI_DEV_GPU_TEMP, gauge, temp\n";
  const std::string yaml = dir + "/daemon_test_yaml_reload.yaml";
  std::ofstream(yaml) << "version: 2\nmetrics:\n  file: " << csv
                      << "\ncollections:\n  - name: temp\n    every: 1s\n"
                         "    metrics:\n      include: [DCGM_FI_DEV_GPU_TEMP]\n";
  Result<std::unique_ptr<Daemon>> d =
      Daemon::Create(Flags({"--config-file", yaml, "--once"}), SimulatedGpus());
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  std::ofstream(csv, std::ios::trunc) << "DCGM_FI_DEV_GPU_UTIL, gauge, util\n";
  ::testing::internal::CaptureStderr();
  (*d)->ReloadNow(true, "test");
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(log, HasSubstr("collectors file rejected"));
  EXPECT_THAT(log, HasSubstr(yaml + ":5: collection"));
  EXPECT_THAT(log, HasSubstr("matches none of the fields of " + csv));
  EXPECT_THAT((*d)->RenderOnce(), HasSubstr("# TYPE DCGM_FI_DEV_GPU_TEMP gauge"))
      << "the fields in use stay";
  std::remove(csv.c_str());
  std::remove(yaml.c_str());
}

TEST_F(DaemonTest, UnusableNvmlOrGpuIsExitCodeOne) {
  Result<std::unique_ptr<Daemon>> d = Daemon::Create(
      Flags({"-f", kCounters}), {"/nonexistent/libnvidia-ml.so.1", "", SimulatedGpus().getenv});
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(config::ExitCodeFor(d.status()), config::ExitCode::kUnavailable);
  EXPECT_THAT(d.status().message(), HasSubstr("/nonexistent/libnvidia-ml.so.1"));

  d = Daemon::Create(Flags({"-f", kCounters, "-d", "g:7"}), SimulatedGpus());
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(config::ExitCodeFor(d.status()), config::ExitCode::kUnavailable);
}

TEST_F(DaemonTest, BadEmfOutputAfterTheCollectorIsAUsageError) {
  // The collector (and its Xid watcher thread) exists when the EMF step fails: it is torn down.
  const auto before = Clock::now();
  Result<std::unique_ptr<Daemon>> d =
      Daemon::Create(Flags({"-f", kCounters, "--emf-output", "bogus://x"}), SimulatedGpus());
  EXPECT_LT(Clock::now() - before, std::chrono::seconds(10));
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(config::ExitCodeFor(d.status()), config::ExitCode::kUsage);
}

size_t Entries(const char* dir) {
  size_t n = 0;
  if (DIR* d = opendir(dir)) {
    while (dirent* e = readdir(d)) n += e->d_name[0] != '.' ? 1 : 0;
    closedir(d);
  }
  return n;
}

// Polls /metrics until `pred` holds for the body (bounded); the last body.
template <typename Pred>
std::string AwaitMetrics(uint16_t port, Pred pred) {
  std::string metrics;
  for (const auto deadline = Clock::now() + std::chrono::seconds(10); Clock::now() < deadline;
       std::this_thread::sleep_for(std::chrono::milliseconds(20))) {
    metrics = HttpGet(port, "/metrics");
    if (pred(metrics)) break;
  }
  return metrics;
}

// The two lists the reload tests switch between.
constexpr char kUtilList[] = "DCGM_FI_DEV_GPU_UTIL, gauge, util\n";
constexpr char kUtilTempList[] =
    "DCGM_FI_DEV_GPU_UTIL, gauge, util\nDCGM_FI_DEV_GPU_TEMP, gauge, temp\n";

// Writes kUtilList to `path`, starts a daemon on it (simulated GPUs, -c 100, any port) into
// *out and waits until its page has GPU_UTIL.
void StartServingList(const std::string& path, std::unique_ptr<Daemon>* out) {
  std::ofstream(path) << kUtilList;
  Result<std::unique_ptr<Daemon>> d =
      Daemon::Create(Flags({"-f", path, "-a", "127.0.0.1:0", "-c", "100"}), SimulatedGpus());
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_TRUE((*d)->Start().ok());
  *out = std::move(d).value();
  AwaitMetrics((*out)->port(), [](const std::string& m) {
    return m.find("DCGM_FI_DEV_GPU_UTIL{") != std::string::npos;
  });
}

// Reload (SIGHUP, or a change of the file): a good file replaces the fields, a bad one is
// rejected with file:line and counted while the old fields stay; 1000 reloads leak no thread or
// file descriptor.
TEST_F(DaemonTest, ReloadReplacesTheFieldsRejectsABadFileAndLeaksNothing) {
  InitLogOnce();
  const std::string path = ::testing::TempDir() + "/daemon_test_reload.csv";
  const std::string a = kUtilList, b = kUtilTempList;
  std::unique_ptr<Daemon> started;
  StartServingList(path, &started);
  if (HasFatalFailure()) return;
  Daemon& daemon = *started;
  const uint16_t port = daemon.port();
  std::string m = AwaitMetrics(port, [](const std::string&) { return true; });
  EXPECT_THAT(m, HasSubstr("nvml_exporter_config_reload_failures_total 0\n"));
  EXPECT_EQ(m.find("DCGM_FI_DEV_GPU_TEMP{"), std::string::npos);

  std::ofstream(path, std::ios::trunc) << b;
  daemon.ReloadNow(true, "test");
  m = AwaitMetrics(port, [](const std::string& b) {
    return b.find("DCGM_FI_DEV_GPU_TEMP{gpu=\"0\"") != std::string::npos;
  });
  EXPECT_THAT(m, HasSubstr("DCGM_FI_DEV_GPU_TEMP{gpu=\"0\""));

  // A broken row (an unknown metric type) rejects the file. (An unknown field name does not: it is
  // skipped, ReloadSkipsAnUnknownName.)
  std::ofstream(path, std::ios::trunc) << a << "DCGM_FI_DEV_GPU_TEMP, gauges, x\n";
  ::testing::internal::CaptureStderr();
  daemon.ReloadNow(true, "test");
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(log, HasSubstr("collectors file rejected"));
  EXPECT_THAT(log, HasSubstr("daemon_test_reload.csv:2"));
  m = AwaitMetrics(port, [](const std::string& b) {
    return b.find("nvml_exporter_config_reload_failures_total 1\n") != std::string::npos;
  });
  EXPECT_THAT(m, HasSubstr("nvml_exporter_config_reload_failures_total 1\n"));
  EXPECT_THAT(m, HasSubstr("DCGM_FI_DEV_GPU_TEMP{gpu=\"0\"")) << "the old fields stay";

  const size_t fds = Entries("/proc/self/fd");
  const size_t threads = Entries("/proc/self/task");
  for (int i = 0; i < 1000; ++i) {
    std::ofstream(path, std::ios::trunc) << (i % 2 == 0 ? a : b);
    daemon.ReloadNow(true, "test");
  }
  // Let the workers apply the last field list (readers are rebuilt on their threads).
  m = AwaitMetrics(port, [](const std::string& b) {
    return b.find("DCGM_FI_DEV_GPU_TEMP{gpu=\"0\"") != std::string::npos;
  });
  EXPECT_THAT(m, HasSubstr("DCGM_FI_DEV_GPU_TEMP{gpu=\"0\""));
  // A leak per reload would show as +1000; the slack covers a scrape's socket closing late.
  EXPECT_LE(Entries("/proc/self/fd"), fds + 2) << "1000 reloads must not leak file descriptors";
  EXPECT_LE(Entries("/proc/self/task"), threads + 2) << "1000 reloads must not leak threads";
  daemon.Stop();
  std::remove(path.c_str());
}

// Issue 37: a reload naming a field no release we know has (a newer chart's CSV) is applied
// without that row, which the page lists; with --collectors-unknown-fields=fatal it is rejected,
// as dcgm-exporter refuses such a file.
TEST_F(DaemonTest, ReloadSkipsAnUnknownName) {
  InitLogOnce();
  const std::string path = ::testing::TempDir() + "/daemon_test_unknown.csv";
  std::unique_ptr<Daemon> started;
  StartServingList(path, &started);
  if (HasFatalFailure()) return;
  Daemon& daemon = *started;
  const uint16_t port = daemon.port();
  std::ofstream(path, std::ios::trunc) << kUtilTempList << "DCGM_FI_DEV_FROM_LATER, gauge, x\n";
  daemon.ReloadNow(true, "test");
  std::string m = AwaitMetrics(port, [](const std::string& b) {
    return b.find("DCGM_FI_DEV_GPU_TEMP{gpu=\"0\"") != std::string::npos;
  });
  EXPECT_THAT(m,
              HasSubstr("nvml_exporter_collectors_skipped{name=\"DCGM_FI_DEV_FROM_LATER\"} 1\n"));
  EXPECT_THAT(m, HasSubstr("nvml_exporter_config_reload_failures_total 0\n"));
  daemon.Stop();

  std::ofstream(path, std::ios::trunc) << kUtilList;
  Result<std::unique_ptr<Daemon>> d = Daemon::Create(
      Flags({"-f", path, "-a", "127.0.0.1:0", "-c", "100", "--collectors-unknown-fields=fatal"}),
      SimulatedGpus());
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_TRUE((*d)->Start().ok());
  std::ofstream(path, std::ios::trunc) << kUtilList << "DCGM_FI_DEV_FROM_LATER, gauge, x\n";
  ::testing::internal::CaptureStderr();
  (*d)->ReloadNow(true, "test");
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(log, HasSubstr("collectors file rejected"));
  EXPECT_THAT(log, HasSubstr("daemon_test_unknown.csv:2: unknown field"));
  (*d)->Stop();
  std::remove(path.c_str());
}

// Hardening round two, row 3 (docs/faults.md): a file being written is never applied half-way.
// The poll that sees a change waits for the next one to find the file the same; a file that
// parses into no field (truncated to nothing) is rejected and counted, the fields in use stay; a
// SIGHUP reload logs its own trigger.
TEST_F(DaemonTest, ReloadWaitsForAStableFileAndRefusesAnEmptyOne) {
  const std::string path = ::testing::TempDir() + "daemon_test_stable.csv";
  const std::string a = kUtilList, b = kUtilTempList;
  std::unique_ptr<Daemon> started;
  StartServingList(path, &started);
  if (HasFatalFailure()) return;
  Daemon& daemon = *started;
  const uint16_t port = daemon.port();

  // Truncated (what a ConfigMap update or an editor can leave for a moment), seen by one poll,
  // then written: the empty version is never applied; the written one is, one poll later.
  std::ofstream(path, std::ios::trunc).flush();
  ::testing::internal::CaptureStderr();
  daemon.ReloadNow(false, "change");
  std::ofstream(path, std::ios::trunc) << b;
  daemon.ReloadNow(false, "change");  // changed again since the last poll: still waiting
  std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(log, Not(HasSubstr("collectors file rejected")));
  EXPECT_THAT(log, Not(HasSubstr("collectors file reloaded")));
  // The next poll finds it as the last one did: read now (by this call, or by the daemon's own
  // reloader if its poll came first).
  ::testing::internal::CaptureStderr();
  daemon.ReloadNow(false, "change");
  std::string m = AwaitMetrics(port, [](const std::string& b) {
    return b.find("DCGM_FI_DEV_GPU_TEMP{gpu=\"0\"") != std::string::npos;
  });
  log = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(log, HasSubstr("collectors file reloaded"));
  EXPECT_THAT(log, HasSubstr("trigger=change"));
  EXPECT_THAT(m, HasSubstr("nvml_exporter_config_reload_failures_total 0\n"))
      << "the empty version was read";

  // A file that stays empty is rejected once, counted, and the fields in use stay.
  std::ofstream(path, std::ios::trunc).flush();
  ::testing::internal::CaptureStderr();
  daemon.ReloadNow(false, "change");
  daemon.ReloadNow(false, "change");
  daemon.ReloadNow(false, "change");
  log = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(log, HasSubstr("no field to collect"));
  m = AwaitMetrics(port, [](const std::string& b) {
    return b.find("nvml_exporter_config_reload_failures_total 1\n") != std::string::npos;
  });
  EXPECT_THAT(m, HasSubstr("nvml_exporter_config_reload_failures_total 1\n"));
  EXPECT_THAT(m, HasSubstr("DCGM_FI_DEV_GPU_TEMP{gpu=\"0\"")) << "the old fields stay";

  // SIGHUP's reload (Daemon::Reload) is logged as such, not as a change.
  std::ofstream(path, std::ios::trunc) << a;
  ::testing::internal::CaptureStderr();
  daemon.Reload("SIGHUP");
  m = AwaitMetrics(port, [](const std::string& b) {
    return b.find("DCGM_FI_DEV_GPU_TEMP{") == std::string::npos;
  });
  log = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(log, HasSubstr("trigger=SIGHUP"));
  EXPECT_THAT(log, Not(HasSubstr("trigger=change")));
  daemon.Stop();
  std::remove(path.c_str());
}

}  // namespace
}  // namespace nvmlx::app
