#include "plan/field_plan.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "util/log.h"

namespace nvmlx::plan {
namespace {

std::vector<config::CollectorEntry> Parse(const std::string& csv) {
  Result<std::vector<config::CollectorEntry>> rows = config::ParseCollectorsCsv(csv, "t.csv");
  EXPECT_TRUE(rows.ok()) << rows.status().ToString();
  return rows.ok() ? std::move(rows).value() : std::vector<config::CollectorEntry>{};
}

std::vector<std::string> Names(const std::vector<const fields::FieldDef*>& f) {
  std::vector<std::string> out;
  for (const fields::FieldDef* d : f) out.emplace_back(d->name);
  return out;
}

TEST(FieldPlanTest, FamiliesInIdOrderLabelsByName) {
  auto plan =
      FieldPlan::Build(Parse("DCGM_FI_DEV_POWER_USAGE, gauge, power\n"
                             "DCGM_FI_DRIVER_VERSION, label, driver\n"
                             "DCGM_FI_DEV_GPU_TEMP, gauge, temp\n"
                             "DCGM_FI_DEV_SM_CLOCK, gauge, clock\n"
                             "DCGM_FI_DEV_BRAND, label, brand\n"));
  std::vector<std::string> families;
  for (const Family& f : plan->families()) families.push_back(f.row->name);
  EXPECT_EQ(families, (std::vector<std::string>{"DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_GPU_TEMP",
                                                "DCGM_FI_DEV_POWER_USAGE"}));
  ASSERT_EQ(plan->label_rows().size(), 2u);
  EXPECT_EQ(plan->label_rows()[0]->name, "DCGM_FI_DEV_BRAND");
  EXPECT_EQ(plan->label_rows()[1]->name, "DCGM_FI_DRIVER_VERSION");
  // Label fields in file order: read once per GPU at start.
  EXPECT_EQ(Names(plan->label_fields()),
            (std::vector<std::string>{"DCGM_FI_DRIVER_VERSION", "DCGM_FI_DEV_BRAND"}));
  EXPECT_EQ(plan->rows().size(), 5u);
}

TEST(FieldPlanTest, SpecialFieldsHaveRolesAndFlags) {
  auto plan =
      FieldPlan::Build(Parse("DCGM_FI_DEV_GPU_UTIL, gauge, util\n"
                             "DCGM_EXP_P2P_STATUS, gauge, p2p\n"
                             "DCGM_FI_DEV_XID_ERRORS, gauge, xid\n"
                             "DCGM_EXP_CLOCK_EVENTS_COUNT, gauge, ce\n"));
  ASSERT_EQ(plan->families().size(), 4u);
  EXPECT_EQ(plan->families()[0].role, fields::Role::kSample);
  EXPECT_EQ(plan->families()[0].pod_share, fields::PodShare::kSmPercent);
  EXPECT_EQ(plan->families()[1].role, fields::Role::kLastXid);
  EXPECT_EQ(plan->families()[2].role, fields::Role::kClockEventCounts);
  EXPECT_EQ(plan->families()[3].role, fields::Role::kP2pStatus);
  EXPECT_TRUE(plan->Has(fields::Role::kLastXid));
  EXPECT_TRUE(plan->Has(fields::Role::kP2pStatus));
  EXPECT_FALSE(plan->Has(fields::Role::kHealthStatus));
  EXPECT_FALSE(plan->Has(fields::Role::kXidCounts));
  EXPECT_TRUE(plan->NeedsXidWatcher());

  auto no_xid = FieldPlan::Build(Parse("DCGM_EXP_P2P_STATUS, gauge, p2p\n"));
  EXPECT_FALSE(no_xid->NeedsXidWatcher());
  auto health = FieldPlan::Build(Parse("DCGM_EXP_GPU_HEALTH_STATUS, gauge, h\n"));
  EXPECT_TRUE(health->NeedsXidWatcher());  // health evaluates the window's Xids
}

// dcgm-exporter 4.8.3's _TOTAL rows: counters after the _COUNT families (id order); the Xid one
// needs the watcher, the clock-event one does not.
TEST(FieldPlanTest, TotalCountersHaveTheirRoles) {
  auto plan =
      FieldPlan::Build(Parse("DCGM_EXP_CLOCK_EVENTS_TOTAL, counter, ce total\n"
                             "DCGM_EXP_XID_ERRORS_COUNT, gauge, xid count\n"
                             "DCGM_EXP_XID_ERRORS_TOTAL, counter, xid total\n"));
  ASSERT_EQ(plan->families().size(), 3u);
  EXPECT_EQ(plan->families()[0].role, fields::Role::kXidCounts);
  EXPECT_EQ(plan->families()[1].role, fields::Role::kXidTotals);
  EXPECT_EQ(plan->families()[2].role, fields::Role::kClockEventTotals);
  EXPECT_EQ(plan->families()[1].row->type, config::MetricType::kCounter);
  EXPECT_TRUE(plan->Has(fields::Role::kXidTotals));
  EXPECT_TRUE(plan->Has(fields::Role::kClockEventTotals));
  EXPECT_FALSE(plan->Has(fields::Role::kClockEventCounts));

  auto xid_total = FieldPlan::Build(Parse("DCGM_EXP_XID_ERRORS_TOTAL, counter, x\n"));
  EXPECT_TRUE(xid_total->NeedsXidWatcher());
  auto clock_total = FieldPlan::Build(Parse("DCGM_EXP_CLOCK_EVENTS_TOTAL, counter, c\n"));
  EXPECT_FALSE(clock_total->NeedsXidWatcher());
  EXPECT_TRUE(clock_total->Has(fields::Role::kClockEventTotals));
}

TEST(FieldPlanTest, ScopesSplitForMig) {
  auto plan =
      FieldPlan::Build(Parse("DCGM_FI_DEV_FB_USED, gauge, fb\n"
                             "DCGM_FI_DEV_GPU_TEMP, gauge, temp\n"
                             "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION, counter, energy\n"
                             "DCGM_FI_PROF_GR_ENGINE_ACTIVE, gauge, gr\n"
                             "DCGM_FI_PROF_PCIE_TX_BYTES, gauge, tx\n"
                             "DCGM_FI_DEV_FB_USED, gauge, fb again\n"));
  const EntityFields& whole = plan->For(Scope::kWhole);
  EXPECT_EQ(Names(whole.fast),
            (std::vector<std::string>{"DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_GPU_TEMP"}));
  EXPECT_EQ(Names(whole.slow), (std::vector<std::string>{"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"}));
  EXPECT_EQ(Names(whole.profiling), (std::vector<std::string>{"DCGM_FI_PROF_GR_ENGINE_ACTIVE",
                                                              "DCGM_FI_PROF_PCIE_TX_BYTES"}));
  const EntityFields& gpu = plan->For(Scope::kMigGpu);
  EXPECT_EQ(Names(gpu.fast), (std::vector<std::string>{"DCGM_FI_DEV_GPU_TEMP"}));
  EXPECT_EQ(Names(gpu.profiling), (std::vector<std::string>{"DCGM_FI_PROF_PCIE_TX_BYTES"}));
  const EntityFields& instance = plan->For(Scope::kInstance);
  EXPECT_EQ(Names(instance.fast), (std::vector<std::string>{"DCGM_FI_DEV_FB_USED"}));
  EXPECT_TRUE(instance.slow.empty());
  EXPECT_EQ(Names(instance.profiling), (std::vector<std::string>{"DCGM_FI_PROF_GR_ENGINE_ACTIVE"}));
}

TEST(FieldPlanTest, UncollectedRowsAreDroppedWithOneWarningEach) {
  log::Init(log::Format::kText, false);
  ::testing::internal::CaptureStderr();
  // DCGM_FI_DEV_NVSWITCH_* is known to DCGM and not read by us (a skip reason).
  auto plan = FieldPlan::Build(Parse("DCGM_FI_DEV_GPU_TEMP, gauge, temp\n"
                                     "DCGM_FI_DEV_NVSWITCH_VOLTAGE_MVOLT, gauge, v\n"),
                               "t.csv");
  const std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_EQ(plan->rows().size(), 1u);
  EXPECT_EQ(plan->rows()[0].name, "DCGM_FI_DEV_GPU_TEMP");
  EXPECT_NE(log.find("metric not enabled"), std::string::npos) << log;
  EXPECT_NE(log.find("line=2"), std::string::npos) << log;
  EXPECT_NE(log.find("file=t.csv"), std::string::npos) << log;
}

// A name no release we know has (--collectors-unknown-fields=skip): left out without the plan's
// own warning (the parser's names file:line), listed for the page, and part of SameRows so that
// a reload adding or dropping one changes the list.
TEST(FieldPlanTest, UnknownNamesAreLeftOutAndListed) {
  log::Init(log::Format::kText, false);
  ::testing::internal::CaptureStderr();
  auto plan = FieldPlan::Build(Parse("DCGM_FI_DEV_GPU_TEMP, gauge, temp\n"
                                     "DCGM_FI_DEV_FROM_A_LATER_RELEASE, gauge, x\n"
                                     "DCGM_FI_DEV_ALSO_LATER, counter, y\n"),
                               "t.csv");
  const std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_EQ(plan->rows().size(), 1u);
  EXPECT_EQ(plan->families().size(), 1u);
  EXPECT_EQ(plan->unknown_names(), (std::vector<std::string>{"DCGM_FI_DEV_FROM_A_LATER_RELEASE",
                                                             "DCGM_FI_DEV_ALSO_LATER"}));
  EXPECT_EQ(log.find("metric not enabled"), std::string::npos) << log;
  auto without = FieldPlan::Build(Parse("DCGM_FI_DEV_GPU_TEMP, gauge, temp\n"));
  EXPECT_TRUE(without->unknown_names().empty());
  EXPECT_FALSE(plan->SameRows(*without));
  EXPECT_FALSE(without->SameRows(*plan));
}

TEST(FieldPlanTest, VersionsAscendAndSameRowsComparesContent) {
  const std::string csv = "DCGM_FI_DEV_GPU_TEMP, gauge, temp\n";
  auto a = FieldPlan::Build(Parse(csv));
  auto b = FieldPlan::Build(Parse(csv));
  auto c = FieldPlan::Build(Parse("DCGM_FI_DEV_GPU_TEMP, gauge, other help\n"));
  EXPECT_LT(a->version(), b->version());
  EXPECT_TRUE(a->SameRows(*b));
  EXPECT_FALSE(a->SameRows(*c));
}

Cadences Groups(std::vector<config::Options::WatchGroup> groups) {
  return Cadences{std::chrono::milliseconds(1000), std::move(groups)};
}

TEST(FieldPlanTest, WatchGroupsSetCadencesLongerThanTheInterval) {
  using std::chrono::milliseconds;
  log::Init(log::Format::kText, false);
  ::testing::internal::CaptureStderr();
  auto plan = FieldPlan::Build(
      Parse("DCGM_FI_DEV_GPU_TEMP, gauge, temp\n"
            "DCGM_FI_DEV_POWER_USAGE, gauge, power\n"
            "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION, counter, energy\n"
            "DCGM_FI_DEV_PCIE_REPLAY_COUNTER, counter, replays\n"
            "DCGM_FI_DEV_SM_CLOCK, gauge, clock\n"
            "DCGM_FI_DEV_XID_ERRORS, gauge, xid\n"
            "DCGM_FI_DRIVER_VERSION, label, driver\n"),
      "t.csv",
      Groups({{"slow",
               milliseconds(30000),
               {"DCGM_FI_DEV_TOTAL_*", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "DCGM_FI_DEV_XID_ERRORS",
                "DCGM_FI_DRIVER_*"},
               "c.yaml:3"},
              {"minute", milliseconds(60000), {"DCGM_FI_DEV_SM_?LOCK"}, "c.yaml:9"},
              {"fast", milliseconds(500), {"DCGM_FI_DEV_GPU_TEMP"}, "c.yaml:12"}}));
  const std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  const EntityFields& whole = (*plan)->For(Scope::kWhole);
  // Faster than the interval: every collection (the page is no fresher than its collections).
  EXPECT_EQ(Names(whole.fast),
            (std::vector<std::string>{"DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE"}));
  EXPECT_TRUE(whole.slow.empty()) << Names(whole.slow)[0];
  ASSERT_EQ(whole.periodic.size(), 2u);
  EXPECT_EQ(whole.periodic[0].every, milliseconds(30000));
  EXPECT_EQ(Names(whole.periodic[0].fields),
            (std::vector<std::string>{"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
                                      "DCGM_FI_DEV_PCIE_REPLAY_COUNTER"}));
  EXPECT_EQ(whole.periodic[1].every, milliseconds(60000));
  EXPECT_EQ(Names(whole.periodic[1].fields), (std::vector<std::string>{"DCGM_FI_DEV_SM_CLOCK"}));
  EXPECT_EQ((*plan)->EveryOf(fields::FindByName("DCGM_FI_DEV_SM_CLOCK")), milliseconds(60000));
  EXPECT_EQ((*plan)->EveryOf(fields::FindByName("DCGM_FI_DEV_GPU_TEMP")), milliseconds(0));
  // The Xid field is event-driven: its cadence cannot change, and the log says so.
  EXPECT_EQ((*plan)->EveryOf(fields::FindByName("DCGM_FI_DEV_XID_ERRORS")), milliseconds(0));
  EXPECT_NE(log.find("no effect"), std::string::npos) << log;
  EXPECT_NE(log.find("DCGM_FI_DEV_XID_ERRORS"), std::string::npos) << log;
  // MIG: the GPU-wide part reads the GPU-wide periodic fields.
  const EntityFields& mig_gpu = (*plan)->For(Scope::kMigGpu);
  ASSERT_FALSE(mig_gpu.periodic.empty());
  EXPECT_EQ(mig_gpu.periodic[0].every, milliseconds(30000));
}

// The checks are config::CheckWatchGroups's (their messages: yaml_config_test); the plan refuses
// what they refuse, so no stage runs under groups dcgm-exporter would not start with.
TEST(FieldPlanTest, WatchGroupsThatDcgmExporterRefusesAreErrors) {
  using std::chrono::milliseconds;
  const std::string csv =
      "DCGM_FI_DEV_GPU_TEMP, gauge, temp\nDCGM_FI_DEV_POWER_USAGE, gauge, power\n";
  auto none = FieldPlan::Build(
      Parse(csv), "t.csv",
      Groups({{"thermals", milliseconds(5000), {"DCGM_FI_DEV_MEMORY_TEMP"}, "c.yaml:4"}}));
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().message().rfind("c.yaml:4: ", 0), 0u) << none.status().message();
  EXPECT_NE(none.status().message().find("\"thermals\""), std::string::npos);
  auto twice = FieldPlan::Build(
      Parse(csv), "t.csv",
      Groups({{"a", milliseconds(5000), {"DCGM_FI_DEV_*"}, "c.yaml:4"},
              {"b", milliseconds(9000), {"DCGM_FI_DEV_POWER_USAGE"}, "c.yaml:8"}}));
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().message().rfind("c.yaml:8: ", 0), 0u) << twice.status().message();
  EXPECT_NE(twice.status().message().find("DCGM_FI_DEV_POWER_USAGE"), std::string::npos);
  // One group naming a field twice is not a conflict.
  auto same = FieldPlan::Build(
      Parse(csv), "t.csv",
      Groups({{"a", milliseconds(5000), {"DCGM_FI_DEV_*", "DCGM_FI_DEV_GPU_TEMP"}, "c.yaml:4"}}));
  EXPECT_TRUE(same.ok()) << same.status().ToString();
}

}  // namespace
}  // namespace nvmlx::plan
