// Library::ComputeProcesses and Library::ProcessUtilizations against the simulated GPUs of
// testdata/scenarios/processes.yaml (frozen clock: the sample window is deterministic).
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "nvml/nvml.h"

namespace nvmlx::nvml {
namespace {

const std::string kScenario = std::string(NVMLX_SOURCE_DIR) + "/testdata/scenarios/processes.yaml";

class ProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("NVMLX_SIMGPU_SCENARIO", kScenario.c_str(), 1);
    setenv("NVMLX_SIMGPU_FROZEN_TIME_S", "10", 1);
    auto lib = Library::Load(NVMLX_SIMGPU_LIBRARY);
    ASSERT_TRUE(lib.ok()) << lib.status().ToString();
    lib_ = std::move(lib).value();
  }
  void TearDown() override {
    lib_.reset();
    unsetenv("NVMLX_SIMGPU_SCENARIO");
    unsetenv("NVMLX_SIMGPU_FROZEN_TIME_S");
  }
  Device Dev(unsigned i) {
    auto d = lib_->DeviceByIndex(i);
    EXPECT_TRUE(d.ok());
    return d.ok() ? *d : nullptr;
  }
  std::unique_ptr<Library> lib_;
};

TEST_F(ProcessTest, ListsComputeProcessesWithMemory) {
  auto procs = lib_->ComputeProcesses(Dev(0));
  ASSERT_TRUE(procs.ok()) << procs.status().ToString();
  ASSERT_EQ(procs->size(), 5u);  // 4999 ended at t=0.3
  EXPECT_EQ((*procs)[0].pid, 4101u);
  EXPECT_EQ((*procs)[0].used_memory_bytes, 10240ull << 20);
  EXPECT_EQ((*procs)[0].gpu_instance_id, 0xFFFFFFFFu);
  EXPECT_EQ((*procs)[4].pid, 4401u);
}

TEST_F(ProcessTest, MeasuresThe32ByteStrideOfOld535Drivers) {
  // GPU 1 writes 32-byte entries into a buffer declared as 24-byte ones: read at 24 bytes, the
  // second entry's pid would be garbage (the upper half of the first's extra field).
  auto procs = lib_->ComputeProcesses(Dev(1));
  ASSERT_TRUE(procs.ok()) << procs.status().ToString();
  ASSERT_EQ(procs->size(), 2u);
  EXPECT_EQ((*procs)[0].pid, 5101u);
  EXPECT_EQ((*procs)[0].used_memory_bytes, 16384ull << 20);
  EXPECT_EQ((*procs)[1].pid, 5102u);
  EXPECT_EQ((*procs)[1].used_memory_bytes, 4096ull << 20);
}

TEST_F(ProcessTest, UtilizationClampedAndIdleOmitted) {
  auto util = lib_->ProcessUtilizations(Dev(0), 0);
  ASSERT_TRUE(util.ok()) << util.status().ToString();
  std::vector<unsigned> pids;
  for (const auto& u : *util) {
    pids.push_back(u.pid);
    EXPECT_LE(u.sm, 100u);
    if (u.pid == 4101) {
      EXPECT_EQ(u.sm, 40u);
      EXPECT_EQ(u.memory, 10u);
    }
    if (u.pid == 4999) {
      EXPECT_EQ(u.sm, 100u);  // 150 from a zombie entry, still in the 20 s sample buffer
    }
    EXPECT_GT(u.timestamp_us, 0u);
  }
  EXPECT_EQ(pids, (std::vector<unsigned>{4101, 4102, 4201, 4301, 4999}));  // 4401 idle
}

TEST_F(ProcessTest, LastSeenReturnsOnlyNewerSamplesAndNotFoundIsEmpty) {
  auto first = lib_->ProcessUtilizations(Dev(0), 0);
  ASSERT_TRUE(first.ok());
  ASSERT_FALSE(first->empty());
  uint64_t last = 0;
  for (const auto& u : *first) last = std::max(last, u.timestamp_us);
  // The clock is frozen: nothing is newer than the newest sample -> NVML's NOT_FOUND -> empty.
  auto again = lib_->ProcessUtilizations(Dev(0), last);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(again->empty());
  // Just before the newest sample: that one sample comes back, for every process still running
  // (4999 ended at t=0.3; its newest sample is older).
  auto one = lib_->ProcessUtilizations(Dev(0), last - 1);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->size(), 4u);
  for (const auto& u : *one) EXPECT_EQ(u.timestamp_us, last);
}

TEST_F(ProcessTest, FallsBackToTheOldUtilizationCall) {
  // A driver without the R550 call: same answers through nvmlDeviceGetProcessUtilization.
  Api& api = const_cast<Api&>(lib_->api());
  auto saved = api.nvmlDeviceGetProcessesUtilizationInfo;
  api.nvmlDeviceGetProcessesUtilizationInfo = nullptr;
  auto util = lib_->ProcessUtilizations(Dev(0), 0);
  api.nvmlDeviceGetProcessesUtilizationInfo = saved;
  ASSERT_TRUE(util.ok()) << util.status().ToString();
  ASSERT_EQ(util->size(), 5u);
  EXPECT_EQ((*util)[0].pid, 4101u);
  EXPECT_EQ((*util)[0].sm, 40u);
}

TEST_F(ProcessTest, FallsBackToV2AndLegacyProcessLists) {
  Api& api = const_cast<Api&>(lib_->api());
  auto v3 = api.nvmlDeviceGetComputeRunningProcesses_v3;
  auto v2 = api.nvmlDeviceGetComputeRunningProcesses_v2;
  api.nvmlDeviceGetComputeRunningProcesses_v3 = nullptr;
  auto via_v2 = lib_->ComputeProcesses(Dev(1));
  api.nvmlDeviceGetComputeRunningProcesses_v2 = nullptr;
  auto via_legacy = lib_->ComputeProcesses(Dev(1));
  api.nvmlDeviceGetComputeRunningProcesses_v3 = v3;
  api.nvmlDeviceGetComputeRunningProcesses_v2 = v2;
  ASSERT_TRUE(via_v2.ok()) << via_v2.status().ToString();
  ASSERT_TRUE(via_legacy.ok()) << via_legacy.status().ToString();
  ASSERT_EQ(via_v2->size(), 2u);
  ASSERT_EQ(via_legacy->size(), 2u);
  EXPECT_EQ((*via_legacy)[1].pid, 5102u);
  EXPECT_EQ((*via_legacy)[1].used_memory_bytes, 4096ull << 20);
  EXPECT_EQ((*via_legacy)[1].gpu_instance_id, 0xFFFFFFFFu);
}

}  // namespace
}  // namespace nvmlx::nvml
