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

TEST(FieldPlanTest, VersionsAscendAndSameRowsComparesContent) {
  const std::string csv = "DCGM_FI_DEV_GPU_TEMP, gauge, temp\n";
  auto a = FieldPlan::Build(Parse(csv));
  auto b = FieldPlan::Build(Parse(csv));
  auto c = FieldPlan::Build(Parse("DCGM_FI_DEV_GPU_TEMP, gauge, other help\n"));
  EXPECT_LT(a->version(), b->version());
  EXPECT_TRUE(a->SameRows(*b));
  EXPECT_FALSE(a->SameRows(*c));
}

}  // namespace
}  // namespace nvmlx::plan
