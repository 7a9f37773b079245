// NvlinkHealthReader against the simulated GPUs: per-link nvmlDeviceGetNvLinkState answers turned
// into the NVLINK health watch's count of links down, with DCGM's MIG exception, and the error
// totals' growth over the last minute.
#include "collect/nvlink_health.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "tools/simgpu/sim_control.h"

namespace nvmlx::collect {
namespace {

std::unique_ptr<nvml::Library> Load(const char* scenario) {
  setenv("NVMLX_SIMGPU_SCENARIO", scenario, 1);
  setenv("NVMLX_SIMGPU_FROZEN_TIME_S", "100", 1);
  auto lib = nvml::Library::Load(NVMLX_SIMGPU_LIBRARY);
  unsetenv("NVMLX_SIMGPU_FROZEN_TIME_S");
  EXPECT_TRUE(lib.ok()) << lib.status().ToString();
  return lib.ok() ? std::move(*lib) : nullptr;
}

std::string_view Watch(const std::vector<model::HealthResult>& rs, std::string_view watch) {
  for (const auto& r : rs) {
    if (r.watch == watch) return r.error_code;
  }
  return "missing";
}

nvml::Device Dev(const nvml::Library& lib, unsigned i) {
  auto d = lib.DeviceByIndex(i);
  EXPECT_TRUE(d.ok()) << d.status().ToString();
  return d.ok() ? *d : nullptr;
}

// testdata/scenarios/nvlink.yaml: 18 links up; 4 links with link 2 inactive; no NVLink.
TEST(NvlinkHealthReaderTest, CountsInactiveLinksAndIgnoresErrors) {
  auto lib = Load(NVMLX_SOURCE_DIR "/testdata/scenarios/nvlink.yaml");
  ASSERT_NE(lib, nullptr);
  NvlinkHealthReader reader(*lib);
  EXPECT_FALSE(reader.mig_enabled_anywhere());
  EXPECT_EQ(reader.LinksDown(Dev(*lib, 0)), 0u);
  EXPECT_EQ(reader.LinksDown(Dev(*lib, 1)), 1u);  // links 4..17: INVALID_ARGUMENT, ignored
  EXPECT_EQ(reader.LinksDown(Dev(*lib, 2)), std::nullopt);  // every link NOT_SUPPORTED
}

// The error totals' growth within the last minute (nvlink.yaml GPU 0: replays grow 0.18/s, the
// other totals are constant; GPU 2 has no NVLink).
TEST(NvlinkHealthReaderTest, ErrorTotalsOverTheLastMinute) {
  auto lib = Load(NVMLX_SOURCE_DIR "/testdata/scenarios/nvlink.yaml");
  ASSERT_NE(lib, nullptr);
  NvlinkHealthReader reader(*lib);
  const auto t0 = CounterWindow::Clock::now();
  HealthReadings first;
  reader.Read(Dev(*lib, 0), t0, &first);
  EXPECT_EQ(first.nvlinks_down, 0u);
  for (const auto& e : first.nvlink_errors_last_minute) EXPECT_FALSE(e.has_value());  // 1 sample

  ASSERT_EQ(simgpu::SetFrozenTime(NVMLX_SIMGPU_LIBRARY, 110), "");  // replays 18 -> 19.8
  HealthReadings second;
  reader.Read(Dev(*lib, 0), t0 + std::chrono::seconds(10), &second);
  EXPECT_EQ(second.nvlink_errors_last_minute[0], 0u);  // CRC flit: constant
  EXPECT_EQ(second.nvlink_errors_last_minute[1], 0u);
  EXPECT_EQ(second.nvlink_errors_last_minute[2], 1u);  // replay: 18 -> 19
  EXPECT_EQ(second.nvlink_errors_last_minute[3], 0u);
  EXPECT_EQ(Watch(EvaluateHealth(second), "NVLINK"), "DCGM_FR_NVLINK_ERROR_CRITICAL");

  // 65 s after t0 the first sample has left the minute: the growth is measured from t0 + 10 s.
  ASSERT_EQ(simgpu::SetFrozenTime(NVMLX_SIMGPU_LIBRARY, 180), "");  // replays 32.4
  HealthReadings third;
  reader.Read(Dev(*lib, 0), t0 + std::chrono::seconds(65), &third);
  EXPECT_EQ(third.nvlink_errors_last_minute[2], 13u);  // 19 -> 32

  HealthReadings none;  // no NVLink: nothing read, NVLINK passes
  reader.Read(Dev(*lib, 2), t0, &none);
  reader.Read(Dev(*lib, 2), t0 + std::chrono::seconds(10), &none);
  EXPECT_EQ(none.nvlinks_down, std::nullopt);
  for (const auto& e : none.nvlink_errors_last_minute) EXPECT_FALSE(e.has_value());
  EXPECT_EQ(Watch(EvaluateHealth(none), "NVLINK"), "DCGM_FR_OK");
}

// MIG on one GPU of the host: another GPU's inactive link is not down (DCGM's bug 200682374
// workaround), though the link is still counted as answering.
TEST(NvlinkHealthReaderTest, MigAnywhereTurnsInactiveIntoDisabled) {
  auto lib = Load(NVMLX_SOURCE_DIR "/testdata/scenarios/nvlink_mig.yaml");
  ASSERT_NE(lib, nullptr);
  NvlinkHealthReader reader(*lib);
  EXPECT_TRUE(reader.mig_enabled_anywhere());
  EXPECT_EQ(reader.LinksDown(Dev(*lib, 1)), 0u);
  auto active = lib->NvlinkActive(Dev(*lib, 1), 3);
  ASSERT_TRUE(active.ok());
  EXPECT_FALSE(*active);  // the simulator does report it inactive
}

}  // namespace
}  // namespace nvmlx::collect
