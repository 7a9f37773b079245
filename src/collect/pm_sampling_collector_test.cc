// The collector's choice of profiling source per GPU (GPM where it exists, PM sampling elsewhere,
// none without CUPTI or on MIG), its reloads and its set-up, through the simulated NVML and
// CUPTI (testdata/scenarios/pm_sampling.yaml). The reader's own behaviour is pm_sampling_test.cc.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "collect/collector.h"
#include "collect/pm_sampling_test_util.h"
#include "config/device_selector.h"
#include "plan/plan_test_util.h"

namespace nvmlx::collect {
namespace {

using std::chrono::milliseconds;
using pm_test::Count;
using pm_test::Find;
using pm_test::PmSamplingTest;

// The collector's choice per GPU, through both simulated libraries.
class PmSamplingCollectorTest : public PmSamplingTest {
 protected:
  void SetUp() override {
    PmSamplingTest::SetUp();
    auto lib = nvml::Library::Load(NVMLX_SIMGPU_LIBRARY);
    ASSERT_TRUE(lib.ok()) << lib.status().ToString();
    nvml_ = std::move(lib).value();
    copts_.interval = milliseconds(100);
    copts_.plan = plan::testing::PlanOf({plan::testing::Row("DCGM_FI_DEV_GPU_UTIL"),
                                         plan::testing::Row("DCGM_FI_PROF_GR_ENGINE_ACTIVE")});
    copts_.pm_sampling.interval = milliseconds(20);
    copts_.cupti = [this] { return cupti_.get(); };
  }
  // A collector made with copts_ collects once; *log is what was logged from its creation to
  // that snapshot, which is returned (null when the collector could not be made).
  std::shared_ptr<const model::Snapshot> CollectOnceLogged(std::string* log) {
    ::testing::internal::CaptureStderr();
    auto c = Collector::Create(*nvml_, copts_);
    std::shared_ptr<const model::Snapshot> snap;
    if (c.ok()) snap = (*c)->CollectOnce();
    *log = ::testing::internal::GetCapturedStderr();
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return snap;
  }
  std::unique_ptr<nvml::Library> nvml_;
  CollectorOptions copts_;
};

TEST_F(PmSamplingCollectorTest, AutoPicksGpmWhereItExistsAndPmSamplingElsewhere) {
  auto c = Collector::Create(*nvml_, copts_);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto snap = (*c)->CollectOnce();
  ASSERT_EQ(snap->devices.size(), 13u);
  const auto& d0 = snap->devices[0];
  ASSERT_TRUE(d0.pm_sampling.has_value());
  EXPECT_TRUE(d0.pm_sampling->active);
  // The snapshot carries the alternation: the configurations and a coverage per served field.
  EXPECT_EQ(d0.pm_sampling->configurations, 1u);
  ASSERT_EQ(d0.pm_sampling->coverage.size(), 1u);
  EXPECT_EQ(d0.pm_sampling->coverage[0].field_id, 1001);
  ASSERT_NE(Find(d0.samples, 1001), nullptr);
  EXPECT_NEAR(std::get<double>(Find(d0.samples, 1001)->value), 0.40, 1e-9);
  const auto& d1 = snap->devices[1];  // the H200: GPM
  EXPECT_FALSE(d1.pm_sampling.has_value());
  ASSERT_NE(Find(d1.samples, 1001), nullptr);
  EXPECT_NEAR(std::get<double>(Find(d1.samples, 1001)->value), 0.70, 1e-9);
  // GPU 2 is busy at start: no PROF series, everything else flows, the loss is counted.
  const auto& d2 = snap->devices[2];
  EXPECT_TRUE(d2.up);
  EXPECT_NE(Find(d2.samples, 203), nullptr);
  ASSERT_TRUE(d2.pm_sampling.has_value());
  EXPECT_GE(d2.pm_sampling->losses, 1u);
}

// Hardening round two, row 8: a reload that keeps the profiling fields (here a help text
// changed) keeps the GPU's PM-sampling reader and its session, so no DCGM_FI_PROF_* series skips
// the collection after it (a new session would have no completed sample yet). Tensor is asked
// too, so the reader alternates two configurations across the reload.
TEST_F(PmSamplingCollectorTest, ReloadKeepingTheFieldsKeepsTheSession) {
  std::vector<config::CollectorEntry> rows = {
      plan::testing::Row("DCGM_FI_DEV_GPU_UTIL"),
      plan::testing::Row("DCGM_FI_PROF_GR_ENGINE_ACTIVE"),
      plan::testing::Row("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE")};
  copts_.plan = plan::testing::PlanOf(rows);
  auto c = Collector::Create(*nvml_, copts_);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto both = [](const model::DeviceSnapshot& d) {
    return Find(d.samples, 1001) != nullptr && Find(d.samples, 1004) != nullptr;
  };
  std::shared_ptr<const model::Snapshot> snap;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  do {
    std::this_thread::sleep_for(milliseconds(60));
    snap = (*c)->CollectOnce();
  } while (!both(snap->devices[0]) && std::chrono::steady_clock::now() < deadline);
  ASSERT_TRUE(both(snap->devices[0]));
  const uint64_t losses = snap->devices[0].pm_sampling->losses;
  for (int reload = 0; reload < 5; ++reload) {
    rows[1].help = "help text " + std::to_string(reload);
    ASSERT_FALSE((*c)->SetPlan(plan::testing::PlanOf(rows)));
    snap = (*c)->CollectOnce();  // at once: a new session would have nothing yet
    EXPECT_TRUE(both(snap->devices[0])) << "PROF series missing after reload " << reload;
    std::this_thread::sleep_for(milliseconds(60));
  }
  EXPECT_EQ(snap->devices[0].pm_sampling->losses, losses);
  EXPECT_EQ(snap->devices[0].pm_sampling->configurations, 2u);
  (*c)->Stop();
}

TEST_F(PmSamplingCollectorTest, ForcedSources) {
  copts_.profiling = ProfilingChoice::kPmSampling;
  {
    auto c = Collector::Create(*nvml_, copts_);
    ASSERT_TRUE(c.ok());
    auto snap = (*c)->CollectOnce();
    EXPECT_TRUE(snap->devices[1].pm_sampling.has_value()) << "the H200 through PM sampling";
    ASSERT_NE(Find(snap->devices[1].samples, 1001), nullptr);
    EXPECT_NEAR(std::get<double>(Find(snap->devices[1].samples, 1001)->value), 0.70, 1e-9);
  }
  copts_.profiling = ProfilingChoice::kGpm;
  {
    auto c = Collector::Create(*nvml_, copts_);
    ASSERT_TRUE(c.ok());
    auto snap = (*c)->CollectOnce();
    EXPECT_FALSE(snap->devices[0].pm_sampling.has_value());
    EXPECT_EQ(Find(snap->devices[0].samples, 1001), nullptr) << "no GPM on the A10G";
    EXPECT_NE(Find(snap->devices[1].samples, 1001), nullptr);
  }
  copts_.profiling = ProfilingChoice::kNone;
  {
    auto c = Collector::Create(*nvml_, copts_);
    ASSERT_TRUE(c.ok());
    auto snap = (*c)->CollectOnce();
    for (const auto& d : snap->devices) {
      EXPECT_EQ(Find(d.samples, 1001), nullptr);
      EXPECT_NE(Find(d.samples, 203), nullptr);
    }
  }
}

// The set-up of a PM-sampled GPU outlasts the read deadline in CUPTI, outside any NVML call (the
// H100 took ~0.8 s at -c 1000, CUPTI's configuration and enable about half of it): that is slow,
// not stuck, so it is an info line, not the error that names a stuck NVML call, and the GPU is
// served once its set-up ends. GPU 10's cuptiPmSamplingSetConfig takes 200 ms; the read deadline
// is 100 ms, so the set-up's NVML part (microseconds on the simulator) is long over by then even
// on a loaded machine under a sanitizer, and its CUPTI part is not.
TEST_F(PmSamplingCollectorTest, SlowProfilingSetUpIsNotAStuckCall) {
  auto sel = config::ParseDeviceSelector("g:10");
  ASSERT_TRUE(sel.ok()) << sel.status().ToString();
  copts_.devices = *sel;
  copts_.read_deadline = milliseconds(100);
  copts_.profiling = ProfilingChoice::kPmSampling;
  std::string log;
  auto snap = CollectOnceLogged(&log);
  ASSERT_NE(snap, nullptr);
  ASSERT_EQ(snap->devices.size(), 1u);
  EXPECT_TRUE(snap->devices[0].up);
  ASSERT_TRUE(snap->devices[0].pm_sampling.has_value()) << log;
  EXPECT_TRUE(snap->devices[0].pm_sampling->active) << log;
  EXPECT_EQ(Count(log, "GPU set-up is still running at the read deadline, outside NVML"), 1u)
      << log;
  EXPECT_EQ(Count(log, "level=error"), 0u) << log;
}

TEST_F(PmSamplingCollectorTest, NoCuptiMeansGpmOnlyAsBefore) {
  copts_.cupti = [] { return static_cast<const cupti::Library*>(nullptr); };
  auto c = Collector::Create(*nvml_, copts_);
  ASSERT_TRUE(c.ok());
  auto snap = (*c)->CollectOnce();
  EXPECT_EQ(Find(snap->devices[0].samples, 1001), nullptr);
  EXPECT_FALSE(snap->devices[0].pm_sampling.has_value());
  EXPECT_NE(Find(snap->devices[1].samples, 1001), nullptr);
}

TEST_F(PmSamplingCollectorTest, MigIsRefusedWithOneWarningPerEntity) {
  // testdata/scenarios/mig.yaml: GPU 0 MIG on (three instances), GPU 1 MIG off.
  nvml_.reset();  // the simulator reads its scenario at the init that takes its count from 0
  setenv("NVMLX_SIMGPU_SCENARIO", NVMLX_SOURCE_DIR "/testdata/scenarios/mig.yaml", 1);
  auto mig = nvml::Library::Load(NVMLX_SIMGPU_LIBRARY);
  setenv("NVMLX_SIMGPU_SCENARIO", NVMLX_SOURCE_DIR "/testdata/scenarios/pm_sampling.yaml", 1);
  ASSERT_TRUE(mig.ok()) << mig.status().ToString();
  nvml_ = std::move(mig).value();
  copts_.profiling = ProfilingChoice::kPmSampling;
  std::string log;
  auto snap = CollectOnceLogged(&log);
  ASSERT_NE(snap, nullptr);
  size_t mig_entities = 0;
  for (const auto& d : snap->devices) {
    if (d.identity->index != 0) continue;
    ++mig_entities;
    EXPECT_FALSE(d.pm_sampling.has_value());
    EXPECT_EQ(Find(d.samples, 1001), nullptr) << "PM sampling cannot split a GPU by instance";
  }
  EXPECT_EQ(mig_entities, 4u);  // the GPU and its three instances
  EXPECT_GE(Count(log, "not used on a MIG-enabled GPU"), 1u) << log;
  EXPECT_LE(Count(log, "not used on a MIG-enabled GPU"), 4u) << log;
  const auto& gpu1 = snap->devices.back();
  EXPECT_EQ(gpu1.identity->index, 1u);
  EXPECT_TRUE(gpu1.pm_sampling.has_value()) << "the GPU without MIG is sampled";
}

}  // namespace
}  // namespace nvmlx::collect
