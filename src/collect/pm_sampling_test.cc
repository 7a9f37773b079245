// PM sampling through the simulated CUPTI (tools/simgpu/cupti_sim.cc, loaded by path through
// cupti::Library like the real libcupti.so.13) and the simulated NVML, one scenario:
// testdata/scenarios/pm_sampling.yaml. Covers the loader, the field mapping and units, the
// single-pass limit, the window average, the source choice per GPU, busy counters, decode errors
// with backoff and recovery, samples straddling two decodes, a stalled session, and pause/resume
// releasing the counters.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <thread>

#include "collect/collector.h"
#include "collect/pm_sampling_reader.h"
#include "cupti/cupti.h"
#include "plan/plan_test_util.h"
#include "tools/simgpu/sim_control.h"
#include "util/log.h"

namespace nvmlx::collect {
namespace {

using std::chrono::milliseconds;

std::vector<const fields::FieldDef*> Prof() {
  std::vector<const fields::FieldDef*> out;
  for (int id : {1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009, 1010, 1011, 1012}) {
    out.push_back(fields::FindById(id));
  }
  return out;
}

const model::Sample* Find(const std::vector<model::Sample>& v, int id) {
  for (const auto& s : v) {
    if (s.field_id == id) return &s;
  }
  return nullptr;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

class PmSamplingTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    static bool once = [] {
      log::Init(log::Format::kText, false);
      return true;
    }();
    (void)once;
    setenv("NVMLX_SIMGPU_SCENARIO", NVMLX_SOURCE_DIR "/testdata/scenarios/pm_sampling.yaml", 1);
    unsetenv("NVMLX_SIMGPU_FROZEN_TIME_S");
  }
  void SetUp() override {
    auto lib = cupti::Library::Load(NVMLX_SIMCUPTI_LIBRARY);
    ASSERT_TRUE(lib.ok()) << lib.status().ToString();
    cupti_ = std::move(lib).value();
    // Each test starts at the scenario's t = 0 (busy_until_s counts from there).
    ASSERT_EQ(simgpu::RestartCuptiClock(NVMLX_SIMCUPTI_LIBRARY), "");
    options_.interval = milliseconds(20);
    options_.collect_interval = milliseconds(100);
    options_.backoff_min = milliseconds(100);
    options_.backoff_max = milliseconds(400);
  }
  // Reads until a window holds samples (or 3 s pass).
  std::vector<model::Sample> ReadValues(PmSamplingReader& r) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    for (;;) {
      std::vector<model::Sample> s;
      std::vector<fields::FieldError> e;
      EXPECT_TRUE(r.Read(&s, &e).ok());
      if (!s.empty() || std::chrono::steady_clock::now() > deadline) return s;
      std::this_thread::sleep_for(milliseconds(30));
    }
  }
  std::unique_ptr<cupti::Library> cupti_;
  PmSamplingOptions options_;
};

TEST_F(PmSamplingTest, MissingLibraryIsNotFound) {
  auto lib = cupti::Library::Load("/nonexistent/libcupti.so.13");
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.status().code(), StatusCode::kNotFound);
}

TEST_F(PmSamplingTest, FieldsInGpmUnitsFromOneSinglePassConfig) {
  ::testing::internal::CaptureStderr();
  auto r = PmSamplingReader::Create(*cupti_, 0, 0, Prof(), options_);
  const std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_NE(r, nullptr) << log;
  EXPECT_EQ(r->chip(), "GA102");
  // 8 mapped fields, 7 metrics per pass on this simulated chip: the first 7 in
  // fields/pm_metrics.cc's order keep the pass, SM active (last) is left out.
  EXPECT_EQ(r->fields().size(), 7u);
  EXPECT_EQ(Count(log, "would need a second PM-sampling pass"), 1u) << log;
  EXPECT_EQ(Count(log, "field=DCGM_FI_PROF_SM_ACTIVE"), 1u) << log;
  EXPECT_EQ(Count(log, "field=DCGM_FI_PROF_PIPE_FP16_ACTIVE"), 1u) << "FP16 has no metric";
  // Tensor, FP64, FP32: pipe cycle counters, left out (fields/pm_metrics.cc says why).
  EXPECT_EQ(Count(log, "a tensor-pipe cycle counter in the pass stops"), 3u) << log;
  std::this_thread::sleep_for(milliseconds(100));
  std::vector<model::Sample> v = ReadValues(*r);
  ASSERT_NE(Find(v, 1001), nullptr);
  EXPECT_NEAR(std::get<double>(Find(v, 1001)->value), 0.40, 1e-9);  // percent -> ratio
  EXPECT_NEAR(std::get<double>(Find(v, 1005)->value), 0.10, 1e-9);
  EXPECT_NEAR(std::get<double>(Find(v, 1003)->value), 0.125, 1e-9);
  ASSERT_NE(Find(v, 1009), nullptr);
  EXPECT_EQ(std::get<int64_t>(Find(v, 1009)->value), 2 * 1048576);  // B/s, as GPM's
  EXPECT_EQ(std::get<int64_t>(Find(v, 1010)->value), 3 * 1048576);
  ASSERT_NE(Find(v, 1011), nullptr);
  EXPECT_EQ(std::get<int64_t>(Find(v, 1011)->value), 0);
  for (int dropped : {1002, 1004, 1006, 1007, 1008})
    EXPECT_EQ(Find(v, dropped), nullptr) << dropped;
  for (size_t i = 1; i < v.size(); ++i) EXPECT_LT(v[i - 1].field_id, v[i].field_id);
  EXPECT_TRUE(r->active());
  EXPECT_EQ(r->losses(), 0u);
}

// Without the NVLink fields (or on a GPU without NVLink counters) SM active fits the pass and is
// served beside the others: docs/validation/h200-pm-sampling/onepass-2026-12-04.md.
TEST_F(PmSamplingTest, SmActiveServedWhereItFitsThePass) {
  std::vector<const fields::FieldDef*> wanted;
  for (int id : {1001, 1002, 1003, 1004, 1005, 1009, 1010}) wanted.push_back(fields::FindById(id));
  ::testing::internal::CaptureStderr();
  auto r = PmSamplingReader::Create(*cupti_, 0, 0, wanted, options_);
  const std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_NE(r, nullptr) << log;
  EXPECT_EQ(r->fields().size(), 6u);  // all but tensor
  EXPECT_EQ(Count(log, "would need a second PM-sampling pass"), 0u) << log;
  std::this_thread::sleep_for(milliseconds(100));
  std::vector<model::Sample> v = ReadValues(*r);
  ASSERT_NE(Find(v, 1002), nullptr) << log;
  EXPECT_NEAR(std::get<double>(Find(v, 1002)->value), 0.30, 1e-9);  // gpm_sm_util 30 %
  EXPECT_EQ(Find(v, 1004), nullptr);
}

TEST_F(PmSamplingTest, MissingMetricsAndSmallerPassOnTuring) {
  ::testing::internal::CaptureStderr();
  auto r = PmSamplingReader::Create(*cupti_, 4, 4, Prof(), options_);
  const std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_NE(r, nullptr);
  ASSERT_EQ(r->fields().size(), 3u);  // GR, DRAM, PCIe TX: the CloudWatch fields first
  EXPECT_EQ(r->fields()[0]->id, 1001);
  EXPECT_EQ(r->fields()[1]->id, 1005);
  EXPECT_EQ(r->fields()[2]->id, 1009);
  EXPECT_EQ(Count(log, "not available on TU102"), 2u) << log;                // NVLink TX/RX
  // PCIe RX, occupancy and SM active
  EXPECT_EQ(Count(log, "would need a second PM-sampling pass"), 3u) << log;
}

// GPU 6 delivers each decode's newest sample in two parts. Keeping the image until the sample is
// complete reads the true 40 % in every window; re-initialising it after each decode (the first
// implementation) loses the partial sample, and the next one spans its time with one interval's
// counts: the values drop, as GR engine activity did on the H200.
TEST_F(PmSamplingTest, SamplesStraddlingTwoDecodesAreKeptWhole) {
  auto window_values = [&](bool fresh) {
    auto chip = cupti_->ChipName(6);
    EXPECT_TRUE(chip.ok());
    const std::string metric = "gr__cycles_active.avg.pct_of_peak_sustained_elapsed";
    auto config = cupti_->BuildConfig(*chip, {}, {metric});
    EXPECT_TRUE(config.ok());
    cupti::PmSampler::Options o;
    o.device_index = 6;
    o.chip = *chip;
    o.metrics = {metric};
    o.config = std::move(config).value();
    o.interval_ns = 20'000'000;
    o.max_samples = 32;
    o.fresh_image_each_decode = fresh;
    auto sampler = cupti::PmSampler::Start(*cupti_, std::move(o));
    EXPECT_TRUE(sampler.ok()) << sampler.status().ToString();
    std::vector<double> means;
    uint64_t previous_end = 0;
    for (int d = 0; d < 8; ++d) {
      std::this_thread::sleep_for(milliseconds(70));
      auto w = (*sampler)->Decode();
      EXPECT_TRUE(w.ok());
      if (!w.ok() || w->samples == 0) continue;
      if (!fresh && previous_end != 0) {
        EXPECT_EQ(w->start_ns, previous_end) << "windows abut";
      }
      previous_end = w->end_ns;
      means.push_back(w->means[0]);
    }
    return means;
  };
  const std::vector<double> kept = window_values(false);
  ASSERT_GE(kept.size(), 6u);
  for (double m : kept) EXPECT_NEAR(m, 40.0, 1e-9);
  const std::vector<double> fresh = window_values(true);
  ASSERT_GE(fresh.size(), 6u);
  EXPECT_LT(*std::min_element(fresh.begin(), fresh.end()), 39.0)
      << "the simulator no longer loses a partial sample to a re-initialised image";
}

// GPU 7 stops completing samples 0.3 s into every session: after stall_after the reader counts
// a loss, stops the session and starts a new one, which serves again.
TEST_F(PmSamplingTest, StalledSessionIsALossAndIsRestarted) {
  options_.stall_after = milliseconds(300);
  options_.backoff_min = milliseconds(50);
  ::testing::internal::CaptureStderr();
  auto r = PmSamplingReader::Create(*cupti_, 7, 7, {fields::FindById(1001)}, options_);
  ASSERT_NE(r, nullptr);
  std::vector<model::Sample> v = ReadValues(*r);
  ASSERT_NE(Find(v, 1001), nullptr);
  EXPECT_NEAR(std::get<double>(Find(v, 1001)->value), 0.40, 1e-9);
  // Served (repeated) within stall_after, then absent, counted, and back from a new session.
  bool absent = false, back = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(4);
  while (std::chrono::steady_clock::now() < deadline && !back) {
    std::this_thread::sleep_for(milliseconds(40));
    std::vector<model::Sample> s;
    std::vector<fields::FieldError> e;
    ASSERT_TRUE(r->Read(&s, &e).ok());
    if (s.empty()) absent = true;
    if (absent && !s.empty()) back = true;
  }
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(absent) << log;
  EXPECT_TRUE(back) << log;
  EXPECT_GE(r->losses(), 1u);
  EXPECT_EQ(Count(log, "the session stalled"), 1u) << "once per streak: " << log;
}

TEST_F(PmSamplingTest, WindowIsTheAverageSinceThePreviousRead) {
  options_.interval = milliseconds(50);
  auto r = PmSamplingReader::Create(*cupti_, 5, 5, {fields::FindById(1001)}, options_);
  ASSERT_NE(r, nullptr);
  // A 1 s window over a 0.5 s on / 0.5 s off square of 80 %: 0.40 within one sample's share.
  std::vector<model::Sample> ignored;
  std::vector<fields::FieldError> errors;
  ASSERT_TRUE(r->Read(&ignored, &errors).ok());
  std::this_thread::sleep_for(milliseconds(1000));
  std::vector<model::Sample> v;
  ASSERT_TRUE(r->Read(&v, &errors).ok());
  ASSERT_NE(Find(v, 1001), nullptr);
  EXPECT_NEAR(std::get<double>(Find(v, 1001)->value), 0.40, 0.09);
  // A short window inside one phase reads that phase, not the long-run mean.
  double lo = 1, hi = 0;
  for (int i = 0; i < 12; ++i) {
    std::this_thread::sleep_for(milliseconds(110));
    std::vector<model::Sample> w;
    ASSERT_TRUE(r->Read(&w, &errors).ok());
    if (const model::Sample* s = Find(w, 1001)) {
      lo = std::min(lo, std::get<double>(s->value));
      hi = std::max(hi, std::get<double>(s->value));
    }
  }
  EXPECT_LT(lo, 0.2);
  EXPECT_GT(hi, 0.6);
}

TEST_F(PmSamplingTest, BusyCountersRetriedWithBackoffThenServed) {
  ::testing::internal::CaptureStderr();
  auto r = PmSamplingReader::Create(*cupti_, 2, 2, Prof(), options_);
  ASSERT_NE(r, nullptr);
  EXPECT_FALSE(r->active());
  EXPECT_GE(r->losses(), 1u);
  std::vector<model::Sample> v;
  std::vector<fields::FieldError> errors;
  ASSERT_TRUE(r->Read(&v, &errors).ok());
  EXPECT_TRUE(v.empty()) << "no series while the counters are held elsewhere";
  v = ReadValues(*r);
  const std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_NE(Find(v, 1001), nullptr) << log;
  EXPECT_TRUE(r->active());
  EXPECT_EQ(Count(log, "cannot hold the GPU's counters"), 1u) << "once per streak: " << log;
  EXPECT_EQ(Count(log, "PM sampling recovered"), 1u) << log;
  EXPECT_LE(r->losses(), 4u) << "backoff: 100, 200, 400 ms within the 0.6 s busy time";
}

TEST_F(PmSamplingTest, DecodeErrorDisablesCountsAndReenables) {
  ::testing::internal::CaptureStderr();
  auto r = PmSamplingReader::Create(*cupti_, 3, 3, Prof(), options_);
  ASSERT_NE(r, nullptr);
  std::vector<model::Sample> v;
  std::vector<fields::FieldError> errors;
  for (int i = 0; i < 2; ++i) {  // decodes 1 and 2 succeed
    std::this_thread::sleep_for(milliseconds(50));
    ASSERT_TRUE(r->Read(&v, &errors).ok());
  }
  EXPECT_EQ(r->losses(), 0u);
  v.clear();
  ASSERT_TRUE(r->Read(&v, &errors).ok());  // decode 3: CUPTI_ERROR_UNKNOWN
  EXPECT_TRUE(v.empty());
  EXPECT_EQ(r->losses(), 1u);
  EXPECT_FALSE(r->active());
  v = ReadValues(*r);  // after the backoff a new session (its own decode count) serves again
  const std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_NE(Find(v, 1001), nullptr) << log;
  EXPECT_TRUE(r->active());
  EXPECT_EQ(Count(log, "PM sampling failed"), 1u) << log;
  EXPECT_EQ(Count(log, "CUPTI_ERROR_UNKNOWN"), 1u) << log;
}

TEST_F(PmSamplingTest, PauseReleasesTheCountersAndResumeRetakesThem) {
  std::atomic<bool> paused{false};
  options_.paused = &paused;
  auto r = PmSamplingReader::Create(*cupti_, 0, 0, {fields::FindById(1001)}, options_);
  ASSERT_NE(r, nullptr);
  ASSERT_FALSE(ReadValues(*r).empty());
  // While sampling, a second session on the GPU (another profiler) is refused...
  PmSamplingOptions other = options_;
  other.paused = nullptr;
  auto second = PmSamplingReader::Create(*cupti_, 0, 0, {fields::FindById(1001)}, other);
  ASSERT_NE(second, nullptr);
  EXPECT_FALSE(second->active());
  second.reset();
  // ...paused, the counters are free: the other session gets them.
  paused.store(true);
  std::vector<model::Sample> v;
  std::vector<fields::FieldError> errors;
  ASSERT_TRUE(r->Read(&v, &errors).ok());
  EXPECT_TRUE(v.empty());
  EXPECT_FALSE(r->active());
  auto nsight = PmSamplingReader::Create(*cupti_, 0, 0, {fields::FindById(1001)}, other);
  ASSERT_NE(nsight, nullptr);
  EXPECT_TRUE(nsight->active());
  nsight.reset();
  paused.store(false);
  ASSERT_FALSE(ReadValues(*r).empty());
  EXPECT_TRUE(r->active());
  EXPECT_EQ(r->losses(), 0u) << "a pause is not a loss";
}

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
  std::unique_ptr<nvml::Library> nvml_;
  CollectorOptions copts_;
};

TEST_F(PmSamplingCollectorTest, AutoPicksGpmWhereItExistsAndPmSamplingElsewhere) {
  auto c = Collector::Create(*nvml_, copts_);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto snap = (*c)->CollectOnce();
  ASSERT_EQ(snap->devices.size(), 8u);
  const auto& d0 = snap->devices[0];
  ASSERT_TRUE(d0.pm_sampling.has_value());
  EXPECT_TRUE(d0.pm_sampling->active);
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
  ::testing::internal::CaptureStderr();
  auto c = Collector::Create(*nvml_, copts_);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto snap = (*c)->CollectOnce();
  const std::string log = ::testing::internal::GetCapturedStderr();
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
