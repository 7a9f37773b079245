#include "fields/field_roles.h"

#include <gtest/gtest.h>

#include "fields/field_ids.h"

namespace nvmlx::fields {
namespace {

// The catalog's field `name`. A name not there fails the test and gives an empty FieldDef for the
// caller's checks, never a null dereference (ASSERT_NE cannot return from a function that
// returns a reference).
const FieldDef& Named(std::string_view name) {
  const FieldDef* f = FindByName(name);
  if (f != nullptr) return *f;
  ADD_FAILURE() << name << " is not in the catalog";
  static const FieldDef kMissing{};
  return kMissing;
}

TEST(FieldRolesTest, EachSpecialFieldHasItsRoleAndBack) {
  const std::pair<std::string_view, Role> special[] = {
      {"DCGM_FI_DEV_XID_ERRORS", Role::kLastXid},
      {"DCGM_EXP_XID_ERRORS_COUNT", Role::kXidCounts},
      {"DCGM_EXP_CLOCK_EVENTS_COUNT", Role::kClockEventCounts},
      {"DCGM_EXP_GPU_HEALTH_STATUS", Role::kHealthStatus},
      {"DCGM_EXP_P2P_STATUS", Role::kP2pStatus},
      {"DCGM_EXP_XID_ERRORS_TOTAL", Role::kXidTotals},
      {"DCGM_EXP_CLOCK_EVENTS_TOTAL", Role::kClockEventTotals},
  };
  for (const auto& [name, role] : special) {
    EXPECT_EQ(RoleOf(Named(name)), role) << name;
    ASSERT_NE(FieldFor(role), nullptr) << name;
    EXPECT_EQ(FieldFor(role)->name, name);
  }
  EXPECT_EQ(RoleOf(Named("DCGM_FI_DEV_GPU_UTIL")), Role::kSample);
  EXPECT_EQ(FieldFor(Role::kSample), nullptr);
}

TEST(FieldRolesTest, XidWatcherAndGpuStatus) {
  EXPECT_TRUE(NeedsXidWatcher(Role::kLastXid));
  EXPECT_TRUE(NeedsXidWatcher(Role::kXidCounts));
  EXPECT_TRUE(NeedsXidWatcher(Role::kHealthStatus));  // evaluates the window's Xids
  EXPECT_TRUE(NeedsXidWatcher(Role::kXidTotals));
  EXPECT_FALSE(NeedsXidWatcher(Role::kClockEventCounts));
  EXPECT_FALSE(NeedsXidWatcher(Role::kClockEventTotals));
  EXPECT_FALSE(NeedsXidWatcher(Role::kP2pStatus));
  EXPECT_TRUE(IsGpuStatus(Role::kHealthStatus));
  EXPECT_TRUE(IsGpuStatus(Role::kP2pStatus));
  EXPECT_FALSE(IsGpuStatus(Role::kLastXid));
  EXPECT_FALSE(IsGpuStatus(Role::kXidTotals));
  EXPECT_FALSE(IsGpuStatus(Role::kClockEventTotals));
}

TEST(FieldRolesTest, MemoryAndGpmRatiosPerMigInstanceEverythingElsePerGpu) {
  for (const char* n :
       {"DCGM_FI_DEV_FB_TOTAL", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_FB_USED",
        "DCGM_FI_DEV_FB_RESERVED", "DCGM_FI_DEV_FB_USED_PERCENT", "DCGM_FI_DEV_BAR1_USED",
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_SM_ACTIVE", "DCGM_FI_PROF_DRAM_ACTIVE",
        "DCGM_FI_DEV_FB_CAPACITY_BYTES", "DCGM_FI_DEV_FB_FREE_BYTES", "DCGM_FI_DEV_FB_USED_BYTES",
        "DCGM_FI_DEV_FB_RESERVED_BYTES", "DCGM_FI_DEV_BAR1_CAPACITY_BYTES",
        "DCGM_FI_DEV_BAR1_USED_BYTES", "DCGM_FI_DEV_BAR1_FREE_BYTES"}) {
    EXPECT_EQ(MigScopeOf(Named(n)), MigScope::kInstance) << n;
  }
  // The byte rates are link counters of the whole GPU.
  for (const char* n :
       {"DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
        "DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_XID_ERRORS",
        "DCGM_FI_PROF_PCIE_TX_BYTES", "DCGM_FI_PROF_NVLINK_RX_BYTES", "DCGM_EXP_CLOCK_EVENTS_COUNT",
        "DCGM_FI_DEV_SM_CLOCK_HERTZ", "DCGM_FI_DEV_GPU_UTIL_RATIO",
        "DCGM_FI_DEV_GPU_ENERGY_JOULES_TOTAL", "DCGM_FI_DEV_FABRIC_HEALTH_MASK"}) {
    EXPECT_EQ(MigScopeOf(Named(n)), MigScope::kGpu) << n;
  }
}

TEST(FieldRolesTest, PodShare) {
  EXPECT_EQ(PodShareOf(Named("DCGM_FI_DEV_GPU_UTIL")), PodShare::kSmPercent);
  EXPECT_EQ(PodShareOf(Named("DCGM_FI_DEV_FB_USED")), PodShare::kMemoryMib);
  EXPECT_EQ(PodShareOf(Named("DCGM_FI_DEV_FB_FREE")), PodShare::kNone);
}

TEST(FieldRolesTest, UncollectedReasons) {
  EXPECT_EQ(UncollectedReason(Named("DCGM_FI_DEV_GPU_UTIL"), false), "");
  EXPECT_EQ(UncollectedReason(Named("DCGM_FI_DEV_XID_ERRORS"), false), "");
  EXPECT_EQ(UncollectedReason(Named("DCGM_EXP_P2P_STATUS"), false), "");
  EXPECT_EQ(UncollectedReason(Named("DCGM_FI_PROF_GR_ENGINE_ACTIVE"), false), "");
  EXPECT_EQ(UncollectedReason(Named("DCGM_FI_DRIVER_VERSION"), true), "");
  // A row of an unknown name (skipped, not refused): never collected, as metric or label.
  EXPECT_EQ(UncollectedReason(*UnknownNameField(), false), UnknownNameField()->skip_reason);
  EXPECT_EQ(UncollectedReason(*UnknownNameField(), true), UnknownNameField()->skip_reason);
  // Every catalog field with a role is collected; a skipped DCGM field says why.
  for (const FieldDef& f : AllFields()) {
    if (RoleOf(f) != Role::kSample) {
      EXPECT_EQ(UncollectedReason(f, false), "") << f.name;
    }
    if (!f.skip_reason.empty()) {
      EXPECT_EQ(UncollectedReason(f, false), f.skip_reason) << f.name;
    }
  }
}

TEST(FieldRolesTest, FindQuantity) {
  std::vector<model::Sample> samples = {{ids::kGpuTemp, int64_t{41}},
                                        {ids::kGpuUtil, int64_t{7}},
                                        {ids::kFbUsed, int64_t{1024}},
                                        {ids::kDramActive, 0.5}};
  ASSERT_NE(FindQuantity(samples, Quantity::kGpuUtilPercent), nullptr);
  EXPECT_EQ(std::get<int64_t>(FindQuantity(samples, Quantity::kGpuUtilPercent)->value), 7);
  EXPECT_EQ(std::get<int64_t>(FindQuantity(samples, Quantity::kGpuTempC)->value), 41);
  EXPECT_EQ(std::get<double>(FindQuantity(samples, Quantity::kDramActive)->value), 0.5);
  EXPECT_EQ(FindQuantity(samples, Quantity::kFbFreeMib), nullptr);
  EXPECT_EQ(FindQuantity(samples, Quantity::kLastXid), nullptr);
}

}  // namespace
}  // namespace nvmlx::fields
