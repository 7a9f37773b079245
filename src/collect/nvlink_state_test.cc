// NvlinkStateReader against the simulated GPUs: per-link nvmlDeviceGetNvLinkState answers turned
// into the NVLINK health watch's count of links down, with DCGM's MIG exception.
#include "collect/nvlink_state.h"

#include <gtest/gtest.h>
#include <stdlib.h>

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

nvml::Device Dev(const nvml::Library& lib, unsigned i) {
  auto d = lib.DeviceByIndex(i);
  EXPECT_TRUE(d.ok()) << d.status().ToString();
  return d.ok() ? *d : nullptr;
}

// testdata/scenarios/nvlink.yaml: 18 links up; 4 links with link 2 inactive; no NVLink.
TEST(NvlinkStateReaderTest, CountsInactiveLinksAndIgnoresErrors) {
  auto lib = Load(NVMLX_SOURCE_DIR "/testdata/scenarios/nvlink.yaml");
  ASSERT_NE(lib, nullptr);
  NvlinkStateReader reader(*lib);
  EXPECT_FALSE(reader.mig_enabled_anywhere());
  EXPECT_EQ(reader.LinksDown(Dev(*lib, 0)), 0u);
  EXPECT_EQ(reader.LinksDown(Dev(*lib, 1)), 1u);  // links 4..17: INVALID_ARGUMENT, ignored
  EXPECT_EQ(reader.LinksDown(Dev(*lib, 2)), std::nullopt);  // every link NOT_SUPPORTED
}

// MIG on one GPU of the host: another GPU's inactive link is not down (DCGM's bug 200682374
// workaround), though the link is still counted as answering.
TEST(NvlinkStateReaderTest, MigAnywhereTurnsInactiveIntoDisabled) {
  auto lib = Load(NVMLX_SOURCE_DIR "/testdata/scenarios/nvlink_mig.yaml");
  ASSERT_NE(lib, nullptr);
  NvlinkStateReader reader(*lib);
  EXPECT_TRUE(reader.mig_enabled_anywhere());
  EXPECT_EQ(reader.LinksDown(Dev(*lib, 1)), 0u);
  auto active = lib->NvlinkActive(Dev(*lib, 1), 3);
  ASSERT_TRUE(active.ok());
  EXPECT_FALSE(*active);  // the simulator does report it inactive
}

}  // namespace
}  // namespace nvmlx::collect
