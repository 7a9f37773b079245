#include "collect/mig.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "collect/collector.h"
#include "config/device_selector.h"
#include "plan/plan_test_util.h"
#include "tools/simgpu/sim_control.h"

namespace nvmlx::collect {
namespace {

TEST(MigProfileNameTest, SlicesAndCeilOfGigabytes) {
  EXPECT_EQ(MigProfileName(1, 17920), "1g.18gb");  // 17.5 GiB rounds up
  EXPECT_EQ(MigProfileName(1, 9856), "1g.10gb");   // A100/H100 80GB 1g.10gb
  EXPECT_EQ(MigProfileName(3, 72192), "3g.71gb");  // 70.5
  EXPECT_EQ(MigProfileName(2, 35840), "2g.35gb");  // exactly 35 GiB: no rounding up
  EXPECT_EQ(MigProfileName(7, 144384), "7g.141gb");
  EXPECT_EQ(MigProfileName(1, 1), "1g.1gb");
}

nvmlGpuInstanceProfileInfo_t Profile(unsigned id, unsigned slices, unsigned long long mb) {
  nvmlGpuInstanceProfileInfo_t p{};
  p.id = id;
  p.sliceCount = slices;
  p.memorySizeMB = mb;
  return p;
}

TEST(MigProfileNameTest, ProfileMemoryPicksTheClosestProfileOfThatSliceCount) {
  const std::vector<nvmlGpuInstanceProfileInfo_t> h200 = {
      Profile(0, 1, 17920), Profile(1, 2, 35840), Profile(2, 3, 72192), Profile(7, 1, 17920),
      Profile(9, 1, 35840)};
  // A 1-slice instance reporting slightly less memory than its profile: 1g.18gb, not 1g.35gb.
  EXPECT_EQ(ProfileMemoryMb(1, 17800, h200), 17920u);
  EXPECT_EQ(ProfileMemoryMb(1, 35000, h200), 35840u);  // 1g.35gb
  EXPECT_EQ(ProfileMemoryMb(3, 70000, h200), 72192u);
  // No profile with that slice count (or none readable): the instance's own figure.
  EXPECT_EQ(ProfileMemoryMb(4, 70000, h200), 70000u);
  EXPECT_EQ(ProfileMemoryMb(1, 17800, {}), 17800u);
}

// Against the simulated GPUs of testdata/scenarios/mig.yaml: GPU 0 has MIG on with instances in
// slots 0, 2 and 3 (slot 1 empty), GPU 1 has MIG off.
class MigSimTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("NVMLX_SIMGPU_SCENARIO", NVMLX_SOURCE_DIR "/testdata/scenarios/mig.yaml", 1);
    setenv("NVMLX_SIMGPU_FROZEN_TIME_S", "100", 1);
    auto lib = nvml::Library::Load(NVMLX_SIMGPU_LIBRARY);
    ASSERT_TRUE(lib.ok()) << lib.status().ToString();
    lib_ = std::move(lib).value();
  }
  void TearDown() override { unsetenv("NVMLX_SIMGPU_FROZEN_TIME_S"); }

  // The collected entities for a -d value, as "gpu/GPU_I_ID" ("0" for a GPU, "0/7" for GI 7).
  std::vector<std::string> Entities(const char* selector, std::string* error = nullptr) {
    Result<config::DeviceSelector> sel = config::ParseDeviceSelector(selector);
    EXPECT_TRUE(sel.ok()) << selector;
    CollectorOptions options;
    options.devices = *sel;
    options.plan = plan::testing::PlanOf({plan::testing::Row("DCGM_FI_DEV_FB_USED")});
    auto c = Collector::Create(*lib_, options);
    if (!c.ok()) {
      if (error != nullptr) *error = c.status().message();
      return {};
    }
    std::vector<std::string> out;
    for (const model::DeviceIdentity& id : (*c)->identities()) {
      std::string e = std::to_string(id.index);
      if (id.mig) e += "/" + std::to_string(id.mig->gpu_instance_id);
      out.push_back(e);
    }
    return out;
  }

  std::unique_ptr<nvml::Library> lib_;
};

TEST_F(MigSimTest, DiscoversInstancesSkippingEmptySlots) {
  Result<nvml::Device> gpu0 = lib_->DeviceByIndex(0);
  ASSERT_TRUE(gpu0.ok());
  Result<bool> on = lib_->MigEnabled(*gpu0);
  ASSERT_TRUE(on.ok() && *on);
  std::vector<MigInstance> found = DiscoverMig(*lib_, *gpu0, 0);
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].mig.gpu_instance_id, 1u);
  EXPECT_EQ(found[0].mig.profile, "3g.71gb");
  EXPECT_EQ(found[1].mig.gpu_instance_id, 7u);
  EXPECT_EQ(found[1].mig.profile, "1g.18gb");
  EXPECT_EQ(found[2].mig.gpu_instance_id, 9u);
  EXPECT_EQ(found[2].mig.profile, "1g.35gb");
  EXPECT_EQ(found[2].mig.compute_instance_id, 0u);
  EXPECT_EQ(found[0].mig.uuid.rfind("MIG-", 0), 0u) << found[0].mig.uuid;
  EXPECT_NE(found[0].mig.uuid, found[1].mig.uuid);

  Result<nvml::Device> gpu1 = lib_->DeviceByIndex(1);
  ASSERT_TRUE(gpu1.ok());
  Result<bool> off = lib_->MigEnabled(*gpu1);
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(*off);
}

TEST_F(MigSimTest, SelectorPicksGpusAndInstances) {
  using V = std::vector<std::string>;
  EXPECT_EQ(Entities("f"), (V{"0", "0/1", "0/7", "0/9", "1"}));
  EXPECT_EQ(Entities("g"), (V{"0", "1"}));
  EXPECT_EQ(Entities("g:1"), (V{"1"}));
  EXPECT_EQ(Entities("i"), (V{"0", "0/1", "0/7", "0/9"}));
  EXPECT_EQ(Entities("i:0,2"), (V{"0", "0/1", "0/9"}));
  std::string error;
  EXPECT_TRUE(Entities("i:3", &error).empty());
  EXPECT_EQ(error, "device selector names MIG instance 3 but only 3 MIG instance(s) exist");
}

// g+i (dcgm-exporter 4.8.3+): the GPUs of the g part and the MIG instances of the i part; an
// instance comes with its GPU as parent (as under f and i), a GPU none of whose instances is
// chosen as under g.
TEST_F(MigSimTest, CombinedSelectorPicksTheUnion) {
  using V = std::vector<std::string>;
  EXPECT_EQ(Entities("g+i"), (V{"0", "0/1", "0/7", "0/9", "1"}));
  EXPECT_EQ(Entities("g:1+i:0"), (V{"0", "0/1", "1"}));
  EXPECT_EQ(Entities("i:1+g:0"), (V{"0", "0/7"}));
  EXPECT_EQ(Entities("g:0+i:2"), (V{"0", "0/9"}));
  EXPECT_EQ(Entities("g:1+i"), (V{"0", "0/1", "0/7", "0/9", "1"}));
  std::string error;
  EXPECT_TRUE(Entities("g:2+i", &error).empty());
  EXPECT_EQ(error, "device selector names GPU 2 but only 2 GPU(s) exist");
  EXPECT_TRUE(Entities("g+i:0,5", &error).empty());
  EXPECT_EQ(error, "device selector names MIG instance 5 but only 3 MIG instance(s) exist");
}

TEST_F(MigSimTest, InstancesReadTheirOwnMemoryTheGpuKeepsGpuWideFields) {
  CollectorOptions options;
  std::vector<config::CollectorEntry> rows;
  for (const char* name : {"DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_TOTAL",
                           "DCGM_FI_PROF_GR_ENGINE_ACTIVE"}) {
    rows.push_back(plan::testing::Row(name));
  }
  options.plan = plan::testing::PlanOf(std::move(rows));
  auto c = Collector::Create(*lib_, options);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto snap = (*c)->CollectOnce();
  ASSERT_EQ(snap->devices.size(), 5u);
  auto value = [&](size_t dev, int field) -> std::optional<double> {
    for (const auto& s : snap->devices[dev].samples) {
      if (s.field_id != field) continue;
      if (const auto* i = std::get_if<int64_t>(&s.value)) return static_cast<double>(*i);
      if (const auto* d = std::get_if<double>(&s.value)) return *d;
    }
    return std::nullopt;
  };
  // GPU 0 (MIG on): temperature yes, memory and GPM ratios only on its instances.
  EXPECT_EQ(value(0, 150), 41);
  EXPECT_EQ(value(0, 252), std::nullopt);
  EXPECT_EQ(value(0, 1001), std::nullopt);
  // Instance GI 1 (3g.71gb): its own memory and GPM (gpm_graphics_util 80 -> 0.8).
  ASSERT_TRUE(snap->devices[1].identity->mig.has_value());
  EXPECT_EQ(value(1, 150), std::nullopt);
  EXPECT_EQ(value(1, 252), 20000);
  EXPECT_EQ(value(1, 250), 72192);
  ASSERT_TRUE(value(1, 1001).has_value());
  EXPECT_NEAR(*value(1, 1001), 0.8, 1e-9);
  EXPECT_EQ(value(2, 252), 1000);
  EXPECT_EQ(value(3, 252), 30000);
  // GPU 1 (MIG off): everything on the GPU.
  EXPECT_FALSE(snap->devices[4].identity->mig.has_value());
  EXPECT_EQ(value(4, 150), 38);
  EXPECT_EQ(value(4, 252), 1200);
  ASSERT_TRUE(value(4, 1001).has_value());
  EXPECT_NEAR(*value(4, 1001), 0.55, 1e-9);
  // The instances carry their parent's identity.
  EXPECT_EQ(snap->devices[1].identity->uuid, snap->devices[0].identity->uuid);
  EXPECT_EQ(snap->devices[1].identity->DeviceKey(), snap->devices[1].identity->mig->uuid);
}

// A lost GPU takes its MIG instances with it; the other GPU goes on.
TEST(MigLostTest, InstancesStopWithTheirGpu) {
  setenv("NVMLX_SIMGPU_SCENARIO", NVMLX_SOURCE_DIR "/testdata/scenarios/mig_lost.yaml", 1);
  setenv("NVMLX_SIMGPU_FROZEN_TIME_S", "0", 1);  // stepped past lost_after_s below
  auto lib = nvml::Library::Load(NVMLX_SIMGPU_LIBRARY);
  ASSERT_TRUE(lib.ok()) << lib.status().ToString();
  CollectorOptions options;
  options.plan = plan::testing::PlanOf({plan::testing::Row("DCGM_FI_DEV_FB_USED")});
  auto c = Collector::Create(**lib, options);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto before = (*c)->CollectOnce();
  ASSERT_EQ(before->devices.size(), 4u);  // GPU 0, its two instances, GPU 1
  EXPECT_TRUE(before->devices[1].up);
  EXPECT_FALSE(before->devices[1].samples.empty());

  ASSERT_EQ(simgpu::SetFrozenTime(NVMLX_SIMGPU_LIBRARY, 0.5), "");
  auto after = (*c)->CollectOnce();
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_FALSE(after->devices[i].up) << i;
    EXPECT_TRUE(after->devices[i].samples.empty()) << i;
  }
  EXPECT_TRUE(after->devices[3].up);
  ASSERT_EQ(after->devices[3].samples.size(), 1u);
  EXPECT_EQ(std::get<int64_t>(after->devices[3].samples[0].value), 300);
  unsetenv("NVMLX_SIMGPU_FROZEN_TIME_S");
}

}  // namespace
}  // namespace nvmlx::collect
