#include "fields/clock_event_names.h"

#include <gtest/gtest.h>

namespace nvmlx::fields {
namespace {

TEST(ClockEventNameTest, DcgmExporterNames) {
  EXPECT_EQ(ClockEventName(0x1), "gpu_idle");
  EXPECT_EQ(ClockEventName(0x2), "clocks_setting");
  EXPECT_EQ(ClockEventName(0x4), "power_cap");
  EXPECT_EQ(ClockEventName(0x8), "hw_slowdown");
  EXPECT_EQ(ClockEventName(0x10), "sync_boost");
  EXPECT_EQ(ClockEventName(0x20), "sw_thermal");
  EXPECT_EQ(ClockEventName(0x40), "hw_thermal");
  EXPECT_EQ(ClockEventName(0x80), "hw_power_brake");
  EXPECT_EQ(ClockEventName(0x100), "display_clocks");
  EXPECT_EQ(ClockEventName(0x200), "");
  EXPECT_EQ(ClockEventName(0x5), "") << "one bit at a time";
}

}  // namespace
}  // namespace nvmlx::fields
