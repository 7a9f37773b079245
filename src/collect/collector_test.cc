#include "collect/collector.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <utility>
#include <vector>

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

// What a started Collector publishes, for tests that drive its ticks: Await(n) waits (bounded
// in real time, so a broken loop fails instead of hanging) until n snapshots came. Thread-safe:
// the publish callback runs on the collector's loop.
class Published {
 public:
  Collector::PublishFn Fn() {
    return [this](std::shared_ptr<const model::Snapshot> s) {
      util::MutexLock lock(&mu_);
      got_.push_back(std::move(s));
      cv_.SignalAll();
    };
  }
  size_t Await(size_t n) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    util::MutexLock lock(&mu_);
    while (got_.size() < n && !cv_.WaitUntil(&mu_, deadline)) {
    }
    return got_.size();
  }
  std::vector<std::shared_ptr<const model::Snapshot>> Take() {
    util::MutexLock lock(&mu_);
    return got_;
  }

 private:
  util::Mutex mu_;
  util::CondVar cv_;
  std::vector<std::shared_ptr<const model::Snapshot>> got_ NVMLX_GUARDED_BY(mu_);
};

class CollectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("NVMLX_SIMGPU_SCENARIO", NVMLX_SOURCE_DIR "/testdata/scenarios/collector_faults.yaml",
           1);
    unsetenv("NVMLX_SIMGPU_FROZEN_TIME_S");
    auto lib = nvml::Library::Load(NVMLX_SIMGPU_LIBRARY);
    ASSERT_TRUE(lib.ok()) << lib.status().ToString();
    lib_ = std::move(lib).value();
    options_.interval = milliseconds(100);
    options_.plan =
        PlanOf({Row("DCGM_FI_DEV_GPU_UTIL"), Row("DCGM_FI_DEV_FAN_SPEED"),
                Row("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", config::MetricType::kCounter),
                Row("DCGM_FI_DEV_POWER_USAGE"),
                Row("DCGM_FI_DRIVER_VERSION", config::MetricType::kLabel)});
  }
  std::unique_ptr<nvml::Library> lib_;
  CollectorOptions options_;
};

TEST_F(CollectorTest, IdentityAndLabelsReadOnce) {
  auto c = Collector::Create(*lib_, options_);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const auto& ids = (*c)->identities();
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_EQ(ids[2].index, 2u);
  EXPECT_EQ(ids[0].model_name, "NVIDIA H200");
  EXPECT_FALSE(ids[0].uuid.empty());
  ASSERT_EQ(ids[0].label_values.size(), 1u);
  EXPECT_EQ(ids[0].label_values[0].second, "580.159.04");
}

TEST_F(CollectorTest, OnceReadsSlowFieldsAndOmitsFailures) {
  auto c = Collector::Create(*lib_, options_);
  ASSERT_TRUE(c.ok());
  auto snap = (*c)->CollectOnce();
  ASSERT_EQ(snap->devices.size(), 3u);
  const model::DeviceSnapshot& d0 = snap->devices[0];
  ASSERT_NE(FindIn(d0, 203), nullptr);
  EXPECT_EQ(std::get<int64_t>(FindIn(d0, 203)->value), 77);
  EXPECT_EQ(FindIn(d0, 191), nullptr) << "NOT_SUPPORTED fan speed must be omitted";
  EXPECT_NE(FindIn(d0, 156), nullptr) << "--once includes slow fields";
  EXPECT_GE(snap->collect_seconds, 0.6) << "slow energy read inline (GPUs in parallel)";
  EXPECT_LT(snap->collect_seconds, 0.6 * 3 * 2) << "each GPU on its own worker";
  for (size_t i = 1; i < d0.samples.size(); ++i) {
    EXPECT_LT(d0.samples[i - 1].field_id, d0.samples[i].field_id);
  }
}

// The loops tick on a FakeClock: the test moves time one interval at a time and waits for each
// publish, so the number of collections is exact and nothing sleeps on the wall clock. The slow
// reads that follow each fast round (600 ms of real, simulated energy read per GPU) overlap the
// fast rounds that follow; collect_seconds is real time, so a fast round held up by a slow read
// still fails.
TEST_F(CollectorTest, SlowFieldsDoNotDelayFastOnesAndLostGpuStops) {
  util::FakeClock clock;
  options_.clock = &clock;
  // The simulated slow reads take 1.2 s of real time; the fake clock moves 0.5 s: never stale.
  options_.read_deadline = std::chrono::seconds(10);
  auto c = Collector::Create(*lib_, options_);
  ASSERT_TRUE(c.ok());
  Published published;
  (*c)->Start(published.Fn());
  auto await = [&](size_t n) { return published.Await(n); };
  // First publish is inline (slow fields included, ~1.8 s); then nothing until the clock moves.
  ASSERT_TRUE(clock.AwaitWaiters(1));  // the loop parked
  clock.Advance(options_.interval - milliseconds(1));
  EXPECT_EQ(clock.waiters(), 1u) << "no tick before the interval is over";
  EXPECT_EQ(await(1), 1u);
  clock.Advance(milliseconds(1));
  for (size_t tick = 1; tick <= 5; ++tick) {
    ASSERT_EQ(await(tick + 1), tick + 1) << "tick " << tick;
    if (tick < 5) clock.Advance(options_.interval);
  }
  (*c)->Stop();
  const std::vector<std::shared_ptr<const model::Snapshot>> got = published.Take();
  ASSERT_EQ(got.size(), 6u) << "exactly one collection per interval";
  for (size_t i = 1; i < got.size(); ++i) {
    EXPECT_LT(got[i]->collect_seconds, 0.3) << "fast round " << i << " waited on a slow field";
  }
  const model::Snapshot& last = *got.back();
  EXPECT_TRUE(last.devices[0].up);
  EXPECT_FALSE(last.devices[1].up) << "GPU 1 is lost after 0.5 s";
  EXPECT_TRUE(last.devices[1].samples.empty());
  EXPECT_TRUE(last.devices[2].up);
  ASSERT_NE(FindIn(last.devices[2], 203), nullptr);
  EXPECT_EQ(std::get<int64_t>(FindIn(last.devices[2], 203)->value), 33);
  EXPECT_NE(FindIn(last.devices[0], 156), nullptr) << "slow value merged from the slow cache";
}

// Watch groups (plan::Cadences): a field of a group slower than the interval is read at the
// group's cadence on the slow worker, and its last value is served by every collection in
// between. Counted on the simulator's own call counters; the loop ticks on a FakeClock.
TEST(CadenceCollectorTest, WatchGroupFieldsAreReadAtTheirCadence) {
  setenv("NVMLX_SIMGPU_SCENARIO", NVMLX_SOURCE_DIR "/testdata/scenarios/one_gpu.yaml", 1);
  unsetenv("NVMLX_SIMGPU_FROZEN_TIME_S");
  auto lib = nvml::Library::Load(NVMLX_SIMGPU_LIBRARY);
  ASSERT_TRUE(lib.ok()) << lib.status().ToString();
  util::FakeClock clock;
  CollectorOptions options;
  options.interval = milliseconds(100);
  options.clock = &clock;
  options.read_deadline = std::chrono::seconds(10);
  plan::Cadences cadences{
      options.interval,
      {{"energy", milliseconds(300), {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"}, "c.yaml:3"},
       {"clock", milliseconds(500), {"DCGM_FI_DEV_SM_CLOCK"}, "c.yaml:7"}}};
  auto plan = plan::FieldPlan::Build(
      {Row("DCGM_FI_DEV_GPU_TEMP"),
       Row("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", config::MetricType::kCounter),
       Row("DCGM_FI_DEV_SM_CLOCK")},
      "test.csv", cadences);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  options.plan = *plan;
  auto c = Collector::Create(**lib, options);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto calls = [](const char* key) { return simgpu::CallCount(NVMLX_SIMGPU_LIBRARY, key); };
  const long long energy0 = calls("field:83");  // NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION
  const long long clock0 = calls("nvmlDeviceGetClockInfo");
  const long long temp0 = calls("nvmlDeviceGetTemperature");
  ASSERT_GE(energy0, 0) << "the simulator counts calls";

  Published published;
  (*c)->Start(published.Fn());
  auto await = [&](size_t n) { return published.Await(n); };
  // Every read of a round done before the clock moves: the slow worker reads at the tick's time.
  auto settle = [&] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while ((*c)->ReadsInProgress() > 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(1));
    }
  };
  ASSERT_TRUE(clock.AwaitWaiters(1));
  ASSERT_EQ(await(1), 1u);
  settle();
  for (size_t tick = 1; tick <= 10; ++tick) {  // collections at 100 ms .. 1000 ms
    clock.Advance(options.interval);
    ASSERT_EQ(await(tick + 1), tick + 1) << "tick " << tick;
    settle();
  }
  (*c)->Stop();
  // Temperature every collection (11); energy at 0, 300, 600, 900 ms; the clock at 0, 500,
  // 1000 ms.
  EXPECT_EQ(calls("nvmlDeviceGetTemperature") - temp0, 11);
  EXPECT_EQ(calls("field:83") - energy0, 4);
  EXPECT_EQ(calls("nvmlDeviceGetClockInfo") - clock0, 3);
  const std::vector<std::shared_ptr<const model::Snapshot>> got = published.Take();
  // Held in between: every collection after the first serves both (the first has the inline
  // slow read too).
  for (size_t i = 0; i < got.size(); ++i) {
    const model::DeviceSnapshot& d = got[i]->devices[0];
    EXPECT_NE(FindIn(d, 156), nullptr) << "energy in collection " << i;
    EXPECT_NE(FindIn(d, 100), nullptr) << "SM clock in collection " << i;
    EXPECT_NE(FindIn(d, 150), nullptr) << "temperature in collection " << i;
  }
}

TEST_F(CollectorTest, SelectorNamingMissingGpuFails) {
  options_.devices.kind = config::DeviceSelector::Kind::kGpus;
  options_.devices.all = false;
  options_.devices.ids = {0, 9};
  auto c = Collector::Create(*lib_, options_);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("GPU 9"), std::string::npos) << c.status().message();
}

size_t Count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

// log::Init may run once per process; the tests that capture log lines share this.
void InitLogOnce() {
  static bool log_ready = [] {
    log::Init(log::Format::kText, false);
    return true;
  }();
  (void)log_ready;
}

class GpmCollectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    InitLogOnce();
    setenv("NVMLX_SIMGPU_SCENARIO", NVMLX_SOURCE_DIR "/testdata/scenarios/gpm.yaml", 1);
    unsetenv("NVMLX_SIMGPU_FROZEN_TIME_S");
    auto lib = nvml::Library::Load(NVMLX_SIMGPU_LIBRARY);
    ASSERT_TRUE(lib.ok()) << lib.status().ToString();
    lib_ = std::move(lib).value();
    options_.interval = milliseconds(100);
    options_.plan = PlanOf({Row("DCGM_FI_DEV_GPU_UTIL"), Row("DCGM_FI_PROF_GR_ENGINE_ACTIVE"),
                            Row("DCGM_FI_PROF_PCIE_TX_BYTES"), Row("DCGM_FI_PROF_NVLINK_TX_BYTES"),
                            Row("DCGM_FI_PROF_NVLINK_RX_BYTES")});
  }
  std::unique_ptr<nvml::Library> lib_;
  CollectorOptions options_;
};

// A profiling source that is not ready at the first read after its priming and ready
// kCatchUpWindow after that read (GPM's 100 ms, made long enough that Start decides on its
// catch-up round well within it even on a slow machine): its first Read gives nothing, every Read
// from ReadyAt on gives DCGM_FI_PROF_GR_ENGINE_ACTIVE = 0.5. Thread-safety: used on one GPU's
// fast worker; the counters are atomic so that the test may read them.
class NotReadyAtFirstReadSource : public ProfilingSource {
 public:
  static constexpr std::chrono::seconds kCatchUpWindow{1};
  explicit NotReadyAtFirstReadSource(std::vector<const fields::FieldDef*> fields)
      : fields_(std::move(fields)) {}
  Status Read(std::vector<model::Sample>* samples,
              std::vector<fields::FieldError>* /*errors*/) override {
    const Clock::time_point now = Clock::now();
    if (reads_.fetch_add(1) == 0) {
      ready_at_.store((now + kCatchUpWindow).time_since_epoch().count());
      return Status::Ok();
    }
    if (now >= ReadyAt()) samples->push_back(model::Sample{1001, 0.5});
    return Status::Ok();
  }
  Clock::time_point ReadyAt() const override {
    return Clock::time_point(Clock::duration(ready_at_.load()));
  }
  Clock::time_point OnceReadyAt() const override { return ReadyAt(); }
  const std::vector<const fields::FieldDef*>& fields() const override { return fields_; }
  std::string_view name() const override { return "not_ready_at_first_read"; }

 private:
  const std::vector<const fields::FieldDef*> fields_;
  std::atomic<int> reads_{0};
  // Before the first read: the epoch (long past: not ready, and no catch-up due).
  std::atomic<Clock::rep> ready_at_{0};
};

// Start-up (issue 15): profiling values (GPM's) need two samples a window apart, and the first
// snapshot usually comes sooner after the priming sample, so Start takes one more round as soon
// as the source can answer instead of an interval later. With a source that is never ready at
// the first read, the catch-up round must come, deterministically: the first snapshot has no
// profiling value, the second has it, and the fake clock never moves (no interval tick can be
// what publishes it).
TEST_F(GpmCollectorTest, StartTakesACatchUpRoundWhenProfilingIsReady) {
  util::FakeClock clock;
  options_.clock = &clock;
  options_.interval = std::chrono::seconds(30);  // the catch-up must be < 15 s away: it is 1 s
  std::atomic<int> sources{0};
  options_.profiling_source = [&sources](unsigned, const std::vector<const fields::FieldDef*>& f)
      -> std::unique_ptr<ProfilingSource> {
    sources.fetch_add(1);
    return std::make_unique<NotReadyAtFirstReadSource>(f);
  };
  auto c = Collector::Create(*lib_, options_);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_GE(sources.load(), 1) << "the Collector built its profiling sources with the hook";
  Published published;
  (*c)->Start(published.Fn());
  ASSERT_EQ(published.Await(2), 2u) << "the catch-up round, without any tick of the fake clock";
  EXPECT_TRUE(clock.AwaitWaiters(1)) << "then the loop waits for its first tick";
  (*c)->Stop();
  const std::vector<std::shared_ptr<const model::Snapshot>> got = published.Take();
  ASSERT_EQ(got.size(), 2u) << "one extra round, no more";
  for (size_t gpu = 0; gpu < got[0]->devices.size(); ++gpu) {
    if (!got[0]->devices[gpu].up) continue;
    EXPECT_EQ(FindIn(got[0]->devices[gpu], 1001), nullptr) << "not ready at the first read";
    ASSERT_NE(FindIn(got[1]->devices[gpu], 1001), nullptr) << "gpu " << gpu;
    EXPECT_DOUBLE_EQ(std::get<double>(FindIn(got[1]->devices[gpu], 1001)->value), 0.5);
  }
  EXPECT_TRUE(got[0]->devices[0].up);
}

// The same with NVML's GPM: its values come before the first tick, in the first snapshot (a slow
// machine, where the priming sample is a window old by then) or in the catch-up round (which the
// test above checks deterministically).
TEST_F(GpmCollectorTest, StartPublishesGpmValuesBeforeTheFirstTick) {
  util::FakeClock clock;
  options_.clock = &clock;
  options_.interval = std::chrono::seconds(30);
  auto c = Collector::Create(*lib_, options_);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  util::Mutex mu;
  util::CondVar published;
  std::vector<std::shared_ptr<const model::Snapshot>> got;  // guarded by mu
  (*c)->Start([&](std::shared_ptr<const model::Snapshot> s) {
    util::MutexLock lock(&mu);
    got.push_back(std::move(s));
    published.SignalAll();
  });
  auto has_gpm = [](const std::shared_ptr<const model::Snapshot>& s) {
    return FindIn(s->devices[0], 1001) != nullptr;
  };
  {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    util::MutexLock lock(&mu);
    while ((got.empty() || !has_gpm(got.back())) && !published.WaitUntil(&mu, deadline)) {
    }
    ASSERT_FALSE(got.empty());
    ASSERT_TRUE(has_gpm(got.back())) << "GPM values without any tick of the (fake) clock";
    EXPECT_DOUBLE_EQ(std::get<double>(FindIn(got.back()->devices[0], 1001)->value), 0.5);
  }
  EXPECT_TRUE(clock.AwaitWaiters(1)) << "then the loop waits for its first tick";
  (*c)->Stop();
  util::MutexLock lock(&mu);
  EXPECT_LE(got.size(), 2u) << "one extra round at most";
}

// A reload (SetPlan) is stamped on the next snapshot. One that leaves a GPU's fields as they were
// (here: only a help text changed) keeps its readers, so the GPM window goes on and no profiling
// series skips a collection; one that drops a field drops its series at once.
TEST_F(GpmCollectorTest, ReloadStampsThePlanAndKeepsUnchangedReaders) {
  auto c = Collector::Create(*lib_, options_);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto first = (*c)->CollectOnce();
  EXPECT_EQ(first->plan, options_.plan);
  ASSERT_NE(FindIn(first->devices[0], 1001), nullptr);

  std::vector<config::CollectorEntry> rows = options_.plan->rows();
  rows[0].help = "another help text";
  auto same_fields = PlanOf(rows);
  EXPECT_FALSE((*c)->SetPlan(same_fields)) << "no Xid field: no restart needed";
  auto second = (*c)->CollectOnce();
  EXPECT_EQ(second->plan, same_fields);
  EXPECT_NE(FindIn(second->devices[0], 1001), nullptr) << "GPM reader kept across the reload";
  EXPECT_NE(FindIn(second->devices[0], 1009), nullptr);

  rows.erase(rows.begin() + 2);  // DCGM_FI_PROF_PCIE_TX_BYTES
  auto fewer = PlanOf(rows);
  ASSERT_FALSE((*c)->SetPlan(fewer));
  auto third = (*c)->CollectOnce();
  EXPECT_EQ(third->plan, fewer);
  EXPECT_EQ(FindIn(third->devices[0], 1009), nullptr);
  (*c)->Stop();
}

TEST_F(GpmCollectorTest, ProfFieldsFromGpmUnsupportedOmittedFailureLoggedOnce) {
  ::testing::internal::CaptureStderr();
  auto c = Collector::Create(*lib_, options_);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const auto start = std::chrono::steady_clock::now();
  auto snap = (*c)->CollectOnce();
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(140))
      << "--once waits for a GPM window";
  auto snap2 = (*c)->CollectOnce();
  const std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_EQ(snap->devices.size(), 3u);

  // GPU 0: ratio = percent / 100; bytes/s = MiB/s * 2^20; DCGM's NVLink TX (1011) is GPM 61.
  const model::DeviceSnapshot& d0 = snap->devices[0];
  ASSERT_NE(FindIn(d0, 1001), nullptr);
  EXPECT_DOUBLE_EQ(std::get<double>(FindIn(d0, 1001)->value), 0.5);
  ASSERT_NE(FindIn(d0, 1009), nullptr);
  EXPECT_EQ(std::get<int64_t>(FindIn(d0, 1009)->value), 2621440);
  ASSERT_NE(FindIn(d0, 1011), nullptr);
  EXPECT_EQ(std::get<int64_t>(FindIn(d0, 1011)->value), 1048576);
  ASSERT_NE(FindIn(d0, 1012), nullptr);
  EXPECT_EQ(std::get<int64_t>(FindIn(d0, 1012)->value), 2097152);
  for (size_t i = 1; i < d0.samples.size(); ++i) {
    EXPECT_LT(d0.samples[i - 1].field_id, d0.samples[i].field_id) << "PROF merged in order";
  }

  // GPU 1 has no GPM: PROF fields absent, one "metric not enabled" warning per field.
  const model::DeviceSnapshot& d1 = snap2->devices[1];
  EXPECT_NE(FindIn(d1, 203), nullptr);
  for (int id : {1001, 1009, 1011, 1012}) EXPECT_EQ(FindIn(d1, id), nullptr) << id;
  EXPECT_EQ(Count(log, "metric not enabled\" gpu=1 field=DCGM_FI_PROF_GR_ENGINE_ACTIVE"), 1u)
      << log;
  EXPECT_EQ(Count(log, "metric not enabled"), 4u) << log;

  // GPU 2: nvmlGpmMetricsGet fails: PROF omitted, logged once over two collections.
  const model::DeviceSnapshot& d2 = snap2->devices[2];
  EXPECT_TRUE(d2.up);
  EXPECT_NE(FindIn(d2, 203), nullptr);
  EXPECT_EQ(FindIn(d2, 1001), nullptr);
  EXPECT_EQ(Count(log, "GPM sampling failed"), 1u) << log;
  EXPECT_EQ(Count(log, "gpu=2"), 1u) << log;
}

// Polls CollectOnce, bounded in real time, until `done` holds: the Xid watcher receives events on
// its own thread, so a snapshot taken right after the simulated clock moved may not show them yet.
template <typename Pred>
std::shared_ptr<const model::Snapshot> AwaitSnapshot(Collector& c, Pred done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (;;) {
    auto snap = c.CollectOnce();
    if (done(*snap) || std::chrono::steady_clock::now() > deadline) return snap;
    std::this_thread::sleep_for(milliseconds(2));
  }
}

int64_t XidLast(const model::DeviceSnapshot& d) {
  const model::Sample* s = FindIn(d, fields::ids::kXidErrors);
  return s == nullptr ? -1 : std::get<int64_t>(s->value);
}

int64_t CountOf(const model::DeviceSnapshot& d, int64_t xid) {
  for (const model::XidCount& c : d.xid_counts) {
    if (c.xid == xid) return c.count;
  }
  return 0;
}

// Xids from NVML events: last value (sticky), counts within a 1 s window, and an Xid older than
// the window dropping out of the counts. A GPU that cannot register gets no XID data at all.
// The simulated clock is frozen and stepped (when Xids fall due); the window runs on a FakeClock
// (when they were received), so nothing sleeps through either.
TEST(XidCollectorTest, LastXidAndWindowedCounts) {
  setenv("NVMLX_SIMGPU_SCENARIO", NVMLX_SOURCE_DIR "/testdata/scenarios/xids.yaml", 1);
  setenv("NVMLX_SIMGPU_FROZEN_TIME_S", "0", 1);
  auto lib = nvml::Library::Load(NVMLX_SIMGPU_LIBRARY);
  ASSERT_TRUE(lib.ok()) << lib.status().ToString();
  util::FakeClock clock;
  CollectorOptions options;
  options.interval = milliseconds(100);
  options.xid_window = milliseconds(1000);
  options.clock = &clock;
  options.plan = PlanOf({Row("DCGM_FI_DEV_GPU_UTIL"), Row("DCGM_FI_DEV_XID_ERRORS"),
                         Row("DCGM_EXP_XID_ERRORS_COUNT", config::MetricType::kCounter)});
  auto c = Collector::Create(**lib, options);
  ASSERT_TRUE(c.ok()) << c.status().ToString();

  // Simulated t = 0: no Xid is due. Watched GPUs show 0; GPU 3 (registration failed) nothing.
  auto snap = (*c)->CollectOnce();
  ASSERT_EQ(snap->devices.size(), 4u);
  EXPECT_EQ(snap->xid_window_ms, 1000);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(XidLast(snap->devices[i]), 0) << "0 until an Xid arrives: gpu " << i;
    EXPECT_TRUE(snap->devices[i].xid_watched) << i;
    EXPECT_TRUE(snap->devices[i].xid_counts.empty()) << i;
  }
  const model::DeviceSnapshot& d3 = snap->devices[3];
  EXPECT_EQ(FindIn(d3, fields::ids::kXidErrors), nullptr) << "registration failed: omitted";
  EXPECT_FALSE(d3.xid_watched);
  EXPECT_NE(FindIn(d3, fields::ids::kGpuUtil), nullptr) << "other fields unaffected";

  // t = 0.25: GPU 1's first Xid 13 (due at 0.2) arrives.
  ASSERT_EQ(simgpu::SetFrozenTime(NVMLX_SIMGPU_LIBRARY, 0.25), "");
  snap =
      AwaitSnapshot(**c, [](const model::Snapshot& s) { return CountOf(s.devices[1], 13) == 1; });
  EXPECT_EQ(XidLast(snap->devices[1]), 13);
  EXPECT_EQ(CountOf(snap->devices[1], 13), 1);
  EXPECT_EQ(XidLast(snap->devices[0]), 0) << "GPU 0's Xid is due at 0.3 only";

  // 600 ms later (window clock), t = 0.8: GPU 0's Xid 48 and GPU 1's second Xid 13 arrive.
  clock.Advance(milliseconds(600));
  ASSERT_EQ(simgpu::SetFrozenTime(NVMLX_SIMGPU_LIBRARY, 0.8), "");
  snap = AwaitSnapshot(**c, [](const model::Snapshot& s) {
    return CountOf(s.devices[0], 48) == 1 && CountOf(s.devices[1], 13) == 2;
  });
  const model::DeviceSnapshot& d0 = snap->devices[0];
  EXPECT_EQ(XidLast(d0), 48);
  ASSERT_EQ(d0.xid_counts.size(), 1u);
  EXPECT_EQ(d0.xid_counts[0].xid, 48);
  EXPECT_EQ(d0.xid_counts[0].count, 1);
  const model::DeviceSnapshot& d1 = snap->devices[1];
  EXPECT_EQ(XidLast(d1), 13);
  ASSERT_EQ(d1.xid_counts.size(), 1u);
  EXPECT_EQ(d1.xid_counts[0].count, 2);
  EXPECT_EQ(XidLast(snap->devices[2]), 0);
  EXPECT_TRUE(snap->devices[2].xid_counts.empty());
  for (size_t i = 1; i < d0.samples.size(); ++i) {
    EXPECT_LT(d0.samples[i - 1].field_id, d0.samples[i].field_id);
  }

  // 500 ms later the first Xid 13 is 1.1 s old: out of the window; the rest stay.
  clock.Advance(milliseconds(500));
  snap = (*c)->CollectOnce();
  EXPECT_EQ(CountOf(snap->devices[1], 13), 1);
  EXPECT_EQ(CountOf(snap->devices[0], 48), 1);

  // 600 ms more: every Xid is older than 1 s. Counts empty, the last value sticks.
  clock.Advance(milliseconds(600));
  snap = (*c)->CollectOnce();
  EXPECT_EQ(XidLast(snap->devices[0]), 48);
  EXPECT_TRUE(snap->devices[0].xid_watched);
  EXPECT_TRUE(snap->devices[0].xid_counts.empty());
  EXPECT_TRUE(snap->devices[1].xid_counts.empty());
  EXPECT_EQ(XidLast(snap->devices[1]), 13);

  // Stop is prompt: the watcher waits in slices of at most kWaitTimeout.
  const auto stop_start = std::chrono::steady_clock::now();
  c->reset();
  EXPECT_LT(std::chrono::steady_clock::now() - stop_start,
            XidWatcher::kWaitTimeout + milliseconds(300));
  unsetenv("NVMLX_SIMGPU_FROZEN_TIME_S");
}

// Xid 79 (fallen off the bus) marks that GPU lost exactly as GPU_IS_LOST would: no samples,
// up == false, logged once; the GPUs around it are collected as before.
TEST(XidCollectorTest, Xid79MarksTheGpuLost) {
  setenv("NVMLX_SIMGPU_SCENARIO", NVMLX_SOURCE_DIR "/testdata/scenarios/xid_lost.yaml", 1);
  setenv("NVMLX_SIMGPU_FROZEN_TIME_S", "0", 1);
  auto lib = nvml::Library::Load(NVMLX_SIMGPU_LIBRARY);
  ASSERT_TRUE(lib.ok()) << lib.status().ToString();
  InitLogOnce();
  ::testing::internal::CaptureStderr();
  CollectorOptions options;
  options.interval = milliseconds(100);
  options.plan = PlanOf({Row("DCGM_FI_DEV_GPU_UTIL"), Row("DCGM_FI_DEV_XID_ERRORS"),
                         Row("DCGM_EXP_GPU_HEALTH_STATUS")});
  auto c = Collector::Create(**lib, options);
  ASSERT_TRUE(c.ok()) << c.status().ToString();

  auto before = (*c)->CollectOnce();  // t = 0: the Xid (due at 0.5) has not happened
  ASSERT_EQ(before->devices.size(), 3u);
  EXPECT_TRUE(before->devices[1].up);
  EXPECT_NE(FindIn(before->devices[1], fields::ids::kGpuUtil), nullptr);

  ASSERT_EQ(simgpu::SetFrozenTime(NVMLX_SIMGPU_LIBRARY, 1.0), "");
  AwaitSnapshot(**c, [](const model::Snapshot& s) { return !s.devices[1].up; });
  for (int round = 0; round < 2; ++round) {
    auto snap = (*c)->CollectOnce();
    EXPECT_TRUE(snap->devices[0].up);
    EXPECT_FALSE(snap->devices[1].up) << "round " << round;
    EXPECT_TRUE(snap->devices[1].samples.empty());
    // The lost GPU keeps its health: ALL fails, fallen off the bus (upstream's shape, 11 watches).
    ASSERT_EQ(snap->devices[1].health.size(), kHealthWatches.size());
    EXPECT_EQ(snap->devices[1].health.back().watch, "ALL");
    EXPECT_EQ(snap->devices[1].health.back().value, kHealthFail);
    EXPECT_EQ(snap->devices[1].health.back().error_code, "DCGM_FR_FALLEN_OFF_BUS");
    ASSERT_EQ(snap->devices[0].health.size(), kHealthWatches.size());
    EXPECT_EQ(snap->devices[0].health.back().value, kHealthPass);
    EXPECT_TRUE(snap->devices[2].up);
    ASSERT_NE(FindIn(snap->devices[2], fields::ids::kGpuUtil), nullptr);
    EXPECT_EQ(std::get<int64_t>(FindIn(snap->devices[2], fields::ids::kGpuUtil)->value), 30);
  }
  c->reset();
  unsetenv("NVMLX_SIMGPU_FROZEN_TIME_S");
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(Count(log, "GPU is lost"), 1u) << log;
  EXPECT_NE(log.find("Xid 79"), std::string::npos) << log;
}

using Totals = std::vector<std::pair<int64_t, int64_t>>;
Totals XidTotals(const model::DeviceSnapshot& d) {
  Totals out;
  for (const model::XidCount& x : d.xid_totals) out.emplace_back(x.xid, x.count);
  return out;
}
Totals ClockTotals(const model::DeviceSnapshot& d) {
  Totals out;
  for (const model::ClockEventCount& c : d.clock_event_totals) {
    out.emplace_back(static_cast<int64_t>(c.reason), c.count);
  }
  return out;
}
// Every value of `before` is in `after` with at least its count: a counter never goes down and
// its series never disappears.
void ExpectNotBelow(const Totals& before, const Totals& after, const std::string& what) {
  for (const auto& [key_binding, n] : before) {
    const auto key = key_binding;  // clang 14 cannot capture a structured binding
    auto it =
        std::find_if(after.begin(), after.end(), [&](const auto& p) { return p.first == key; });
    ASSERT_NE(it, after.end()) << what << " " << key << " disappeared";
    EXPECT_GE(it->second, n) << what << " " << key << " went down";
  }
}

// DCGM_EXP_XID_ERRORS_TOTAL counts every Xid since start per value; DCGM_EXP_CLOCK_EVENTS_TOTAL
// counts each reason turning active between two reads (the first read only primes). Both only
// grow; the windowed _COUNT beside them is as before; a reload that keeps the rows keeps the
// totals. The simulated clock is frozen and stepped, so each step is one bitmask and the Xids
// due by then.
TEST(XidCollectorTest, TotalsOnlyGrow) {
  setenv("NVMLX_SIMGPU_SCENARIO", NVMLX_SOURCE_DIR "/testdata/scenarios/totals.yaml", 1);
  setenv("NVMLX_SIMGPU_FROZEN_TIME_S", "0", 1);
  auto lib = nvml::Library::Load(NVMLX_SIMGPU_LIBRARY);
  ASSERT_TRUE(lib.ok()) << lib.status().ToString();
  util::FakeClock clock;
  CollectorOptions options;
  options.interval = milliseconds(100);
  options.xid_window = milliseconds(1000);
  options.clock = &clock;
  const std::vector<config::CollectorEntry> rows = {
      Row("DCGM_EXP_XID_ERRORS_COUNT"),
      Row("DCGM_EXP_XID_ERRORS_TOTAL", config::MetricType::kCounter),
      Row("DCGM_EXP_CLOCK_EVENTS_TOTAL", config::MetricType::kCounter)};
  options.plan = PlanOf(rows);
  auto c = Collector::Create(**lib, options);
  ASSERT_TRUE(c.ok()) << c.status().ToString();

  // t = 0: no Xid yet, power cap active on GPU 0 and sw thermal on GPU 1: nothing counted.
  auto snap = (*c)->CollectOnce();
  ASSERT_EQ(snap->devices.size(), 2u);
  for (const model::DeviceSnapshot& d : snap->devices) {
    EXPECT_TRUE(d.xid_totals.empty());
    EXPECT_TRUE(d.clock_event_totals.empty()) << "a reason active at start is not counted";
    EXPECT_TRUE(d.xid_watched);
  }

  // Each step: the Xids due by then on GPU 0, and the bitmask at t.
  struct Step {
    double t;
    Totals xids, clocks;
  };
  const Step steps[] = {
      {0.7, {{13, 1}}, {}},                             // power cap still on: no edge
      {1.7, {{13, 1}, {48, 1}}, {{0x1, 1}}},            // idle turns on
      {2.7, {{13, 2}, {48, 1}}, {{0x1, 1}, {0x4, 1}}},  // power cap again
      {3.7, {{13, 3}, {48, 1}}, {{0x1, 2}, {0x4, 1}}},
      {4.2, {{13, 3}, {48, 1}}, {{0x1, 2}, {0x4, 2}}},
  };
  Totals xids_before, clocks_before;
  for (const Step& step : steps) {
    clock.Advance(milliseconds(500));
    ASSERT_EQ(simgpu::SetFrozenTime(NVMLX_SIMGPU_LIBRARY, step.t), "");
    snap = AwaitSnapshot(
        **c, [&](const model::Snapshot& s) { return XidTotals(s.devices[0]) == step.xids; });
    const model::DeviceSnapshot& d0 = snap->devices[0];
    EXPECT_EQ(XidTotals(d0), step.xids) << "t=" << step.t;
    EXPECT_EQ(ClockTotals(d0), step.clocks) << "t=" << step.t;
    ExpectNotBelow(xids_before, XidTotals(d0), "xid");
    ExpectNotBelow(clocks_before, ClockTotals(d0), "clock event");
    xids_before = XidTotals(d0);
    clocks_before = ClockTotals(d0);
    EXPECT_TRUE(snap->devices[1].xid_totals.empty());
    EXPECT_TRUE(snap->devices[1].clock_event_totals.empty()) << "sw thermal never turned on";
  }
  // The window (1 s on the fake clock, Xids received at 0.5, 1, 1.5, 2 s, now 2.5 s) holds the
  // last two Xid 13s only; the totals hold all four Xids.
  ASSERT_EQ(snap->devices[0].xid_counts.size(), 1u);
  EXPECT_EQ(snap->devices[0].xid_counts[0].xid, 13);
  EXPECT_EQ(snap->devices[0].xid_counts[0].count, 2);

  // A reload that keeps the rows (a help text changed) keeps both totals; one without the clock
  // row drops them, and re-adding it counts afresh from its first read.
  std::vector<config::CollectorEntry> changed = rows;
  changed[2].help = "another help text";
  EXPECT_FALSE((*c)->SetPlan(PlanOf(changed)));
  snap = (*c)->CollectOnce();
  EXPECT_EQ(XidTotals(snap->devices[0]), xids_before);
  EXPECT_EQ(ClockTotals(snap->devices[0]), clocks_before);
  EXPECT_FALSE((*c)->SetPlan(PlanOf({rows[0], rows[1]})));
  snap = (*c)->CollectOnce();
  EXPECT_TRUE(snap->devices[0].clock_event_totals.empty());
  EXPECT_EQ(XidTotals(snap->devices[0]), xids_before);
  EXPECT_FALSE((*c)->SetPlan(PlanOf(rows)));
  snap = (*c)->CollectOnce();  // t = 4.2, power cap: primes only
  EXPECT_TRUE(snap->devices[0].clock_event_totals.empty());
  c->reset();
  unsetenv("NVMLX_SIMGPU_FROZEN_TIME_S");
}

}  // namespace
}  // namespace nvmlx::collect
