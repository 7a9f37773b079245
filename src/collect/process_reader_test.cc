// ProcessReader and the collector's process_metrics against simulated processes
// (testdata/scenarios/processes.yaml): lastSeen windows, NOT_FOUND as idle, failures degrading
// only the processes of one GPU.
#include "collect/process_reader.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include "collect/collector.h"
#include "fields/catalog.h"
#include "plan/plan_test_util.h"

namespace nvmlx::collect {
namespace {

using plan::testing::PlanOf;
using plan::testing::Row;

const std::string kScenario = std::string(NVMLX_SOURCE_DIR) + "/testdata/scenarios/processes.yaml";

class ProcessReaderTest : public ::testing::Test {
 protected:
  void Load(const std::string& scenario, const char* frozen_s) {
    lib_.reset();
    setenv("NVMLX_SIMGPU_SCENARIO", scenario.c_str(), 1);
    if (frozen_s != nullptr) {
      setenv("NVMLX_SIMGPU_FROZEN_TIME_S", frozen_s, 1);
    } else {
      unsetenv("NVMLX_SIMGPU_FROZEN_TIME_S");
    }
    auto lib = nvml::Library::Load(NVMLX_SIMGPU_LIBRARY);
    ASSERT_TRUE(lib.ok()) << lib.status().ToString();
    lib_ = std::move(lib).value();
  }
  void TearDown() override {
    lib_.reset();
    unsetenv("NVMLX_SIMGPU_SCENARIO");
    unsetenv("NVMLX_SIMGPU_FROZEN_TIME_S");
  }
  nvml::Device Dev(unsigned i) { return *lib_->DeviceByIndex(i); }
  std::unique_ptr<nvml::Library> lib_;
};

TEST_F(ProcessReaderTest, FrozenClockNothingNewIsIdleNotAnError) {
  Load(kScenario, "10");
  ProcessReader r(*lib_, Dev(0));  // priming consumed every sample up to t=10
  std::vector<model::ProcessSample> out;
  ASSERT_TRUE(r.Read(&out).ok());
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[0].pid, 4101u);
  EXPECT_EQ(out[0].used_memory_bytes, 10240ull << 20);
  for (const model::ProcessSample& p : out) {
    EXPECT_FALSE(p.has_utilization) << p.pid;  // NOT_FOUND: idle since the last read
    EXPECT_EQ(p.sm_util_percent, 0u);
  }
}

// A MIG device handle lists its own processes with its instance ids; the memory-only reader
// makes no utilization call (NOT_SUPPORTED under MIG), so a read is not a failure there.
TEST_F(ProcessReaderTest, MigInstanceMemoryOnly) {
  Load(std::string(NVMLX_SOURCE_DIR) + "/testdata/scenarios/processes_mig.yaml", "10");
  auto mig = lib_->MigDeviceByIndex(Dev(0), 0);
  ASSERT_TRUE(mig.ok() && mig->has_value());
  auto listed = lib_->ComputeProcesses(**mig);
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 3u);
  EXPECT_EQ((*listed)[0].gpu_instance_id, 1u);
  EXPECT_EQ((*listed)[0].compute_instance_id, 0u);
  EXPECT_EQ(lib_->ProcessUtilizations(**mig, 0).status().code(), StatusCode::kNotSupported);

  ProcessReader memory_only(*lib_, **mig, ProcessReader::Mode::kMemoryOnly);
  std::vector<model::ProcessSample> out;
  ASSERT_TRUE(memory_only.Read(&out).ok());
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[2].pid, 4201u);
  EXPECT_EQ(out[2].used_memory_bytes, 8192ull << 20);
  EXPECT_FALSE(out[2].has_utilization);
  // The full reader reports the utilization failure (the list is kept).
  ProcessReader full(*lib_, **mig);
  EXPECT_EQ(full.Read(&out).code(), StatusCode::kNotSupported);
  EXPECT_EQ(out.size(), 3u);
  // The other instance has only its own process.
  auto other = lib_->MigDeviceByIndex(Dev(0), 2);
  ASSERT_TRUE(other.ok() && other->has_value());
  ASSERT_EQ(lib_->ComputeProcesses(**other)->size(), 1u);
  EXPECT_EQ((*lib_->ComputeProcesses(**other))[0].pid, 5101u);
}

TEST_F(ProcessReaderTest, RunningClockGivesTheWindowsAverage) {
  Load(kScenario, nullptr);
  ProcessReader r(*lib_, Dev(0));
  std::vector<model::ProcessSample> out;
  // Wait for new samples (1/6 s apart) so that the window is not empty; values are constant, so
  // what is checked does not depend on how long the window is.
  for (int i = 0; i < 50; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ASSERT_TRUE(r.Read(&out).ok());
    if (!out.empty() && out[0].has_utilization) break;
  }
  ASSERT_FALSE(out.empty());
  EXPECT_TRUE(out[0].has_utilization);
  EXPECT_EQ(out[0].sm_util_percent, 40u);
  EXPECT_EQ(out[0].mem_util_percent, 10u);
  // The idle process 4401 never has a sample.
  for (const model::ProcessSample& p : out) {
    if (p.pid == 4401) {
      EXPECT_FALSE(p.has_utilization);
    }
  }
}

TEST_F(ProcessReaderTest, CollectorFillsProcessesAndDegradesOnlyThem) {
  // GPU 1's process list fails; its fields and GPU 0's processes go on.
  const std::string path = ::testing::TempDir() + "/processes_fault.yaml";
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs(
      "gpus:\n"
      "  - processes: [{pid: 10, memory_mib: 1}, {pid: 11, memory_mib: 2}]\n"
      "  - values: {gpu_util: 7}\n"
      "    processes: [{pid: 20, memory_mib: 3}]\n"
      "faults:\n"
      "  - {gpu: 1, call: nvmlDeviceGetComputeRunningProcesses_v3, error: UNKNOWN}\n",
      f);
  std::fclose(f);
  Load(path, "5");
  CollectorOptions o;
  o.plan = PlanOf({Row("DCGM_FI_DEV_GPU_UTIL")});
  o.process_metrics = true;
  auto c = Collector::Create(*lib_, o);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto snap = (*c)->CollectOnce();
  ASSERT_EQ(snap->devices.size(), 2u);
  ASSERT_EQ(snap->devices[0].processes.size(), 2u);
  EXPECT_EQ(snap->devices[0].processes[1].pid, 11u);
  EXPECT_EQ(snap->devices[0].processes[1].used_memory_bytes, 2ull << 20);
  EXPECT_TRUE(snap->devices[1].processes.empty());
  EXPECT_TRUE(snap->devices[1].up);
  ASSERT_EQ(snap->devices[1].samples.size(), 1u);
  EXPECT_EQ(std::get<int64_t>(snap->devices[1].samples[0].value), 7);
  // Off by default: no per-process calls at all.
  o.process_metrics = false;
  auto plain = Collector::Create(*lib_, o);
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE((*plain)->CollectOnce()->devices[0].processes.empty());
}

}  // namespace
}  // namespace nvmlx::collect
