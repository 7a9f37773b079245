#include "collect/health.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace nvmlx::collect {
namespace {

// The result of one watch.
model::HealthResult Watch(const std::vector<model::HealthResult>& rs, std::string_view watch) {
  for (const auto& r : rs) {
    if (r.watch == watch) return r;
  }
  ADD_FAILURE() << "no watch " << watch;
  return {};
}

// Every other watch must still pass: a condition raises exactly one watch.
void ExpectOnly(const HealthReadings& in, std::string_view watch, int value,
                std::string_view code) {
  const auto rs = EvaluateHealth(in);
  ASSERT_EQ(rs.size(), kHealthWatches.size());
  for (const auto& r : rs) {
    if (r.watch == watch) {
      EXPECT_EQ(r.value, value) << watch;
      EXPECT_EQ(r.error_code, code) << watch;
    } else {
      EXPECT_EQ(r.value, kHealthPass) << r.watch << " raised by a " << watch << " condition";
      EXPECT_EQ(r.error_code, "DCGM_FR_OK") << r.watch;
    }
  }
}

TEST(HealthTest, HealthyGpuPassesEveryWatchInUpstreamOrder) {
  HealthReadings in;
  in.volatile_dbe = 0;
  in.retired_sbe = 0;
  in.retired_dbe = 0;
  in.retired_pending = false;
  in.remap_uncorrectable = 0;
  in.remap_pending = 0;
  in.remap_failure = 0;
  in.clock_event_reasons = 0x1;  // GPU idle: not a slowdown
  in.pcie_link_gen = 5;
  in.pcie_link_width = 16;
  in.pcie_replays_last_minute = 0;
  in.nvlinks_down = 0;
  in.recovery_action = 0;
  const auto rs = EvaluateHealth(in);
  ASSERT_EQ(rs.size(), 11u);
  std::string order;
  for (const auto& r : rs) {
    order += std::string(r.watch) + ",";
    EXPECT_EQ(r.value, 0);
    EXPECT_EQ(r.error_code, "DCGM_FR_OK");
  }
  EXPECT_EQ(order, "PCIE,NVLINK,PMU,MCU,MEM,SM,INFOROM,THERMAL,POWER,DRIVER,ALL,");
}

struct Case {
  std::string name;
  HealthReadings in;
  std::string_view watch;
  int value;
  std::string_view code;
};

HealthReadings WithXid(int64_t xid) {
  HealthReadings r;
  r.xids = {{xid, 1}};
  return r;
}

TEST(HealthTest, EachConditionRaisesItsWatch) {
  std::vector<Case> cases;
  auto add = [&](std::string name, HealthReadings in, std::string_view w, int v,
                 std::string_view c) {
    cases.push_back({std::move(name), std::move(in), w, v, c});
  };
  HealthReadings r;
  r = {};
  r.volatile_dbe = 1;
  add("volatile DBE", r, "MEM", kHealthFail, "DCGM_FR_VOLATILE_DBE_DETECTED");
  r = {};
  r.retired_pending = true;
  add("page retirement pending", r, "MEM", kHealthWarn, "DCGM_FR_PENDING_PAGE_RETIREMENTS");
  r = {};
  r.retired_sbe = 40;
  r.retired_dbe = 22;
  cases.push_back({"62 retired pages", r, "", 0, ""});
  r.retired_dbe = 23;
  add("63 retired pages", r, "MEM", kHealthFail, "DCGM_FR_RETIRED_PAGES_LIMIT");
  r = {};
  r.remap_failure = 1;
  add("row remap failure", r, "MEM", kHealthFail, "DCGM_FR_ROW_REMAP_FAILURE");
  r = {};
  r.remap_uncorrectable = 512;
  add("512 uncorrectable remaps", r, "MEM", kHealthWarn, "DCGM_FR_UNCORRECTABLE_ROW_REMAP");
  r = {};
  r.remap_pending = 1;
  add("pending remap", r, "MEM", kHealthWarn, "DCGM_FR_PENDING_ROW_REMAP");
  r = {};
  r.clock_event_reasons = 0x40;
  add("HW thermal slowdown", r, "THERMAL", kHealthWarn, "DCGM_FR_CLOCK_THROTTLE_THERMAL");
  r = {};
  r.clock_event_reasons = 0x20;
  add("SW thermal slowdown", r, "THERMAL", kHealthWarn, "DCGM_FR_CLOCK_THROTTLE_THERMAL");
  r = {};
  r.clock_event_reasons = 0x4;
  add("SW power cap", r, "POWER", kHealthWarn, "DCGM_FR_CLOCK_THROTTLE_POWER");
  r = {};
  r.clock_event_reasons = 0x80;
  add("HW power brake", r, "POWER", kHealthWarn, "DCGM_FR_CLOCK_THROTTLE_POWER");
  r = {};
  r.power_readable = false;
  add("power unreadable", r, "POWER", kHealthWarn, "DCGM_FR_POWER_UNREADABLE");
  r = {};
  r.pcie_link_gen = 5;
  r.pcie_link_width = 16;
  r.pcie_replays_last_minute = 31;  // expected ceil(1.92 x 16) = 31: not above
  cases.push_back({"31 replays at gen5 x16", r, "", 0, ""});
  r.pcie_replays_last_minute = 32;
  add("32 replays at gen5 x16", r, "PCIE", kHealthWarn, "DCGM_FR_PCI_REPLAY_RATE");
  r = {};
  r.nvlinks_down = 2;
  add("NVLink down", r, "NVLINK", kHealthFail, "DCGM_FR_NVLINK_DOWN");
  // NVLink error totals over the last minute: CRC flit, CRC data, replay, recovery.
  r = {};
  r.nvlink_errors_last_minute = {0, 0, 0, 0};
  cases.push_back({"no NVLink error growth", r, "", 0, ""});
  r.nvlink_errors_last_minute = {1, 0, 0, 0};
  add("1 CRC flit error", r, "NVLINK", kHealthWarn, "DCGM_FR_NVLINK_ERROR_THRESHOLD");
  r.nvlink_errors_last_minute = {0, 5999, 0, 0};  // 99.98/s
  add("5999 CRC data errors", r, "NVLINK", kHealthWarn, "DCGM_FR_NVLINK_ERROR_THRESHOLD");
  r.nvlink_errors_last_minute = {6000, 0, 0, 0};  // 100/s
  add("6000 CRC flit errors", r, "NVLINK", kHealthFail, "DCGM_FR_NVLINK_CRC_ERROR_THRESHOLD");
  r.nvlink_errors_last_minute = {0, 0, 1, 0};
  add("1 replay", r, "NVLINK", kHealthFail, "DCGM_FR_NVLINK_ERROR_CRITICAL");
  r.nvlink_errors_last_minute = {3, 0, 0, 1};  // warn and fail: the fail wins
  add("1 recovery", r, "NVLINK", kHealthFail, "DCGM_FR_NVLINK_ERROR_CRITICAL");
  r = {};
  r.recovery_action = 1;
  add("recovery reset", r, "DRIVER", kHealthFail, "DCGM_FR_GPU_RECOVERY_RESET");
  r.recovery_action = 2;
  add("recovery reboot", r, "DRIVER", kHealthFail, "DCGM_FR_GPU_RECOVERY_REBOOT");
  r.recovery_action = 3;
  add("recovery drain P2P", r, "DRIVER", kHealthWarn, "DCGM_FR_GPU_RECOVERY_DRAIN_P2P");
  r.recovery_action = 4;
  add("recovery drain reset", r, "DRIVER", kHealthFail, "DCGM_FR_GPU_RECOVERY_DRAIN_RESET");
  r = {};
  r.fell_off_bus = true;
  add("GPU lost", r, "ALL", kHealthFail, "DCGM_FR_FALLEN_OFF_BUS");
  // Xids.
  add("Xid 31", WithXid(31), "MEM", kHealthWarn, "DCGM_FR_XID_ERROR");
  add("Xid 63", WithXid(63), "MEM", kHealthWarn, "DCGM_FR_PENDING_PAGE_RETIREMENTS");
  add("Xid 64", WithXid(64), "MEM", kHealthFail, "DCGM_FR_ROW_REMAP_FAILURE");
  add("Xid 38", WithXid(38), "PCIE", kHealthWarn, "DCGM_FR_XID_ERROR");
  add("Xid 60", WithXid(60), "THERMAL", kHealthWarn, "DCGM_FR_CLOCK_THROTTLE_THERMAL");
  add("Xid 57", WithXid(57), "POWER", kHealthWarn, "DCGM_FR_CLOCK_THROTTLE_POWER");
  add("Xid 78", WithXid(78), "POWER", kHealthWarn, "DCGM_FR_XID_ERROR");
  add("Xid 74", WithXid(74), "ALL", kHealthFail, "DCGM_FR_XID_ERROR");
  add("Xid 79", WithXid(79), "ALL", kHealthFail, "DCGM_FR_FALLEN_OFF_BUS");
  add("Xid 94", WithXid(94), "ALL", kHealthWarn, "DCGM_FR_CONTAINED_ERROR");
  add("Xid 95", WithXid(95), "ALL", kHealthFail, "DCGM_FR_UNCONTAINED_ERROR");
  add("Xid 137", WithXid(137), "NVLINK", kHealthWarn, "DCGM_FR_XID_ERROR");
  add("Xid 93", WithXid(93), "INFOROM", kHealthWarn, "DCGM_FR_CORRUPT_INFOROM");
  cases.push_back({"Xid 13 (application error)", WithXid(13), "", 0, ""});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ExpectOnly(c.in, c.watch, c.value, c.code);
  }
}

// DCGM's per-link classification of nvmlDeviceGetNvLinkState (UpdateNvLinkLinkStateFromNvml):
// errors are "not supported", inactive is down unless MIG is on somewhere on the host.
TEST(HealthTest, NvlinkLinkStatesCountAsDcgmDoes) {
  using S = NvlinkState;
  const std::vector<S> all_unsupported(18, S::kError);
  const std::vector<S> all_up(18, S::kActive);
  std::vector<S> two_down = all_up;
  two_down[3] = S::kInactive;
  two_down[17] = S::kInactive;
  std::vector<S> four_links(18, S::kError);  // links 4..17 answer INVALID_ARGUMENT
  four_links[0] = four_links[1] = four_links[3] = S::kActive;
  four_links[2] = S::kInactive;
  struct Case {
    const char* name;
    std::vector<S> links;
    bool mig;
    std::optional<unsigned> want;
  } cases[] = {
      {"no NVLink (H200 VM): every link NOT_SUPPORTED", all_unsupported, false, std::nullopt},
      {"no links at all", {}, false, std::nullopt},
      {"18 links up", all_up, false, 0u},
      {"links 3 and 17 inactive", two_down, false, 2u},
      {"inactive links under MIG are disabled", two_down, true, 0u},
      {"4 links, link 2 inactive, the rest past the end", four_links, false, 1u},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(CountNvlinksDown(c.links, c.mig), c.want) << c.name;
    HealthReadings r;
    r.nvlinks_down = CountNvlinksDown(c.links, c.mig);
    const bool down = c.want.value_or(0) > 0;
    ExpectOnly(r, "NVLINK", down ? kHealthFail : kHealthPass,
               down ? "DCGM_FR_NVLINK_DOWN" : "DCGM_FR_OK");
  }
}

// A lost GPU: ALL fails with DCGM_FR_FALLEN_OFF_BUS; the window's Xids still raise their watches.
TEST(HealthTest, LostGpuFailsAllWatch) {
  HealthReadings lost;
  lost.fell_off_bus = true;
  ExpectOnly(lost, "ALL", kHealthFail, "DCGM_FR_FALLEN_OFF_BUS");
  const auto plain = LostGpuHealth({});
  ASSERT_EQ(plain.size(), kHealthWatches.size());
  EXPECT_EQ(Watch(plain, "ALL").value, kHealthFail);
  EXPECT_EQ(Watch(plain, "ALL").error_code, "DCGM_FR_FALLEN_OFF_BUS");
  EXPECT_EQ(Watch(plain, "NVLINK").value, kHealthPass);
  const auto with_xid = LostGpuHealth({{79, 1}, {137, 2}});
  EXPECT_EQ(Watch(with_xid, "ALL").error_code, "DCGM_FR_FALLEN_OFF_BUS");
  EXPECT_EQ(Watch(with_xid, "NVLINK").value, kHealthWarn);
  EXPECT_EQ(Watch(with_xid, "NVLINK").error_code, "DCGM_FR_XID_ERROR");
}

TEST(HealthTest, WorstIncidentOfAWatchWins) {
  HealthReadings r;
  r.xids = {{31, 1}};   // MEM warn
  r.volatile_dbe = 3;   // MEM fail
  r.remap_pending = 1;  // MEM warn
  const auto m = Watch(EvaluateHealth(r), "MEM");
  EXPECT_EQ(m.value, kHealthFail);
  EXPECT_EQ(m.error_code, "DCGM_FR_VOLATILE_DBE_DETECTED");
}

TEST(HealthTest, ExpectedReplayRateFollowsDcgmTable) {
  EXPECT_EQ(ExpectedPcieReplaysPerMinute(0, 16), 0u);
  EXPECT_EQ(ExpectedPcieReplaysPerMinute(1, 1), 1u);    // ceil(0.15)
  EXPECT_EQ(ExpectedPcieReplaysPerMinute(3, 16), 8u);   // ceil(7.68)
  EXPECT_EQ(ExpectedPcieReplaysPerMinute(4, 16), 16u);  // ceil(15.36)
  EXPECT_EQ(ExpectedPcieReplaysPerMinute(5, 16), 31u);  // ceil(30.72)
  EXPECT_EQ(ExpectedPcieReplaysPerMinute(9, 16), 62u);  // capped at gen 6: ceil(61.44)
}

}  // namespace
}  // namespace nvmlx::collect
