// PM sampling through the simulated CUPTI (tools/simgpu/cupti_sim.cc, loaded by path through
// cupti::Library like the real libcupti.so.13) and the simulated NVML, one scenario:
// testdata/scenarios/pm_sampling.yaml. Covers the loader, the field mapping and units, the
// single-pass limit, the window average, the source choice per GPU, busy counters, decode errors
// with backoff and recovery, samples straddling two decodes, a stalled session, pause/resume
// releasing the counters, and the idle and steady holds. The collector's choice of source per
// GPU: pm_sampling_collector_test.cc.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

#include "collect/pm_sampling_reader.h"
#include "collect/pm_sampling_test_util.h"
#include "cupti/cupti.h"
#include "tools/simgpu/sim_control.h"
#include "util/log.h"

namespace nvmlx::collect {
namespace {

using pm_test::Count;
using pm_test::Find;
using pm_test::PmSamplingTest;
using std::chrono::milliseconds;

std::vector<const fields::FieldDef*> Prof() {
  std::vector<const fields::FieldDef*> out;
  for (int id : {1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009, 1010, 1011, 1012}) {
    out.push_back(fields::FindById(id));
  }
  return out;
}

TEST_F(PmSamplingTest, MissingLibraryIsNotFound) {
  auto lib = cupti::Library::Load("/nonexistent/libcupti.so.13");
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.status().code(), StatusCode::kNotFound);
}

TEST_F(PmSamplingTest, FieldsInGpmUnitsAcrossAlternatingConfigurations) {
  ::testing::internal::CaptureStderr();
  auto r = PmSamplingReader::Create(*cupti_, 0, 0, Prof(), options_);
  const std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_NE(r, nullptr) << log;
  EXPECT_EQ(r->chip(), "GA102");
  // 11 mapped fields, 7 metrics per pass on this simulated chip: the first 7 shared ones in
  // fields/pm_metrics.cc's order, then SM active (which did not fit), then tensor, FP32 and FP64
  // alone each. FP16 has no metric.
  EXPECT_EQ(r->fields().size(), 11u);
  ASSERT_EQ(r->configurations(), 5u);
  const auto configs = r->configuration_fields();
  EXPECT_EQ(configs[0].size(), 7u);
  ASSERT_EQ(configs[1].size(), 1u);
  EXPECT_EQ(r->fields()[configs[1][0]]->id, 1002);
  for (size_t c = 2; c < 5; ++c) EXPECT_EQ(configs[c].size(), 1u);
  EXPECT_EQ(r->fields()[configs[2][0]]->id, 1004);
  EXPECT_EQ(r->fields()[configs[3][0]]->id, 1007);
  EXPECT_EQ(r->fields()[configs[4][0]]->id, 1006);
  EXPECT_EQ(Count(log, "would need"), 0u) << log;
  EXPECT_EQ(Count(log, "field=DCGM_FI_PROF_PIPE_FP16_ACTIVE"), 1u) << "FP16 has no metric";
  EXPECT_EQ(r->dwell(), 1u) << "3 samples of 20 ms fit one 100 ms collection";
  // Every field gets its value once each configuration has been live.
  std::vector<model::Sample> v = ReadFields(*r, 11);
  ASSERT_EQ(v.size(), 11u);
  EXPECT_NEAR(std::get<double>(Find(v, 1001)->value), 0.40, 1e-9);  // percent -> ratio
  EXPECT_NEAR(std::get<double>(Find(v, 1005)->value), 0.10, 1e-9);
  EXPECT_NEAR(std::get<double>(Find(v, 1003)->value), 0.125, 1e-9);
  EXPECT_NEAR(std::get<double>(Find(v, 1002)->value), 0.30, 1e-9);
  EXPECT_NEAR(std::get<double>(Find(v, 1004)->value), 0.25, 1e-9);
  EXPECT_NEAR(std::get<double>(Find(v, 1007)->value), 0.20, 1e-9);
  EXPECT_NEAR(std::get<double>(Find(v, 1006)->value), 0.01, 1e-9);
  EXPECT_EQ(std::get<int64_t>(Find(v, 1009)->value), 2 * 1048576);  // B/s, as GPM's
  EXPECT_EQ(std::get<int64_t>(Find(v, 1010)->value), 3 * 1048576);
  EXPECT_EQ(std::get<int64_t>(Find(v, 1011)->value), 0);
  EXPECT_EQ(Find(v, 1008), nullptr);
  for (size_t i = 1; i < v.size(); ++i) EXPECT_LT(v[i - 1].field_id, v[i].field_id);
  EXPECT_TRUE(r->active());
  EXPECT_EQ(r->losses(), 0u);
}

// Without the NVLink fields SM active fits the shared pass beside the others
// (docs/validation/h200-pm-sampling/onepass-2026-12-04.md); tensor is alone all the same.
TEST_F(PmSamplingTest, SmActiveSharesThePassTensorIsAlone) {
  std::vector<const fields::FieldDef*> wanted;
  for (int id : {1001, 1002, 1003, 1004, 1005, 1009, 1010}) wanted.push_back(fields::FindById(id));
  ::testing::internal::CaptureStderr();
  auto r = PmSamplingReader::Create(*cupti_, 0, 0, wanted, options_);
  const std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_NE(r, nullptr) << log;
  EXPECT_EQ(r->fields().size(), 7u);
  ASSERT_EQ(r->configurations(), 2u);
  EXPECT_EQ(r->configuration_fields()[0].size(), 6u);
  EXPECT_EQ(r->configuration_fields()[1].size(), 1u);
  EXPECT_EQ(Count(log, "metric not enabled"), 0u) << log;
  std::vector<model::Sample> v = ReadFields(*r, 7);
  ASSERT_NE(Find(v, 1002), nullptr) << log;
  EXPECT_NEAR(std::get<double>(Find(v, 1002)->value), 0.30, 1e-9);  // gpm_sm_util 30 %
  ASSERT_NE(Find(v, 1004), nullptr) << log;
  EXPECT_NEAR(std::get<double>(Find(v, 1004)->value), 0.25, 1e-9);
}

TEST_F(PmSamplingTest, MissingMetricsAndSmallerPassOnTuring) {
  ::testing::internal::CaptureStderr();
  auto r = PmSamplingReader::Create(*cupti_, 4, 4, Prof(), options_);
  const std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_NE(r, nullptr);
  // 3 metrics per pass, no NVLink: GR, DRAM, PCIe TX (the CloudWatch fields first); then PCIe
  // RX, occupancy, SM active; then the three pipes alone.
  ASSERT_EQ(r->configurations(), 5u);
  const auto configs = r->configuration_fields();
  ASSERT_EQ(configs[0].size(), 3u);
  EXPECT_EQ(r->fields()[configs[0][0]]->id, 1001);
  EXPECT_EQ(r->fields()[configs[0][1]]->id, 1005);
  EXPECT_EQ(r->fields()[configs[0][2]]->id, 1009);
  ASSERT_EQ(configs[1].size(), 3u);
  EXPECT_EQ(r->fields()[configs[1][0]]->id, 1002);
  EXPECT_EQ(r->fields()[configs[1][1]]->id, 1003);
  EXPECT_EQ(r->fields()[configs[1][2]]->id, 1010);
  EXPECT_EQ(r->fields().size(), 9u);
  EXPECT_EQ(Count(log, "not available on TU102"), 2u) << log;  // NVLink TX/RX
  EXPECT_EQ(Count(log, "would need"), 0u) << log;
}

// Alternating: in each window one configuration is live; its fields are measured (coverage > 0),
// the others serve the value measured when theirs was last live (coverage 0).
TEST_F(PmSamplingTest, AlternationHoldsValuesAndPublishesCoverage) {
  auto r = PmSamplingReader::Create(*cupti_, 0, 0, {fields::FindById(1001), fields::FindById(1004)},
                                    options_);
  ASSERT_NE(r, nullptr);
  ASSERT_EQ(r->configurations(), 2u);
  ASSERT_EQ(ReadFields(*r, 2).size(), 2u);
  // Both configurations have been live: their host objects exist and are kept. Building one per
  // session cost ~60 ms of CPU per switch on the H200 (docs/validation/h200-pm-sampling.md).
  const long long hosts = simgpu::CuptiHostObjects(NVMLX_SIMCUPTI_LIBRARY);
  ASSERT_GE(hosts, 0);
  double measured[2] = {0, 0};
  int windows = 0, both_measured = 0, none_measured = 0;
  for (int i = 0; i < 16; ++i) {
    std::this_thread::sleep_for(milliseconds(100));
    std::vector<model::Sample> v;
    std::vector<fields::FieldError> e;
    ASSERT_TRUE(r->Read(&v, &e).ok());
    ASSERT_EQ(v.size(), 2u) << "both fields every window, held or measured";
    EXPECT_NEAR(std::get<double>(Find(v, 1001)->value), 0.40, 1e-9);
    EXPECT_NEAR(std::get<double>(Find(v, 1004)->value), 0.25, 1e-9);
    std::vector<model::FieldCoverage> c;
    r->Coverage(&c);
    ASSERT_EQ(c.size(), 2u);
    EXPECT_EQ(c[0].field_id, 1001);
    EXPECT_EQ(c[1].field_id, 1004);
    EXPECT_EQ(c[0].configuration, 0u);
    EXPECT_EQ(c[1].configuration, 1u);
    for (int k = 0; k < 2; ++k) {
      EXPECT_GE(c[k].ratio, 0.0);
      EXPECT_LE(c[k].ratio, 1.0);
      measured[k] += c[k].ratio;
    }
    both_measured += c[0].ratio > 0 && c[1].ratio > 0 ? 1 : 0;
    none_measured += c[0].ratio == 0 && c[1].ratio == 0 ? 1 : 0;
    ++windows;
  }
  EXPECT_EQ(both_measured, 0) << "one configuration live per window";
  EXPECT_EQ(simgpu::CuptiHostObjects(NVMLX_SIMCUPTI_LIBRARY), hosts)
      << "a session start built a host object again";
  EXPECT_LE(none_measured, 2) << "a window with no sample at all";
  // Each field measured in about half the windows, most of each such window.
  for (int k = 0; k < 2; ++k) {
    EXPECT_GT(measured[k] / windows, 0.2) << k;
    EXPECT_LT(measured[k] / windows, 0.55) << k;
  }
  EXPECT_EQ(r->losses(), 0u);
}

// A switch disables one session and enables the next: GH100's CUPTI 13 does not restart a stopped
// session (the decode after a restart answers UNKNOWN, a second restart fails to start), and the
// simulated CUPTI keeps that rule, so Reconfigure (kept for pm-probe to re-check a newer CUPTI)
// fails here as it did there, and its session still closes cleanly.
TEST_F(PmSamplingTest, StoppedSessionCannotBeRestartedAsOnGh100) {
  Result<std::string> chip = cupti_->ChipName(0);
  ASSERT_TRUE(chip.ok()) << chip.status().ToString();
  auto options_for = [&](const std::string& metric) {
    cupti::PmSampler::Options o;
    o.chip = *chip;
    o.metrics = {metric};
    Result<cupti::Config> c = cupti_->BuildConfig(*chip, {}, o.metrics);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    if (c.ok()) o.config = std::move(c).value();
    o.interval_ns = 20'000'000;
    return o;
  };
  const cupti::PmSampler::Options gr =
      options_for("gr__cycles_active.avg.pct_of_peak_sustained_elapsed");
  const cupti::PmSampler::Options tensor =
      options_for("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed");
  auto host = [&](const cupti::PmSampler::Options& o) {
    Result<std::shared_ptr<cupti::PmHost>> h =
        cupti::PmHost::Create(*cupti_, o.chip, o.availability, o.metrics);
    EXPECT_TRUE(h.ok()) << h.status().ToString();
    return h.ok() ? std::shared_ptr<const cupti::PmHost>(std::move(h).value()) : nullptr;
  };
  auto started = cupti::PmSampler::Start(*cupti_, gr, host(gr));
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  std::unique_ptr<cupti::PmSampler> sampler = std::move(started).value();
  std::this_thread::sleep_for(milliseconds(60));
  ASSERT_TRUE(sampler->Decode().ok()) << "a fresh session decodes";
  ASSERT_TRUE(sampler->Reconfigure(tensor, host(tensor)).ok()) << "the first restart starts";
  std::this_thread::sleep_for(milliseconds(60));
  Result<cupti::PmSampler::Window> w = sampler->Decode();
  EXPECT_FALSE(w.ok()) << "a restarted session decoded";
  EXPECT_FALSE(sampler->Reconfigure(gr, host(gr)).ok()) << "a second restart started";
  sampler.reset();  // stopped: the destructor only disables
  auto again = cupti::PmSampler::Start(*cupti_, gr, host(gr));
  EXPECT_TRUE(again.ok()) << "the GPU's counters were not freed: " << again.status().ToString();
}

// The seed's shape (GR engine shared, tensor alone) on GPU 11, idle for its first 1.5 s: the
// tensor pipe is bounded by GR engine activity, so while the shared configuration measures GR at
// 0 the reader stays on it (no switch) and serves tensor as 0, counted as measured. Once the load
// comes, the bound rises and the reader alternates again and measures tensor itself.
TEST_F(PmSamplingTest, IdleBoundHoldsThePipeAtZeroWithoutSwitching) {
  auto r = PmSamplingReader::Create(*cupti_, 11, 11,
                                    {fields::FindById(1001), fields::FindById(1004)}, options_);
  ASSERT_NE(r, nullptr);
  ASSERT_EQ(r->configurations(), 2u);
  ASSERT_EQ(r->sessions_started(), 1u);
  // Idle phase (t < 1.5 s): every window after the first dwell has tensor at 0, measured through
  // its bound, and no second session is started.
  int held_windows = 0;
  const auto idle_end = std::chrono::steady_clock::now() + milliseconds(1200);
  while (std::chrono::steady_clock::now() < idle_end) {
    std::this_thread::sleep_for(milliseconds(100));
    std::vector<model::Sample> v;
    std::vector<fields::FieldError> e;
    ASSERT_TRUE(r->Read(&v, &e).ok());
    const model::Sample* tensor = Find(v, 1004);
    if (tensor == nullptr) continue;  // the first dwell: not decided yet
    EXPECT_EQ(std::get<double>(tensor->value), 0.0);
    std::vector<model::FieldCoverage> c;
    r->Coverage(&c);
    ASSERT_EQ(c.size(), 2u);
    EXPECT_EQ(c[1].ratio, c[0].ratio) << "held tensor is measured through GR";
    ++held_windows;
  }
  EXPECT_GE(held_windows, 5);
  EXPECT_EQ(r->sessions_started(), 1u) << "switched while the bound was idle";
  // Loaded phase (1.5 s <= t < 3 s): the reader switches to the tensor configuration and
  // measures 30 %.
  std::this_thread::sleep_for(milliseconds(400));
  bool measured_tensor = false;
  const auto load_end = std::chrono::steady_clock::now() + milliseconds(1200);
  while (!measured_tensor && std::chrono::steady_clock::now() < load_end) {
    std::this_thread::sleep_for(milliseconds(100));
    std::vector<model::Sample> v;
    std::vector<fields::FieldError> e;
    ASSERT_TRUE(r->Read(&v, &e).ok());
    const model::Sample* tensor = Find(v, 1004);
    measured_tensor = tensor != nullptr && std::get<double>(tensor->value) > 0.2;
  }
  EXPECT_TRUE(measured_tensor) << "the load's tensor activity was never measured";
  EXPECT_GE(r->sessions_started(), 2u);
  EXPECT_EQ(r->losses(), 0u);
}

// A square wave (80 % for 0.5 s, 0 for 0.5 s) on GR engine activity, alternated with the tensor
// configuration: the served values (measured, or held while the other configuration is live)
// average over time to the wave's mean, as the values of a field measured throughout do. The
// wave's idle half also lets the reader stay on GR (tensor's bound is idle): that measures the
// idle windows fully and the busy ones half the time, so the served values, not a coverage-weighted
// mean (which would over-weight the idle windows), are what stays unbiased.
TEST_F(PmSamplingTest, AlternatingServedValuesAverageToTheSignal) {
  auto r = PmSamplingReader::Create(*cupti_, 5, 5, {fields::FindById(1001), fields::FindById(1004)},
                                    options_);
  ASSERT_NE(r, nullptr);
  ASSERT_EQ(r->configurations(), 2u);
  double sum = 0, weight = 0, measured = 0;
  auto last = std::chrono::steady_clock::now();
  const auto end = last + std::chrono::seconds(4);
  while (std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(milliseconds(100));
    std::vector<model::Sample> v;
    std::vector<fields::FieldError> e;
    ASSERT_TRUE(r->Read(&v, &e).ok());
    const auto now = std::chrono::steady_clock::now();
    const double window = std::chrono::duration<double>(now - last).count();
    last = now;
    std::vector<model::FieldCoverage> c;
    r->Coverage(&c);
    const model::Sample* gr = Find(v, 1001);
    if (gr == nullptr || c.empty()) continue;
    sum += std::get<double>(gr->value) * window;
    weight += window;
    measured += c[0].ratio * window;
  }
  ASSERT_GT(weight, 3.0) << "GR served most of 4 s";
  EXPECT_GT(measured, 0.8) << "GR measured at least about half of 4 s";
  EXPECT_LT(measured, weight) << "GR alternated with tensor";
  EXPECT_NEAR(sum / weight, 0.40, 0.08);
}

std::vector<const fields::FieldDef*> GrAndTensor() {
  return {fields::FindById(1001), fields::FindById(1004)};
}

double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// steady_hold 0 (the struct's default) on GPU 0 (constant load): every dwell ends in a switch, so
// after n reads n + 1 sessions have started and the two configurations take turns window by
// window, exactly as before the hold existed.
TEST_F(PmSamplingTest, SteadyHoldOffSwitchesEveryDwell) {
  options_.steady_hold = milliseconds(0);
  auto r = PmSamplingReader::Create(*cupti_, 0, 0, GrAndTensor(), options_);
  ASSERT_NE(r, nullptr);
  ASSERT_EQ(r->configurations(), 2u);
  ASSERT_EQ(r->dwell(), 1u);
  for (uint64_t n = 1; n <= 12; ++n) {
    const Window w = ReadWindow(*r);
    EXPECT_EQ(r->sessions_started(), n + 1) << "read " << n;
    const bool tensor_live = n % 2 == 0;  // GR's configuration starts, tensor's is second
    EXPECT_EQ(w.Covered(1004) > 0, tensor_live) << "read " << n;
    EXPECT_EQ(w.Covered(1001) > 0, !tensor_live) << "read " << n;
  }
  EXPECT_EQ(r->losses(), 0u);
}

// GPU 0's load never changes (GR 40 %, tensor 25 %). Without the hold the reader switches at
// every dwell; with a 500 ms hold it stays on GR's configuration and measures tensor once per
// hold, serving the value measured last (coverage 0) in between.
TEST_F(PmSamplingTest, SteadyLoadMeasuresThePipeOncePerHoldNotPerDwell) {
  constexpr int kReads = 20;
  auto plain = PmSamplingReader::Create(*cupti_, 0, 0, GrAndTensor(), options_);
  ASSERT_NE(plain, nullptr);
  for (int i = 0; i < kReads; ++i) ReadWindow(*plain);
  const uint64_t plain_sessions = plain->sessions_started();
  plain.reset();
  EXPECT_EQ(plain_sessions, uint64_t{kReads + 1});

  options_.steady_hold = milliseconds(500);
  auto r = PmSamplingReader::Create(*cupti_, 0, 0, GrAndTensor(), options_);
  ASSERT_NE(r, nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<double> tensor_measured_at;  // seconds since t0
  int held = 0;
  for (int i = 0; i < kReads; ++i) {
    const Window w = ReadWindow(*r);
    if (w.Covered(1004) > 0) {
      tensor_measured_at.push_back(SecondsSince(t0));
      EXPECT_NEAR(w.Value(1004), 0.25, 1e-9);
      continue;
    }
    EXPECT_NEAR(w.Value(1001), 0.40, 1e-9) << "read " << i;
    EXPECT_GT(w.Covered(1001), 0.0) << "read " << i;
    if (tensor_measured_at.empty()) continue;  // not measured yet
    EXPECT_NEAR(w.Value(1004), 0.25, 1e-9) << "held tensor serves its last value, read " << i;
    ++held;
  }
  ASSERT_GE(tensor_measured_at.size(), 2u) << "tensor never measured again after its hold";
  for (size_t k = 1; k < tensor_measured_at.size(); ++k) {
    const double gap = tensor_measured_at[k] - tensor_measured_at[k - 1];
    EXPECT_GE(gap, 0.45) << "tensor measured again before its hold ran out";
    EXPECT_LE(gap, 1.2) << "tensor held past its hold";
  }
  EXPECT_GE(held, kReads / 2);
  EXPECT_LE(2 * r->sessions_started(), plain_sessions)
      << "with the hold " << r->sessions_started() << " sessions, without " << plain_sessions;
  EXPECT_EQ(r->losses(), 0u);
}

// GPU 11 idles for 1.5 s, loads (GR 60 %, tensor 30 %) for 1.5 s, idles, loads again. With a 5 s
// hold: through the load, once tensor has been measured, GR's configuration stays live and tensor
// keeps its value. GR drops at 3 s; the reads fall at x.x5 s, so one window straddles the drop
// (GR ~20-45 %, not idle): that dwell ends the hold and the reader switches, then serves the
// tensor value it measures. Through the idle phase the idle hold serves tensor as 0, and the
// second load has tensor measured again.
TEST_F(PmSamplingTest, SteadyHoldEndsWhenItsBoundMoves) {
  const auto t0 = std::chrono::steady_clock::now();  // ~ the simulated clock's 0 (SetUp)
  options_.steady_hold = milliseconds(5000);
  auto r = PmSamplingReader::Create(*cupti_, 11, 11, GrAndTensor(), options_);
  ASSERT_NE(r, nullptr);
  ASSERT_EQ(r->configurations(), 2u);
  uint64_t sessions = r->sessions_started();
  bool checked_step = false, after_step = false, measured_second_load = false;
  int held = 0;
  for (int k = 1; k <= 56; ++k) {
    const Window w = ReadWindowAt(*r, t0 + milliseconds(100 * k - 50));
    const double t = SecondsSince(t0);
    const uint64_t started = r->sessions_started() - sessions;
    sessions = r->sessions_started();
    if (t > 2.3 && t < 2.9) {  // the first load, tensor measured at its start: held
      EXPECT_EQ(started, 0u) << "switched while GR stayed at 60 %, t " << t;
      EXPECT_EQ(w.Covered(1004), 0.0) << "t " << t;
      EXPECT_NEAR(w.Value(1004), 0.30, 0.01) << "t " << t;
      EXPECT_NEAR(w.Value(1001), 0.60, 0.01) << "t " << t;
      ++held;
    } else if (t > 2.9 && !checked_step && w.Covered(1001) > 0 && w.Value(1001) < 0.50) {
      checked_step = after_step = true;  // GR moved by more than 10 points: the hold ends
      EXPECT_GT(w.Value(1001), 0.01) << "the read did not straddle the drop, t " << t;
      EXPECT_EQ(started, 1u) << "no switch at the end of the dwell in which GR moved, t " << t;
    } else if (after_step) {
      after_step = false;
      EXPECT_GT(w.Covered(1004), 0.0) << "tensor not live after the bound moved, t " << t;
      EXPECT_NEAR(w.Value(1004), 0.0, 0.01) << "the new (idle) tensor value, t " << t;
    } else if (t > 4.6) {
      measured_second_load |= w.Covered(1004) > 0 && w.Value(1004) > 0.29;
    }
  }
  EXPECT_GE(held, 4);
  EXPECT_TRUE(checked_step) << "GR never moved";
  EXPECT_TRUE(measured_second_load) << "tensor not measured in the second load";
  EXPECT_EQ(r->losses(), 0u);
}

// GPU 12 pulses (GR 100 % for 0.4 s, then 0 for 0.4 s) and never changes its load. A 1 s dwell
// of 100 ms windows holds 0.4 or 0.6 s of GR, so its mean moves by 20 points between dwells, more
// than kPmSteadyBoundPoints; the windows' own spread (a standard error of ~16 points per dwell)
// says the move is noise, so tensor is measured once and then held as under a constant load.
// Without the allowance every GR dwell that differs by 20 points ends in a switch.
TEST_F(PmSamplingTest, PulsingBoundWithinItsNoiseIsSteady) {
  options_.min_dwell = milliseconds(1000);
  options_.steady_hold = milliseconds(20000);
  auto r = PmSamplingReader::Create(*cupti_, 12, 12, GrAndTensor(), options_);
  ASSERT_NE(r, nullptr);
  ASSERT_EQ(r->configurations(), 2u);
  ASSERT_EQ(r->dwell(), 10u);
  const auto t0 = std::chrono::steady_clock::now();
  int tensor_measured = 0;
  for (int k = 1; k <= 70; ++k) {
    const Window w = ReadWindowAt(*r, t0 + milliseconds(100 * k));
    if (w.Covered(1004) > 0) ++tensor_measured;
  }
  // GR's configuration, tensor's for one dwell, GR's again, then held through four dwells.
  EXPECT_EQ(r->sessions_started(), 3u);
  EXPECT_GE(tensor_measured, 8);
  EXPECT_LE(tensor_measured, 11);
  EXPECT_EQ(r->losses(), 0u);
}

// Pinned fields are in every configuration: measured in every window, while the others alternate;
// a counter only measured alone cannot be served beside them.
TEST_F(PmSamplingTest, PinnedFieldsAreMeasuredWithoutGaps) {
  options_.pinned = {1001};
  ::testing::internal::CaptureStderr();
  auto r = PmSamplingReader::Create(*cupti_, 0, 0, Prof(), options_);
  const std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_NE(r, nullptr) << log;
  // GR + 6 shared, then GR + SM active; tensor, FP32, FP64 dropped.
  ASSERT_EQ(r->configurations(), 2u);
  EXPECT_EQ(Count(log, "the pinned fields are in every configuration"), 3u) << log;
  EXPECT_EQ(r->fields().size(), 8u);
  ASSERT_EQ(ReadFields(*r, 8).size(), 8u);
  for (int i = 0; i < 10; ++i) {
    std::this_thread::sleep_for(milliseconds(100));
    std::vector<model::Sample> v;
    std::vector<fields::FieldError> e;
    ASSERT_TRUE(r->Read(&v, &e).ok());
    std::vector<model::FieldCoverage> c;
    r->Coverage(&c);
    ASSERT_EQ(c.front().field_id, 1001);
    EXPECT_GT(c.front().ratio, 0.0) << "the pinned field is measured in window " << i;
  }
}

// The H200's stall as a regression case. GPU 8 stops completing samples 0.3 s into any session
// whose configuration holds the tensor-pipe counter beside SM activity or GR engine activity
// (what runs 6-7 and onepass-2026-12-04 recorded). Configured directly, such a session stalls;
// the reader never configures them together and serves all three without a loss.
TEST_F(PmSamplingTest, TensorBesideSmActiveStallsAndTheReaderNeverConfiguresIt) {
  auto chip = cupti_->ChipName(8);
  ASSERT_TRUE(chip.ok());
  const std::vector<std::string> together = {
      "sm__cycles_active.avg.pct_of_peak_sustained_elapsed",
      "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed"};
  auto config = cupti_->BuildConfig(*chip, {}, together);
  ASSERT_TRUE(config.ok());
  ASSERT_EQ(config->passes, 1u) << "one pass: only the stall keeps them apart";
  {
    cupti::PmSampler::Options o;
    o.device_index = 8;
    o.chip = *chip;
    o.metrics = together;
    o.config = std::move(config).value();
    o.interval_ns = 20'000'000;
    o.max_samples = 64;
    auto sampler = cupti::PmSampler::Start(*cupti_, std::move(o));
    ASSERT_TRUE(sampler.ok()) << sampler.status().ToString();
    std::this_thread::sleep_for(milliseconds(400));
    ASSERT_TRUE((*sampler)->Decode().ok());
    std::this_thread::sleep_for(milliseconds(200));
    auto w = (*sampler)->Decode();
    ASSERT_TRUE(w.ok());
    EXPECT_EQ(w->samples, 0u) << "the simulated GPU no longer stalls on the H200's combination";
  }
  options_.stall_after = milliseconds(300);
  ::testing::internal::CaptureStderr();
  auto r = PmSamplingReader::Create(
      *cupti_, 8, 8, {fields::FindById(1001), fields::FindById(1002), fields::FindById(1004)},
      options_);
  ASSERT_NE(r, nullptr);
  for (const auto& c : r->configuration_fields()) {
    bool tensor = false;
    for (size_t index : c) tensor |= r->fields()[index]->id == 1004;
    if (tensor) {
      EXPECT_EQ(c.size(), 1u) << "the tensor counter shares a configuration";
    }
  }
  int full = 0;
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
  while (std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(milliseconds(100));
    std::vector<model::Sample> v;
    std::vector<fields::FieldError> e;
    ASSERT_TRUE(r->Read(&v, &e).ok());
    full += v.size() == 3 ? 1 : 0;
  }
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(r->losses(), 0u) << log;
  EXPECT_EQ(Count(log, "stalled"), 0u) << log;
  EXPECT_GE(full, 10) << log;
}

// GPU 9: the configuration of the FMA-pipe counter alone completes no sample, as on the H100 under
// an fp32 load. That configuration is a loss, once per streak, and backs off; the field is absent
// rather than held; GR engine and tensor keep alternating and being served.
TEST_F(PmSamplingTest, OneAlternatedConfigurationStallingLeavesTheOthersServed) {
  options_.stall_after = milliseconds(150);
  options_.backoff_min = milliseconds(400);
  options_.backoff_max = milliseconds(400);
  ::testing::internal::CaptureStderr();
  auto r = PmSamplingReader::Create(
      *cupti_, 9, 9, {fields::FindById(1001), fields::FindById(1004), fields::FindById(1007)},
      options_);
  ASSERT_NE(r, nullptr);
  ASSERT_EQ(r->configuration_fields().size(), 3u);
  int reads = 0, gr = 0, tensor = 0, fp32 = 0;
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(2500);
  while (std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(milliseconds(40));
    std::vector<model::Sample> v;
    std::vector<fields::FieldError> e;
    ASSERT_TRUE(r->Read(&v, &e).ok());
    ++reads;
    gr += Find(v, 1001) != nullptr ? 1 : 0;
    tensor += Find(v, 1004) != nullptr ? 1 : 0;
    fp32 += Find(v, 1007) != nullptr ? 1 : 0;
  }
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_GE(r->losses(), 2u) << "retried after each backoff, stalled again: " << log;
  EXPECT_EQ(fp32, 0) << "a value the stalled configuration never measured";
  EXPECT_GE(gr, reads / 2) << log;
  EXPECT_GE(tensor, reads / 2) << log;
  EXPECT_EQ(Count(log, "the session stalled"), 1u) << "once per streak: " << log;
  EXPECT_NE(log.find("configuration=PIPE_FP32_ACTIVE"), std::string::npos) << log;
}

// A session's first samples (settle_samples) are counted but left out of the mean.
TEST_F(PmSamplingTest, SessionSettlesOverItsFirstSamples) {
  auto chip = cupti_->ChipName(0);
  ASSERT_TRUE(chip.ok());
  const std::string metric = "gr__cycles_active.avg.pct_of_peak_sustained_elapsed";
  auto config = cupti_->BuildConfig(*chip, {}, {metric});
  ASSERT_TRUE(config.ok());
  cupti::PmSampler::Options o;
  o.device_index = 0;
  o.chip = *chip;
  o.metrics = {metric};
  o.config = std::move(config).value();
  o.interval_ns = 20'000'000;
  o.max_samples = 64;
  o.settle_samples = 2;
  auto sampler = cupti::PmSampler::Start(*cupti_, std::move(o));
  ASSERT_TRUE(sampler.ok()) << sampler.status().ToString();
  size_t settling = 0, samples = 0;
  for (int d = 0; d < 6; ++d) {
    std::this_thread::sleep_for(milliseconds(50));
    auto w = (*sampler)->Decode();
    ASSERT_TRUE(w.ok());
    settling += w->settling;
    samples += w->samples;
    if (w->samples > 0) {
      EXPECT_NEAR(w->means[0], 40.0, 1e-9);
    }
  }
  EXPECT_EQ(settling, 2u);
  EXPECT_GE(samples, 6u);
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

std::vector<const fields::FieldDef*> SharedFive() {
  std::vector<const fields::FieldDef*> out;
  for (int id : {1001, 1003, 1005, 1009, 1010}) out.push_back(fields::FindById(id));
  return out;
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
  // One configuration: its session lives on, so its 3rd decode comes.
  auto r = PmSamplingReader::Create(*cupti_, 3, 3, SharedFive(), options_);
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

}  // namespace
}  // namespace nvmlx::collect
