// The collector against a stuck or failing driver (docs/faults.md): a call that never returns on
// one GPU leaves the other GPUs collected every interval, marks that GPU stale, piles up no reads,
// and the GPU is fresh again once the call returns; Stop is bounded and says what is stuck; a
// GPU whose every read fails is down. The loops tick on a FakeClock and the simulator's clock is
// frozen and stepped, so nothing waits on the wall clock but the (released) hang itself.
#include <dirent.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <string>
#include <thread>

#include "collect/collector.h"
#include "fields/field_ids.h"
#include "plan/plan_test_util.h"
#include "tools/simgpu/sim_control.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/mutex.h"

namespace nvmlx::collect {
namespace {

using plan::testing::FindIn;
using plan::testing::PlanOf;
using plan::testing::Row;

using std::chrono::milliseconds;

constexpr int kGpuTemp = 150;
constexpr int kEnergy = 156;

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

size_t ThreadCount() {
  size_t n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d)) n += e->d_name[0] != '.' ? 1 : 0;
    closedir(d);
  }
  return n;
}

class StuckCollectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static bool log_ready = [] {
      log::Init(log::Format::kText, false);
      return true;
    }();
    (void)log_ready;
    setenv("NVMLX_SIMGPU_SCENARIO", NVMLX_SOURCE_DIR "/testdata/scenarios/hang.yaml", 1);
    setenv("NVMLX_SIMGPU_FROZEN_TIME_S", "0", 1);
    auto lib = nvml::Library::Load(NVMLX_SIMGPU_LIBRARY);
    ASSERT_TRUE(lib.ok()) << lib.status().ToString();
    lib_ = std::move(lib).value();
    options_.interval = milliseconds(100);
    options_.read_deadline = milliseconds(50);
    options_.clock = &clock_;
    options_.plan =
        PlanOf({Row("DCGM_FI_DEV_GPU_UTIL"), Row("DCGM_FI_DEV_GPU_TEMP"),
                Row("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", config::MetricType::kCounter)});
  }
  void TearDown() override {
    // Whatever a test left hung must return before the library goes.
    EXPECT_EQ(simgpu::ReleaseHangs(NVMLX_SIMGPU_LIBRARY), "");
    collector_.reset();
    unsetenv("NVMLX_SIMGPU_FROZEN_TIME_S");
  }

  void Start() {
    auto c = Collector::Create(*lib_, options_);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    collector_ = std::move(c).value();
    collector_->Start([this](std::shared_ptr<const model::Snapshot> s) {
      util::MutexLock lock(&mu_);
      got_.push_back(std::move(s));
      published_.SignalAll();
    });
    ASSERT_TRUE(clock_.AwaitWaiters(1));  // the loop parked after the first publish
  }
  // Waits (bounded in real time) for the n-th snapshot and returns it.
  std::shared_ptr<const model::Snapshot> Await(size_t n) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    util::MutexLock lock(&mu_);
    while (got_.size() < n && !published_.WaitUntil(&mu_, deadline)) {
    }
    return got_.size() >= n ? got_[n - 1] : nullptr;
  }
  size_t published() {
    util::MutexLock lock(&mu_);
    return got_.size();
  }
  // Waits (bounded, in real time) until at most `n` reads are in progress: the fake clock must
  // not jump while a healthy GPU's read is still running, or that read would look stuck.
  void AwaitReadsInProgress(size_t n) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (collector_->ReadsInProgress() > n && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    }
    EXPECT_LE(collector_->ReadsInProgress(), n);
  }
  // Waits (bounded, in real time) until `n` calls are blocked inside the simulator: the read in
  // progress may still be on its way to the hung call (TSan on a busy machine once advanced the
  // deadline while it was between calls, and the log named no call).
  void AwaitHungCalls(size_t n) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (simgpu::HungCalls(NVMLX_SIMGPU_LIBRARY) < static_cast<int>(n) &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    }
    EXPECT_GE(simgpu::HungCalls(NVMLX_SIMGPU_LIBRARY), static_cast<int>(n));
  }
  // One interval: the loop ticks; when GPU 0 hangs at this tick, the loop then waits for the
  // read deadline, which the test passes once the healthy GPUs have answered (the schedule keeps
  // its ticks: the next one is still one interval after this one). `hung`: how many reads stay
  // in progress (GPU 0's fast one while hung: its slow read would follow it, so it never starts).
  // Returns the round's snapshot.
  std::shared_ptr<const model::Snapshot> Tick(bool expect_wait, size_t hung) {
    const size_t n = published() + 1;
    clock_.Advance(options_.interval);
    if (expect_wait) {
      EXPECT_TRUE(clock_.AwaitWaiters(1));  // the loop waits on its read deadline
      AwaitReadsInProgress(hung);
      AwaitHungCalls(hung);
      clock_.Advance(options_.read_deadline);
    }
    auto snap = Await(n);
    // The loop parked again and the healthy reads (slow ones included) done before the next
    // Advance, so that each Advance is one tick and no healthy read looks stuck.
    EXPECT_TRUE(clock_.AwaitWaiters(1));
    AwaitReadsInProgress(hung);
    return snap;
  }

  util::FakeClock clock_;
  std::unique_ptr<nvml::Library> lib_;
  CollectorOptions options_;
  std::unique_ptr<Collector> collector_;
  util::Mutex mu_;
  util::CondVar published_;
  std::vector<std::shared_ptr<const model::Snapshot>> got_;  // guarded by mu_
};

// Defect 3 of the hardening issue: a temperature read blocked on GPU 0 froze every GPU's series,
// with no log line and gpu_up still 1.
TEST_F(StuckCollectorTest, HungCallOnOneGpuLeavesTheOthersCollected) {
  ::testing::internal::CaptureStderr();
  Start();
  auto first = Await(1);
  ASSERT_NE(first, nullptr);
  EXPECT_TRUE(first->devices[0].up);
  EXPECT_FALSE(first->devices[0].stale);
  ASSERT_EQ(simgpu::SetFrozenTime(NVMLX_SIMGPU_LIBRARY, 10), "");  // GPU 0's reads hang from now

  auto stuck = Tick(/*expect_wait=*/true, /*hung=*/1);
  ASSERT_NE(stuck, nullptr);
  EXPECT_TRUE(stuck->devices[0].stale);
  EXPECT_FALSE(stuck->devices[0].up);
  EXPECT_TRUE(stuck->devices[0].samples.empty()) << "a stale GPU's series are left out";
  EXPECT_TRUE(stuck->devices[1].up);
  EXPECT_FALSE(stuck->devices[1].stale);
  ASSERT_NE(FindIn(stuck->devices[1], kGpuTemp), nullptr);
  EXPECT_EQ(std::get<int64_t>(FindIn(stuck->devices[1], kGpuTemp)->value), 41);

  // Later rounds skip GPU 0 (its read still runs: no second read, no new thread) and publish
  // without waiting for the deadline.
  const size_t threads = ThreadCount();
  for (int round = 0; round < 20; ++round) {
    auto snap = Tick(/*expect_wait=*/false, /*hung=*/1);
    ASSERT_NE(snap, nullptr) << "round " << round << " waiters " << clock_.waiters()
                             << " published " << published();
    EXPECT_TRUE(snap->devices[0].stale);
    EXPECT_TRUE(snap->devices[1].up);
    EXPECT_NE(FindIn(snap->devices[1], kGpuTemp), nullptr);
  }
  EXPECT_EQ(ThreadCount(), threads) << "a stuck read must not pile up threads";
  // GPU 0's slow read follows its fast read on the slow worker, so it does not start while the
  // fast one hangs (the hung energy read of the scenario is never reached); GPU 1's slow reads go
  // on. (A slow read stuck on its own: lifecycle_test's hang_slow.yaml.)
  auto slow = Await(published());
  EXPECT_FALSE(slow->devices[1].slow_stale);
  EXPECT_NE(FindIn(slow->devices[1], kEnergy), nullptr);
  const std::vector<std::string> stuck_calls = collector_->StuckCalls();
  ASSERT_EQ(stuck_calls.size(), 1u);
  EXPECT_NE(stuck_calls[0].find("gpu=0 loop=fast call=nvmlDeviceGetTemperature"), std::string::npos)
      << stuck_calls[0];

  // The stuck calls return: the next round is fresh again, fast and slow. GPU 0's released read
  // and the slow read that follows it finish first: a tick while they run would move the fake
  // clock past their deadline (a TSan run on a loaded machine once logged "GPU slow read did
  // not finish" here).
  ASSERT_EQ(simgpu::ReleaseHangs(NVMLX_SIMGPU_LIBRARY), "");
  AwaitReadsInProgress(0);
  std::shared_ptr<const model::Snapshot> fresh;
  for (int round = 0; round < 50; ++round) {
    fresh = Tick(/*expect_wait=*/false, /*hung=*/0);
    if (fresh->devices[0].up && !fresh->devices[0].slow_stale &&
        FindIn(fresh->devices[0], kEnergy) != nullptr) {
      break;
    }
  }
  ASSERT_TRUE(fresh->devices[0].up);
  EXPECT_FALSE(fresh->devices[0].stale);
  EXPECT_FALSE(fresh->devices[0].slow_stale);
  ASSERT_NE(FindIn(fresh->devices[0], kGpuTemp), nullptr);
  EXPECT_EQ(std::get<int64_t>(FindIn(fresh->devices[0], kGpuTemp)->value), 40);
  EXPECT_TRUE(collector_->Stop(std::chrono::steady_clock::now() + std::chrono::seconds(5)));
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(Count(log, "GPU read did not finish within the read deadline"), 1u) << log;
  EXPECT_EQ(Count(log, "call=nvmlDeviceGetTemperature"), 1u) << log;
  EXPECT_EQ(Count(log, "GPU slow read did not finish"), 0u) << log;
  EXPECT_EQ(Count(log, "GPU reads answer again"), 1u) << log;
}

// Hardening round two, row 5: a call hung in one GPU's set-up (its readers' priming reads, from
// the start) kept Create, and with it the port, waiting for ever. Create now gives up on that GPU
// at the set-up deadline, having named its call at the read deadline; the GPU is published stale
// as setting up, with its call; the other GPU is collected; once the call returns, the GPU's
// first answer is logged and its series start.
TEST_F(StuckCollectorTest, HungSetUpOnOneGpuLeavesTheOthersCollected) {
  // The scenario whose GPU 0 temperature read hangs from the first call (the World is built
  // again at the next load).
  lib_.reset();
  setenv("NVMLX_SIMGPU_SCENARIO", NVMLX_SOURCE_DIR "/testdata/scenarios/hang_start.yaml", 1);
  auto lib = nvml::Library::Load(NVMLX_SIMGPU_LIBRARY);
  ASSERT_TRUE(lib.ok()) << lib.status().ToString();
  lib_ = std::move(lib).value();
  ::testing::internal::CaptureStderr();
  Result<std::unique_ptr<Collector>> created = InvalidArgument("not created");
  std::thread creator([&] { created = Collector::Create(*lib_, options_); });
  // Create waits on the fake clock: first until the read deadline, then until the set-up one.
  ASSERT_TRUE(clock_.AwaitWaiters(1));
  AwaitHungCalls(1);
  clock_.Advance(options_.read_deadline);
  ASSERT_TRUE(clock_.AwaitWaiters(1));
  clock_.Advance(Collector::kSetUpDeadline);
  creator.join();
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  collector_ = std::move(created).value();
  collector_->Start([this](std::shared_ptr<const model::Snapshot> s) {
    util::MutexLock lock(&mu_);
    got_.push_back(std::move(s));
    published_.SignalAll();
  });
  ASSERT_TRUE(clock_.AwaitWaiters(1));
  auto first = Await(1);
  ASSERT_NE(first, nullptr);
  ASSERT_EQ(first->devices.size(), 2u);
  EXPECT_FALSE(first->devices[0].up);
  EXPECT_TRUE(first->devices[0].stale);
  EXPECT_TRUE(first->devices[0].setting_up);
  EXPECT_EQ(first->devices[0].stuck_call, "nvmlDeviceGetTemperature");
  EXPECT_TRUE(first->devices[0].samples.empty());
  EXPECT_EQ(first->identities->at(0).uuid, "GPU-00000000-0000-0000-0000-000000000000")
      << "opened and identified: only its priming read hangs";
  EXPECT_TRUE(first->devices[1].up);
  EXPECT_FALSE(first->devices[1].setting_up);
  ASSERT_NE(FindIn(first->devices[1], kGpuTemp), nullptr);
  // Later rounds do not wait for it (its worker is busy: no read is posted).
  auto second = Tick(/*expect_wait=*/false, /*hung=*/1);
  ASSERT_NE(second, nullptr);
  EXPECT_TRUE(second->devices[0].setting_up);
  EXPECT_NE(FindIn(second->devices[1], kGpuTemp), nullptr);

  // The call returns: the set-up ends, and GPU 0 is read from the next round on.
  ASSERT_EQ(simgpu::ReleaseHangs(NVMLX_SIMGPU_LIBRARY), "");
  AwaitReadsInProgress(0);
  std::shared_ptr<const model::Snapshot> fresh;
  for (int round = 0; round < 50; ++round) {
    fresh = Tick(/*expect_wait=*/false, /*hung=*/0);
    if (fresh->devices[0].up) break;
  }
  ASSERT_TRUE(fresh->devices[0].up);
  EXPECT_FALSE(fresh->devices[0].setting_up);
  EXPECT_NE(FindIn(fresh->devices[0], kGpuTemp), nullptr);
  EXPECT_TRUE(collector_->Stop(std::chrono::steady_clock::now() + std::chrono::seconds(5)));
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(Count(log, "GPU set-up has not finished within the read deadline"), 1u) << log;
  EXPECT_EQ(Count(log, "GPU set-up did not finish within the set-up deadline"), 1u) << log;
  EXPECT_EQ(Count(log, "call=nvmlDeviceGetTemperature"), 2u) << log;
  EXPECT_EQ(Count(log, "GPU read did not finish within the read deadline"), 0u)
      << "said once, at set-up: " << log;
  EXPECT_EQ(Count(log, "GPU set-up finished; its series start"), 1u) << log;
  setenv("NVMLX_SIMGPU_SCENARIO", NVMLX_SOURCE_DIR "/testdata/scenarios/hang.yaml", 1);
}

// Defect 1 at the collector's level: Stop returns by its deadline with a call hung, and says
// where; once the call returns, the collector can be destroyed.
TEST_F(StuckCollectorTest, StopIsBoundedWithACallHung) {
  Start();
  ASSERT_EQ(simgpu::SetFrozenTime(NVMLX_SIMGPU_LIBRARY, 10), "");
  auto stuck = Tick(/*expect_wait=*/true, /*hung=*/1);
  ASSERT_NE(stuck, nullptr);
  ASSERT_TRUE(stuck->devices[0].stale);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(collector_->Stop(start + milliseconds(200)));
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_LT(took, std::chrono::seconds(2)) << "Stop must not wait for the hung call";
  std::vector<std::string> stuck_calls = collector_->StuckCalls();
  ASSERT_FALSE(stuck_calls.empty());
  EXPECT_NE(stuck_calls[0].find("gpu=0 loop=fast call=nvmlDeviceGetTemperature"), std::string::npos)
      << stuck_calls[0];
  ASSERT_EQ(simgpu::ReleaseHangs(NVMLX_SIMGPU_LIBRARY), "");
  EXPECT_TRUE(collector_->Stop(std::chrono::steady_clock::now() + std::chrono::seconds(10)));
}

// Defect 4 of the hardening issue: gpu_up stayed 1 when every read of a GPU failed.
TEST_F(StuckCollectorTest, EveryReadFailingIsDown) {
  options_.plan = PlanOf(
      {Row("DCGM_FI_DEV_GPU_UTIL"), Row("DCGM_FI_DEV_GPU_TEMP"), Row("DCGM_FI_DEV_POWER_USAGE")});
  auto c = Collector::Create(*lib_, options_);
  ASSERT_TRUE(c.ok());
  collector_ = std::move(c).value();
  ASSERT_EQ(simgpu::ReleaseHangs(NVMLX_SIMGPU_LIBRARY), "");  // GPU 0 answers here
  ASSERT_EQ(simgpu::SetFrozenTime(NVMLX_SIMGPU_LIBRARY, 10), "");
  auto snap = collector_->CollectOnce();
  EXPECT_TRUE(snap->devices[0].up);
  EXPECT_TRUE(snap->devices[1].up);
  EXPECT_FALSE(snap->devices[2].up) << "every read of GPU 2 fails";
  EXPECT_FALSE(snap->devices[2].stale);
  EXPECT_TRUE(snap->devices[2].samples.empty());
}

}  // namespace
}  // namespace nvmlx::collect
