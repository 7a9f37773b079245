#include "scenario.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "faults.h"
#include "nvml/nvml_api.h"

namespace nvmlx::simgpu {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kDir = std::string(NVMLX_SOURCE_DIR) + "/testdata/scenarios/";

Scenario MustParse(std::string_view text) {
  ParseResult r = ParseScenario(text, "test.yaml");
  if (auto* err = std::get_if<std::string>(&r)) {
    ADD_FAILURE() << *err;
    return Scenario{};
  }
  return std::get<Scenario>(r);
}

std::string MustFail(std::string_view text) {
  ParseResult r = ParseScenario(text, "test.yaml");
  EXPECT_TRUE(std::holds_alternative<std::string>(r)) << "parsed although invalid: " << text;
  auto* err = std::get_if<std::string>(&r);
  return err ? *err : "";
}

std::string FileError(const std::string& name) {
  ParseResult r = LoadScenarioFile(kDir + name);
  EXPECT_TRUE(std::holds_alternative<std::string>(r)) << name << " parsed although invalid";
  auto* err = std::get_if<std::string>(&r);
  return err ? *err : "";
}

TEST(ScenarioTest, DefaultsForAMinimalGpu) {
  Scenario s = MustParse("gpus:\n  - {}\n  - {}\n");
  ASSERT_EQ(s.gpus.size(), 2u);
  EXPECT_EQ(s.driver_version, "580.159.04");
  EXPECT_EQ(s.cuda_driver_version, 13000);
  const GpuSpec& g1 = s.gpus[1];
  EXPECT_EQ(g1.name, "NVIDIA H200");
  EXPECT_EQ(g1.uuid, "GPU-00000000-0000-0000-0000-000000000001");
  EXPECT_EQ(g1.pci_bus_id, "00000000:07:00.0");
  EXPECT_EQ(g1.pci_bus, 7u);
  EXPECT_EQ(g1.minor_number, 1u);
  EXPECT_EQ(g1.memory_total_mib, 143771);
  EXPECT_EQ(g1.value(ValueKey::kSmClock).At(5), 1980);
  EXPECT_EQ(g1.value(ValueKey::kFbReservedMib).At(5), 615);
  EXPECT_EQ(g1.value(ValueKey::kPowerLimitW).At(5), 700);
  EXPECT_EQ(g1.value(ValueKey::kGpuUtil).At(5), 0);
}

TEST(ScenarioTest, EveryValueKeyHasItsOwnEntryInOrder) {
  for (int i = 0; i < kNumValueKeys; ++i) {
    EXPECT_EQ(static_cast<int>(kValueKeys[i].key), i) << kValueKeys[i].name;
    EXPECT_EQ(ValueKeyFromName(kValueKeys[i].name), kValueKeys[i].key);
  }
  EXPECT_FALSE(ValueKeyFromName("gpu_utl").has_value());
}

TEST(ScenarioTest, ParsesValueFunctionsAndIdentity) {
  Scenario s = MustParse(R"(
gpus:
  - name: "NVIDIA H100 80GB HBM3"
    pci_bus_id: "00000000:1a:00.0"
    values:
      gpu_util: {square: {high: 100, low: 0, on_s: 20, off_s: 20}}
      mem_util: {ramp: {from: 0, to: 50, over_s: 60, repeat: false}}
      power_w: {sine: {mid: 400, amplitude: 100, period_s: 40}}
      gpu_temp: 45.7
)");
  ASSERT_EQ(s.gpus.size(), 1u);
  const GpuSpec& g = s.gpus[0];
  EXPECT_EQ(g.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g.pci_bus_id, "00000000:1A:00.0");  // normalised to NVML's upper case
  EXPECT_EQ(g.pci_bus, 0x1Au);
  EXPECT_EQ(g.value(ValueKey::kGpuUtil).At(25), 0);
  EXPECT_EQ(g.value(ValueKey::kGpuUtil).At(45), 100);
  EXPECT_EQ(g.value(ValueKey::kMemUtil).At(120), 50);
  EXPECT_NEAR(g.value(ValueKey::kPowerW).At(10), 500, 1e-9);
  EXPECT_EQ(g.value(ValueKey::kGpuTemp).At(0), 45.7);
}

TEST(ScenarioTest, ParsesFaultsAndSortsXids) {
  ParseResult r = LoadScenarioFile(kDir + "faults.yaml");
  ASSERT_TRUE(std::holds_alternative<Scenario>(r)) << std::get<std::string>(r);
  const Scenario& s = std::get<Scenario>(r);
  ASSERT_EQ(s.faults.size(), 5u);
  EXPECT_EQ(s.faults[0].gpu, 1u);
  EXPECT_EQ(s.faults[0].call, "nvmlDeviceGetFanSpeed");
  EXPECT_EQ(s.faults[0].error, NVML_ERROR_NOT_SUPPORTED);
  EXPECT_FALSE(s.faults[1].gpu.has_value());
  EXPECT_EQ(s.faults[1].block_ms, 300);
  EXPECT_EQ(s.faults[2].field_id, 83u);
  EXPECT_EQ(s.faults[3].lost_after_s, 30);
  EXPECT_EQ(s.faults[4].until_s, 20);
  ASSERT_EQ(s.xids.size(), 2u);
  EXPECT_EQ(s.xids[0].xid, 79u);  // at 12 s, listed second
  EXPECT_EQ(s.xids[1].xid, 48u);
}

TEST(ScenarioTest, FixturesForGoldenFilesAreConstant) {
  for (const char* name : {"one_gpu.yaml", "eight_gpus.yaml", "mig.yaml"}) {
    ParseResult r = LoadScenarioFile(kDir + name);
    ASSERT_TRUE(std::holds_alternative<Scenario>(r)) << std::get<std::string>(r);
    for (const GpuSpec& g : std::get<Scenario>(r).gpus) {
      for (const ValueFn& v : g.values) EXPECT_EQ(v.kind(), ValueFn::Kind::kConstant) << name;
    }
    for (const MigDeviceSpec& m : std::get<Scenario>(r).mig_devices) {
      for (const ValueFn& v : m.spec.values) {
        EXPECT_EQ(v.kind(), ValueFn::Kind::kConstant) << name;
      }
    }
  }
  ParseResult eight = LoadScenarioFile(kDir + "eight_gpus.yaml");
  EXPECT_EQ(std::get<Scenario>(eight).gpus.size(), 8u);
}

TEST(ScenarioTest, BuiltInDefault) {
  ParseResult r = DefaultScenario();
  ASSERT_TRUE(std::holds_alternative<Scenario>(r)) << std::get<std::string>(r);
  const Scenario& s = std::get<Scenario>(r);
  ASSERT_EQ(s.gpus.size(), 2u);
  const GpuSpec& g0 = s.gpus[0];
  EXPECT_EQ(g0.name, "NVIDIA H200");
  EXPECT_EQ(g0.value(ValueKey::kGpuUtil).At(5), 100);
  EXPECT_EQ(g0.value(ValueKey::kGpuUtil).At(25), 0);
  EXPECT_EQ(g0.value(ValueKey::kMemUtil).At(5), 35);
  EXPECT_EQ(g0.value(ValueKey::kPowerW).At(5), 690);
  EXPECT_EQ(g0.value(ValueKey::kPowerW).At(25), 80);
  EXPECT_EQ(g0.value(ValueKey::kSmClock).At(25), 345);
  EXPECT_EQ(g0.value(ValueKey::kGpuTemp).At(5), 62);
  EXPECT_EQ(g0.value(ValueKey::kFbUsedMib).At(5), 80000);
  EXPECT_DOUBLE_EQ(s.gpus[1].value(ValueKey::kGpuUtil).At(30), 50);
  FaultSet faults(s.faults);
  for (unsigned gpu : {0u, 1u}) {
    EXPECT_EQ(faults.ForCall("nvmlDeviceGetFanSpeed", gpu, 3).error, NVML_ERROR_NOT_SUPPORTED);
  }
}

TEST(ScenarioTest, BadFilesNameFileAndLine) {
  EXPECT_THAT(FileError("bad_value.yaml"),
              StartsWith(kDir + "bad_value.yaml:4: gpus[0].values.gpu_util: unknown function "
                                "'triangle'"));
  EXPECT_THAT(FileError("bad_key.yaml"),
              StartsWith(kDir + "bad_key.yaml:4: gpus[0].values: unknown value key 'gpu_utl'"));
  EXPECT_EQ(FileError("bad_square.yaml"),
            kDir + "bad_square.yaml:5: gpus[0].values.power_w.square: missing 'off_s'");
  EXPECT_EQ(FileError("bad_fault_gpu.yaml"),
            kDir +
                "bad_fault_gpu.yaml:5: faults[1].gpu: 3 is out of range: the scenario has 1 "
                "GPUs");
  EXPECT_THAT(FileError("bad_fault_call.yaml"),
              StartsWith(kDir + "bad_fault_call.yaml:4: faults[0].call: 'nvmlDeviceGetFanSpeedd' "
                                "is not an NVML function"));
  EXPECT_THAT(FileError("bad_error_name.yaml"),
              StartsWith(kDir + "bad_error_name.yaml:4: faults[0].error: unknown nvmlReturn_t "
                                "name 'NOPE'"));
  EXPECT_THAT(FileError("bad_yaml.yaml"), StartsWith(kDir + "bad_yaml.yaml:3: invalid YAML"));
  EXPECT_THAT(FileError("does_not_exist.yaml"),
              StartsWith(kDir + "does_not_exist.yaml: cannot read: No such file"));
}

TEST(ScenarioTest, BadInlineInput) {
  EXPECT_EQ(MustFail("- 1\n"), "test.yaml:1: expected a map with 'gpus:' at the top level");
  EXPECT_EQ(MustFail("driver_version: x\n"), "test.yaml:1: scenario: missing 'gpus'");
  EXPECT_THAT(MustFail("gpus: []\ncolour: red\n"),
              StartsWith("test.yaml:2: scenario: unknown key 'colour'"));
  EXPECT_EQ(MustFail("gpus:\n  - values: {gpu_util: high}\n"),
            "test.yaml:2: gpus[0].values.gpu_util: expected a number");
  EXPECT_EQ(MustFail("gpus:\n  - values:\n      mem_util: {ramp: {from: 0, to: 1, over_s: 0}}\n"),
            "test.yaml:3: gpus[0].values.mem_util.ramp.over_s: expected a number > 0");
  EXPECT_EQ(MustFail("gpus:\n  - values:\n      x: {sine: {mid: 1, amplitude: 1}}\n"),
            "test.yaml:3: gpus[0].values: unknown value key 'x' (see SCENARIO.md)");
  EXPECT_EQ(MustFail("gpus:\n  - values:\n      power_w: {sine: {mid: 1, amplitude: 1}}\n"),
            "test.yaml:3: gpus[0].values.power_w.sine: missing 'period_s'");
  EXPECT_EQ(MustFail("gpus:\n  - {pci_bus_id: \"6:0\"}\n"),
            "test.yaml:2: gpus[0].pci_bus_id: expected a PCI bus id like \"00000000:06:00.0\"");
  EXPECT_EQ(MustFail("gpus:\n  - {uuid: GPU-a}\n  - {uuid: GPU-a}\n"),
            "test.yaml:3: gpus[1].uuid: duplicate GPU-a");
  EXPECT_EQ(MustFail("gpus: [{}]\nfaults:\n  - {gpu: 0, call: nvmlDeviceGetFanSpeed}\n"),
            "test.yaml:3: faults[0]: expected 'error', 'block_ms' and/or 'hang: true'");
  EXPECT_EQ(MustFail("gpus: [{}]\nfaults:\n  - {gpu: 0, call: nvmlDeviceGetFanSpeed, hang: 1}\n"),
            "test.yaml:3: faults[0].hang: expected true or false");
  EXPECT_EQ(MustFail("gpus: [{}]\nfaults:\n  - {gpu: x, lost_after_s: 3}\n"),
            "test.yaml:3: faults[0].gpu: expected a GPU index or \"*\"");
  EXPECT_EQ(MustFail("gpus: [{}]\nfaults:\n  - {gpu: 0, lost_after_s: 3, error: UNKNOWN}\n"),
            "test.yaml:3: faults[0]: a lost_after_s rule takes only 'gpu'");
  EXPECT_EQ(MustFail("gpus: [{}]\nfaults:\n  - {call: \"nvmlDeviceGetName:83\", error: UNKNOWN}\n"),
            "test.yaml:3: faults[0].call: expected \"nvmlDeviceGetFieldValues:<field id>\"");
  EXPECT_EQ(MustFail("gpus: [{}]\nfaults:\n  - {call: nvmlDeviceGetName, error: UNKNOWN,\n"
                     "     after_s: 5, until_s: 5}\n"),
            "test.yaml:4: faults[0].until_s: expected a time after after_s");
  EXPECT_EQ(MustFail("gpus: [{}]\nfaults:\n  - {call: nvmlInit_v2, error: UNKNOWN}\n"),
            "test.yaml:3: faults[0].call: nvmlInit_v2 cannot be faulted");
  EXPECT_EQ(MustFail("gpus: [{}]\nxids:\n  - {gpu: 0, xid: 79}\n"),
            "test.yaml:3: xids[0]: missing 'at_s'");
}

TEST(ScenarioTest, Processes) {
  Scenario s = MustParse(
      "gpus:\n"
      "  - process_info_stride: 32\n"
      "    processes:\n"
      "      - {pid: 9, memory_mib: 5, sm_util: {square: {high: 9, low: 1, on_s: 1, off_s: 1}}}\n"
      "      - {pid: 3, mem_util: 2, start_s: 1, end_s: 4}\n");
  ASSERT_EQ(s.gpus.size(), 1u);
  EXPECT_EQ(s.gpus[0].process_info_stride, 32u);
  ASSERT_EQ(s.gpus[0].processes.size(), 2u);
  const ProcessSpec& p3 = s.gpus[0].processes[0];  // sorted by pid
  EXPECT_EQ(p3.pid, 3u);
  EXPECT_FALSE(p3.RunningAt(0.5));
  EXPECT_TRUE(p3.RunningAt(1));
  EXPECT_FALSE(p3.RunningAt(4));
  EXPECT_EQ(p3.mem_util.At(2), 2);
  EXPECT_EQ(s.gpus[0].processes[1].sm_util.At(0.5), 9);
  EXPECT_EQ(s.gpus[0].processes[1].memory_mib.At(0), 5);

  EXPECT_EQ(MustFail("gpus:\n  - process_info_stride: 28\n"),
            "test.yaml:2: gpus[0].process_info_stride: expected 24 or 32");
  EXPECT_EQ(MustFail("gpus:\n  - processes: [{pid: 1}, {pid: 1}]\n"),
            "test.yaml:2: gpus[0].processes: duplicate pid 1");
  EXPECT_EQ(MustFail("gpus:\n  - processes: [{memory_mib: 1}]\n"),
            "test.yaml:2: gpus[0].processes[0]: missing 'pid'");
  EXPECT_EQ(MustFail("gpus:\n  - processes: [{pid: 0}]\n"),
            "test.yaml:2: gpus[0].processes[0].pid: expected a pid > 0");
  EXPECT_EQ(MustFail("gpus:\n  - processes: [{pid: 1, start_s: 5, end_s: 5}]\n"),
            "test.yaml:2: gpus[0].processes[0].end_s: expected a time after start_s");
  EXPECT_THAT(MustFail("gpus:\n  - processes: [{pid: 1, colour: red}]\n"),
              StartsWith("test.yaml:2: gpus[0].processes[0]: unknown key 'colour'"));
  EXPECT_EQ(MustFail("gpus:\n  - processes: {pid: 1}\n"),
            "test.yaml:2: gpus[0].processes: expected a list");
}

TEST(ScenarioTest, ErrorNamesWithOrWithoutPrefix) {
  EXPECT_EQ(ReturnCodeFromName("GPU_IS_LOST"), NVML_ERROR_GPU_IS_LOST);
  EXPECT_EQ(ReturnCodeFromName("UNKNOWN"), NVML_ERROR_UNKNOWN);
  EXPECT_FALSE(ReturnCodeFromName("gpu_is_lost").has_value());
  Scenario s = MustParse(
      "gpus: [{}]\nfaults:\n  - {call: nvmlDeviceGetName, error: NVML_ERROR_NO_PERMISSION}\n");
  ASSERT_EQ(s.faults.size(), 1u);
  EXPECT_EQ(s.faults[0].error, NVML_ERROR_NO_PERMISSION);
}

TEST(FaultSetTest, HangRules) {
  ParseResult r = LoadScenarioFile(kDir + "hang.yaml");
  ASSERT_TRUE(std::holds_alternative<Scenario>(r)) << std::get<std::string>(r);
  FaultSet f(std::get<Scenario>(r).faults);
  EXPECT_FALSE(f.ForCall("nvmlDeviceGetTemperature", 0u, 4.9).hang);
  EXPECT_TRUE(f.ForCall("nvmlDeviceGetTemperature", 0u, 5).hang);
  EXPECT_FALSE(f.ForCall("nvmlDeviceGetTemperature", 0u, 5).error.has_value());
  EXPECT_FALSE(f.ForCall("nvmlDeviceGetTemperature", 1u, 5).hang);
  EXPECT_TRUE(f.ForField(0, 83, 6).hang);
  EXPECT_FALSE(f.ForField(0, 82, 6).hang);
}

TEST(FaultSetTest, WindowsGpusAndFields) {
  ParseResult r = LoadScenarioFile(kDir + "faults.yaml");
  ASSERT_TRUE(std::holds_alternative<Scenario>(r)) << std::get<std::string>(r);
  FaultSet f(std::get<Scenario>(r).faults);

  EXPECT_EQ(f.ForCall("nvmlDeviceGetFanSpeed", 1u, 0).error, NVML_ERROR_NOT_SUPPORTED);
  EXPECT_FALSE(f.ForCall("nvmlDeviceGetFanSpeed", 0u, 0).error.has_value());
  EXPECT_FALSE(f.ForCall("nvmlDeviceGetFanSpeed", std::nullopt, 0).error.has_value());

  EXPECT_EQ(f.ForCall("nvmlDeviceGetTotalEnergyConsumption", 2u, 0).block_ms, 300);
  EXPECT_FALSE(f.ForCall("nvmlDeviceGetTotalEnergyConsumption", 2u, 0).error.has_value());

  EXPECT_FALSE(f.ForCall("nvmlDeviceGetPowerUsage", 0u, 9.99).error.has_value());
  EXPECT_EQ(f.ForCall("nvmlDeviceGetPowerUsage", 0u, 10).error, NVML_ERROR_UNKNOWN);
  EXPECT_EQ(f.ForCall("nvmlDeviceGetPowerUsage", 0u, 19.9).error, NVML_ERROR_UNKNOWN);
  EXPECT_FALSE(f.ForCall("nvmlDeviceGetPowerUsage", 0u, 20).error.has_value());
  EXPECT_FALSE(f.ForCall("nvmlDeviceGetPowerUsage", 1u, 15).error.has_value());

  // The per-element rule fails field 83 only, and never the whole call.
  EXPECT_EQ(f.ForField(0, 83, 0).error, NVML_ERROR_NOT_SUPPORTED);
  EXPECT_FALSE(f.ForField(0, 82, 0).error.has_value());
  EXPECT_FALSE(f.ForField(1, 83, 0).error.has_value());
  EXPECT_FALSE(f.ForCall("nvmlDeviceGetFieldValues", 0u, 0).error.has_value());

  EXPECT_FALSE(f.IsLost(2, 29.9));
  EXPECT_TRUE(f.IsLost(2, 30));
  EXPECT_FALSE(f.IsLost(1, 100));
}

// A MIG instance has its own processes (not the parent's), checked like a GPU's.
TEST(ScenarioMigTest, InstanceProcesses) {
  Scenario s = MustParse(
      "gpus:\n  - processes: [{pid: 9}]\n"
      "    mig: {instances: [{profile: 0, gpu_instance_id: 1,\n"
      "                       processes: [{pid: 7, memory_mib: 64}, {pid: 3}]},\n"
      "                      {profile: 0, gpu_instance_id: 2}]}\n");
  ASSERT_EQ(s.mig_devices.size(), 2u);
  ASSERT_EQ(s.mig_devices[0].spec.processes.size(), 2u);
  EXPECT_EQ(s.mig_devices[0].spec.processes[0].pid, 3u);  // ascending pid
  EXPECT_EQ(s.mig_devices[0].spec.processes[1].memory_mib.At(0), 64);
  EXPECT_TRUE(s.mig_devices[1].spec.processes.empty());
  EXPECT_THAT(MustFail("gpus:\n  - mig: {instances: [{profile: 0, gpu_instance_id: 1,\n"
                       "                       processes: [{pid: 7}, {pid: 7}]}]}\n"),
              HasSubstr("gpus[0].mig.instances[0].processes: duplicate pid 7"));
}

// The NVLink keys: link count (18 by default, as an H200) and the inactive-link mask.
TEST(ScenarioTest, NvlinkKeys) {
  Scenario s = MustParse("gpus:\n  - {}\n  - values: {nvlink_links: 0, nvlink_inactive_mask: 5}\n");
  EXPECT_EQ(s.gpus[0].value(ValueKey::kNvlinkLinks).At(0), 18);
  EXPECT_EQ(s.gpus[0].value(ValueKey::kNvlinkInactiveMask).At(0), 0);
  EXPECT_EQ(s.gpus[1].value(ValueKey::kNvlinkLinks).At(0), 0);
  EXPECT_EQ(s.gpus[1].value(ValueKey::kNvlinkInactiveMask).At(0), 5);
}

}  // namespace
}  // namespace nvmlx::simgpu

namespace nvmlx::simgpu {
namespace {

TEST(ScenarioMigTest, LayoutDefaultsAndSlots) {
  Scenario s = MustParse(R"(
gpus:
  - name: "NVIDIA H200"
    mig:
      instances:
        - {profile: 2, gpu_instance_id: 1}
        - {profile: 0, gpu_instance_id: 7, slot: 5, values: {fb_used_mib: 10}}
        - {profile: 0, gpu_instance_id: 8}
  - name: "NVIDIA H200"
)");
  ASSERT_EQ(s.gpus.size(), 2u);
  EXPECT_TRUE(s.gpus[0].mig_enabled);
  EXPECT_FALSE(s.gpus[1].mig_enabled);
  EXPECT_EQ(s.gpus[0].mig_profiles.size(), 7u) << "the default H200-like table";
  ASSERT_EQ(s.mig_devices.size(), 3u);
  // Sorted by slot: the explicit slot 5 comes last, the others take 0 and 1.
  EXPECT_EQ(s.mig_devices[0].gpu_instance_id, 1u);
  EXPECT_EQ(s.mig_devices[0].slot, 0u);
  EXPECT_EQ(s.mig_devices[0].slices, 3u);
  EXPECT_EQ(s.mig_devices[0].memory_mib, 72192);
  EXPECT_EQ(s.mig_devices[1].gpu_instance_id, 8u);
  EXPECT_EQ(s.mig_devices[1].slot, 1u);
  EXPECT_EQ(s.mig_devices[2].slot, 5u);
  EXPECT_EQ(s.mig_devices[2].spec.value(ValueKey::kFbUsedMib).At(0), 10);
  EXPECT_EQ(s.mig_devices[2].spec.memory_total_mib, 17920);
  EXPECT_THAT(s.mig_devices[0].spec.uuid, StartsWith("MIG-"));
  EXPECT_EQ(s.mig_devices[0].spec.name, "NVIDIA H200 MIG 3g.71gb");
}

TEST(ScenarioMigTest, BadLayouts) {
  EXPECT_THAT(MustFail("gpus:\n  - mig: {instances: [{gpu_instance_id: 1}]}\n"),
              HasSubstr("gpus[0].mig.instances[0]: missing 'profile'"));
  EXPECT_THAT(MustFail("gpus:\n  - mig: {instances: [{profile: 5, gpu_instance_id: 1}]}\n"),
              HasSubstr("gpus[0].mig.instances[0].profile: 5 is not a profile index of this GPU"));
  EXPECT_THAT(MustFail("gpus:\n  - mig: {instances: [{profile: 0, gpu_instance_id: 1},\n"
                       "                      {profile: 0, gpu_instance_id: 1}]}\n"),
              HasSubstr("gpus[0].mig.instances[1]: duplicate gpu_instance_id/compute_instance_id"));
  EXPECT_THAT(
      MustFail("gpus:\n  - mig: {instances: [{profile: 0, gpu_instance_id: 1, slot: 7}]}\n"),
      HasSubstr("gpus[0].mig.instances[0].slot: expected 0 to 6"));
  EXPECT_THAT(MustFail("gpus:\n  - mig: {instance: []}\n"),
              HasSubstr("gpus[0].mig: unknown key 'instance'"));
  EXPECT_THAT(MustFail("gpus:\n  - mig: {profiles: [{index: 0, slices: 1}]}\n"),
              HasSubstr("gpus[0].mig.profiles[0]: missing 'memory_mib'"));
}

}  // namespace
}  // namespace nvmlx::simgpu
