// Test-only: what the PM-sampling tests share (pm_sampling_test.cc, the reader through the
// simulated CUPTI; pm_sampling_collector_test.cc, the collector's choice of source per GPU): the
// fixture that loads the simulated CUPTI and restarts its clock, a reader of one served window,
// and two small finders.
#ifndef NVML_EXPORTER_COLLECT_PM_SAMPLING_TEST_UTIL_H_
#define NVML_EXPORTER_COLLECT_PM_SAMPLING_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "collect/pm_sampling_reader.h"
#include "cupti/cupti.h"
#include "model/snapshot.h"
#include "tools/simgpu/sim_control.h"
#include "util/log.h"

namespace nvmlx::collect::pm_test {

using std::chrono::milliseconds;

inline const model::Sample* Find(const std::vector<model::Sample>& v, int id) {
  for (const auto& s : v) {
    if (s.field_id == id) return &s;
  }
  return nullptr;
}

inline size_t Count(const std::string& text, const std::string& what) {
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
    // These tests read faster than collect_interval, so a configuration is often live for less
    // than the samples it would settle over; SessionSettlesOverItsFirstSamples covers settling.
    options_.settle_samples = 0;
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
  // Reads every 30 ms until a window holds `n` fields (every configuration has been live), or
  // 3 s pass.
  std::vector<model::Sample> ReadFields(PmSamplingReader& r, size_t n) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    for (;;) {
      std::this_thread::sleep_for(milliseconds(30));
      std::vector<model::Sample> s;
      std::vector<fields::FieldError> e;
      EXPECT_TRUE(r.Read(&s, &e).ok());
      if (s.size() >= n || std::chrono::steady_clock::now() > deadline) return s;
    }
  }
  // One collection window as served: the values and the coverage of one Read() after `wait`, or
  // at `at`.
  struct Window {
    std::vector<model::Sample> values;
    std::vector<model::FieldCoverage> coverage;
    // The served value of `id` (NaN: none) and its coverage (0 when absent).
    double Value(int id) const {
      const model::Sample* s = Find(values, id);
      return s == nullptr ? std::nan("") : std::get<double>(s->value);
    }
    double Covered(int id) const {
      for (const auto& c : coverage) {
        if (c.field_id == id) return c.ratio;
      }
      return 0;
    }
  };
  Window ReadWindow(PmSamplingReader& r, milliseconds wait = milliseconds(100)) {
    return ReadWindowAt(r, std::chrono::steady_clock::now() + wait);
  }
  Window ReadWindowAt(PmSamplingReader& r, std::chrono::steady_clock::time_point at) {
    std::this_thread::sleep_until(at);
    Window w;
    std::vector<fields::FieldError> e;
    EXPECT_TRUE(r.Read(&w.values, &e).ok());
    r.Coverage(&w.coverage);
    return w;
  }
  std::unique_ptr<cupti::Library> cupti_;
  PmSamplingOptions options_;
};

}  // namespace nvmlx::collect::pm_test

#endif  // NVML_EXPORTER_COLLECT_PM_SAMPLING_TEST_UTIL_H_
