// PlanPmConfigurations against pass counts given as a table (no CUPTI): the shared pass, the
// configurations of their own for the pipe counters, what pinning does, and the invariant the
// H200's stall asks for: the tensor-pipe counter never shares a configuration, whatever is asked.
#include "fields/pm_plan.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace nvmlx::fields {
namespace {

// A chip that takes `per_pass` metrics per pass; metrics in `unknown` are refused and those in
// `heavy` need two passes even alone (Turing's DRAM, the FP64 pipe on GA102).
PassCountFn Chip(size_t per_pass, std::vector<std::string> unknown = {},
                 std::vector<std::string> heavy = {}) {
  return [=](const std::vector<std::string>& metrics) -> Result<size_t> {
    size_t units = 0;
    for (const std::string& m : metrics) {
      if (std::find(unknown.begin(), unknown.end(), m.substr(0, m.find('.'))) != unknown.end()) {
        return InvalidArgument("no metric " + m);
      }
      units += std::find(heavy.begin(), heavy.end(), m.substr(0, m.find('.'))) != heavy.end()
                   ? per_pass + 1
                   : 1;
    }
    return (units + per_pass - 1) / per_pass;
  };
}

std::vector<const PmFieldMetric*> Metrics(std::vector<int> ids) {
  std::vector<const PmFieldMetric*> out;
  for (const PmFieldMetric& m : PmFieldMetrics()) {
    if (std::find(ids.begin(), ids.end(), m.field_id) != ids.end()) out.push_back(&m);
  }
  return out;
}

std::vector<std::vector<int>> Ids(const PmPlan& plan) {
  std::vector<std::vector<int>> out;
  for (const auto& c : plan.configurations) {
    out.emplace_back();
    for (const PmFieldMetric* m : c) out.back().push_back(m->field_id);
  }
  return out;
}

std::vector<int> DroppedIds(const PmPlan& plan) {
  std::vector<int> out;
  for (const auto& d : plan.dropped) out.push_back(d.metric->field_id);
  return out;
}

using V = std::vector<std::vector<int>>;

TEST(PmPlanTest, SeedFiveOnAnAmpereChip) {
  // GR, tensor, DRAM, PCIe TX/RX: the shared four in one pass, tensor alone.
  const PmPlan plan =
      PlanPmConfigurations(Metrics({1001, 1004, 1005, 1009, 1010}), {}, "GA102", Chip(8));
  EXPECT_EQ(Ids(plan), (V{{1001, 1005, 1009, 1010}, {1004}}));
  EXPECT_TRUE(plan.dropped.empty());
}

TEST(PmPlanTest, OneConfigurationWhenNothingNeedsItsOwn) {
  const PmPlan plan =
      PlanPmConfigurations(Metrics({1001, 1002, 1003, 1005, 1009, 1010}), {}, "GA102", Chip(8));
  EXPECT_EQ(Ids(plan).size(), 1u);
}

TEST(PmPlanTest, SharedFieldsThatDoNotFitMoveToAnotherConfiguration) {
  const PmPlan plan = PlanPmConfigurations(
      Metrics({1001, 1002, 1003, 1005, 1009, 1010, 1011, 1012}), {}, "X", Chip(3));
  EXPECT_EQ(Ids(plan), (V{{1001, 1005, 1009}, {1010, 1003, 1011}, {1012, 1002}}));
}

TEST(PmPlanTest, PipesAloneAndWhatNeedsMorePassesAloneIsDropped) {
  // Turing-like: DRAM and tensor need two passes even alone.
  const PmPlan plan =
      PlanPmConfigurations(Metrics({1001, 1004, 1005, 1006, 1007, 1009}), {}, "TU104",
                           Chip(7, {}, {"dram__cycles_active", "sm__pipe_tensor_cycles_active"}));
  EXPECT_EQ(Ids(plan), (V{{1001, 1009}, {1007}, {1006}}));
  EXPECT_EQ(DroppedIds(plan), (std::vector<int>{1005, 1004}));
  for (const auto& d : plan.dropped) {
    EXPECT_NE(d.why.find("would need 2 passes on TU104 alone"), std::string::npos) << d.why;
  }
}

// The FMA-pipe counter stalled GH100's sampler alone under an fp32 load (an H100, run 9): it is
// not planned there, pinned or not, whatever the pass count; other chips still alternate it.
TEST(PmPlanTest, CounterThatStallsAloneOnTheChipIsDroppedNamingTheMeasurement) {
  for (const std::vector<int>& pins : {std::vector<int>{}, std::vector<int>{1007}}) {
    const PmPlan plan = PlanPmConfigurations(Metrics({1001, 1004, 1007}), pins, "GH100", Chip(8));
    EXPECT_EQ(Ids(plan), (V{{1001}, {1004}}));
    ASSERT_EQ(DroppedIds(plan), (std::vector<int>{1007}));
    EXPECT_NE(plan.dropped[0].why.find("stops GH100's PM sampler under its own load"),
              std::string::npos)
        << plan.dropped[0].why;
  }
  const PmPlan ga102 = PlanPmConfigurations(Metrics({1001, 1004, 1007}), {}, "GA102", Chip(8));
  EXPECT_EQ(Ids(ga102), (V{{1001}, {1004}, {1007}}));
}

TEST(PmPlanTest, MetricTheChipLacksIsDroppedWithTheHostApisWord) {
  const PmPlan plan = PlanPmConfigurations(Metrics({1001, 1011, 1012}), {}, "AD102",
                                           Chip(8, {"nvltx__bytes", "nvlrx__bytes"}));
  EXPECT_EQ(Ids(plan), (V{{1001}}));
  ASSERT_EQ(plan.dropped.size(), 2u);
  EXPECT_NE(plan.dropped[0].why.find("not available on AD102"), std::string::npos);
}

TEST(PmPlanTest, PinnedFieldsAreInEveryConfigurationAndKeepThePipesOut) {
  const PmPlan plan =
      PlanPmConfigurations(Metrics({1001, 1002, 1003, 1004, 1005, 1007}), {1001}, "X", Chip(3));
  EXPECT_EQ(Ids(plan), (V{{1001, 1005, 1003}, {1001, 1002}}));
  EXPECT_EQ(DroppedIds(plan), (std::vector<int>{1004, 1007}));
  EXPECT_NE(plan.dropped[0].why.find("pinned fields are in every configuration"),
            std::string::npos);
}

TEST(PmPlanTest, PinnedPipeTakesTheGpuForItself) {
  const PmPlan plan =
      PlanPmConfigurations(Metrics({1001, 1004, 1005, 1007}), {1004, 1007}, "X", Chip(8));
  EXPECT_EQ(Ids(plan), (V{{1004}}));
  EXPECT_EQ(DroppedIds(plan).size(), 3u);  // FP32 (a second solo pin), GR, DRAM
}

TEST(PmPlanTest, PinnedFieldsThatDoNotFitTogetherKeepTheFirst) {
  const PmPlan plan =
      PlanPmConfigurations(Metrics({1001, 1005, 1009}), {1001, 1005, 1009}, "X", Chip(2));
  EXPECT_EQ(Ids(plan), (V{{1001, 1005}}));
  EXPECT_EQ(DroppedIds(plan), (std::vector<int>{1009}));
}

// The stall invariant, over every subset of the mapped fields, with and without each single pin,
// on chips of 1 to 8 metrics per pass: a counter measured only alone is always alone; SM activity
// and the tensor pipe never share a configuration; every served field is in some configuration
// and every requested one is served or dropped with a reason.
TEST(PmPlanTest, TensorNeverSharesAConfigurationWhateverIsAsked) {
  const auto all = PmFieldMetrics();
  ASSERT_LE(all.size(), 16u);
  size_t plans = 0;
  for (size_t per_pass : {1u, 2u, 3u, 8u}) {
    for (uint32_t mask = 1; mask < (1u << all.size()); mask += (per_pass == 8 ? 1 : 7)) {
      std::vector<const PmFieldMetric*> wanted;
      for (size_t i = 0; i < all.size(); ++i) {
        if (mask & (1u << i)) wanted.push_back(&all[i]);
      }
      std::vector<std::vector<int>> pin_sets = {{}};
      for (const PmFieldMetric* m : wanted) pin_sets.push_back({m->field_id});
      for (const auto& pins : pin_sets) {
        const PmPlan plan = PlanPmConfigurations(wanted, pins, "X", Chip(per_pass));
        ++plans;
        size_t accounted = plan.dropped.size();
        std::vector<int> served;
        for (const auto& c : plan.configurations) {
          ASSERT_FALSE(c.empty());
          bool sm = false, tensor = false;
          for (const PmFieldMetric* m : c) {
            if (m->own_configuration) {
              ASSERT_EQ(c.size(), 1u) << m->metric;
            }
            sm |= m->field_id == 1002;
            tensor |= m->field_id == 1004;
            if (std::find(served.begin(), served.end(), m->field_id) == served.end()) {
              served.push_back(m->field_id);
            }
          }
          ASSERT_FALSE(sm && tensor);
          ASSERT_LE(c.size(), per_pass);
        }
        accounted += served.size();
        ASSERT_EQ(accounted, wanted.size()) << "mask " << mask;
      }
    }
  }
  EXPECT_GT(plans, 1000u);
}

TEST(PmPlanTest, PinsResolveNamesAndIdsAndRefuseOtherFields) {
  Result<std::vector<int>> ok =
      ResolvePmPins({"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "1004", "DCGM_FI_PROF_GR_ENGINE_ACTIVE"});
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(*ok, (std::vector<int>{1001, 1004}));
  Result<std::vector<int>> unknown = ResolvePmPins({"DCGM_FI_PROF_NOPE"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("\"DCGM_FI_PROF_NOPE\" is not a DCGM field"),
            std::string::npos);
  Result<std::vector<int>> not_pm = ResolvePmPins({"DCGM_FI_PROF_PIPE_FP16_ACTIVE"});
  ASSERT_FALSE(not_pm.ok());
  EXPECT_NE(not_pm.status().message().find("not measured by PM sampling"), std::string::npos);
  EXPECT_FALSE(ResolvePmPins({"150"}).ok()) << "GPU temperature is no profiling field";
  EXPECT_FALSE(ResolvePmPins({"1001x"}).ok());
}

}  // namespace
}  // namespace nvmlx::fields
