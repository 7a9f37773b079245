// The NVML loader (nvml.h) against the simulated GPUs of tools/simgpu: the same dlopen path as
// the real driver, driven by the scenarios of testdata/scenarios/.
#include "nvml/nvml.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace nvmlx::nvml {
namespace {

using ::testing::HasSubstr;

const std::string kScenarios = std::string(NVMLX_SOURCE_DIR) + "/testdata/scenarios/";

// Each test loads the simulator for one scenario. The simulator reads its environment at the
// init that takes its reference count from 0 to 1, so the previous Library (whose destructor
// shuts NVML down) is destroyed before the environment changes.
class SimTest : public ::testing::Test {
 protected:
  void TearDown() override {
    lib_.reset();
    unsetenv("NVMLX_SIMGPU_SCENARIO");
    unsetenv("NVMLX_SIMGPU_FROZEN_TIME_S");
  }

  // scenario: a file of testdata/scenarios (or an absolute path), or null for the built-in
  // default.
  Result<std::unique_ptr<Library>> TryLoad(const char* scenario, std::optional<double> frozen_s) {
    lib_.reset();
    if (scenario != nullptr) {
      const std::string path = scenario[0] == '/' ? scenario : kScenarios + scenario;
      setenv("NVMLX_SIMGPU_SCENARIO", path.c_str(), 1);
    } else {
      unsetenv("NVMLX_SIMGPU_SCENARIO");
    }
    if (frozen_s) {
      setenv("NVMLX_SIMGPU_FROZEN_TIME_S", std::to_string(*frozen_s).c_str(), 1);
    } else {
      unsetenv("NVMLX_SIMGPU_FROZEN_TIME_S");
    }
    return Library::Load(NVMLX_SIMGPU_LIBRARY);
  }

  // Loads or fails the test; the Library stays alive until the next Load or the end of the test.
  const Library* Load(const char* scenario, std::optional<double> frozen_s = std::nullopt) {
    auto r = TryLoad(scenario, frozen_s);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return nullptr;
    lib_ = std::move(r).value();
    return lib_.get();
  }

  Device Dev(unsigned index) {
    auto d = lib_->DeviceByIndex(index);
    EXPECT_TRUE(d.ok()) << d.status().ToString();
    return d.ok() ? *d : nullptr;
  }

  // Writes a scenario into the test's temporary directory; returns its path ("" on failure).
  static std::string WriteScenario(const char* name, const char* text) {
    const std::string path = ::testing::TempDir() + "/" + name;
    FILE* f = std::fopen(path.c_str(), "w");
    if (f == nullptr) return "";
    const bool ok = std::fputs(text, f) >= 0;
    return std::fclose(f) == 0 && ok ? path : "";
  }

  std::unique_ptr<Library> lib_;
};

TEST(NvmlLoadTest, MissingLibraryIsNotFoundAndNamesThePath) {
  const std::string path = "/nonexistent/dir/libnvidia-ml.so.1";
  auto r = Library::Load(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr(path));
}

TEST(NvmlLoadTest, FromNvmlReturnKeepsTheFunctionName) {
  Status st = FromNvmlReturn(NVML_ERROR_NOT_SUPPORTED, "nvmlDeviceGetFanSpeed", nullptr);
  EXPECT_EQ(st.code(), StatusCode::kNotSupported);
  EXPECT_EQ(st.message(), "nvmlDeviceGetFanSpeed: NVML error (3)");
  EXPECT_TRUE(FromNvmlReturn(NVML_SUCCESS, "x", nullptr).ok());
}

TEST_F(SimTest, ExportsEverySymbolOfTheApi) {
  const Library* lib = Load("one_gpu.yaml");
  ASSERT_NE(lib, nullptr);
  EXPECT_THAT(lib->MissingSymbols(), ::testing::IsEmpty());
  EXPECT_THAT(lib->resolved_path(), HasSubstr("libnvidia-ml.so.1"));
}

TEST_F(SimTest, IdentityAndMemoryOfOneGpu) {
  const Library* lib = Load("one_gpu.yaml", 100);
  ASSERT_NE(lib, nullptr);
  EXPECT_EQ(*lib->DriverVersion(), "580.159.04");
  EXPECT_EQ(*lib->NvmlVersion(), "13.580.159.04");
  EXPECT_EQ(*lib->CudaDriverVersion(), 13000);
  ASSERT_EQ(*lib->DeviceCount(), 1u);
  Device d = Dev(0);
  EXPECT_EQ(*lib->Uuid(d), "GPU-bc2976c1-5d4e-4a9e-8f3a-1c2b3d4e5f60");
  EXPECT_EQ(*lib->Name(d), "NVIDIA H200");
  auto pci = lib->Pci(d);
  ASSERT_TRUE(pci.ok());
  EXPECT_EQ(pci->bus_id, "00000000:00:06.0");
  EXPECT_EQ(pci->pci_device_id, 0x233510DEu);
  EXPECT_EQ(*lib->MinorNumber(d), 0u);
  EXPECT_EQ(*lib->Serial(d), "1650000000001");
  EXPECT_EQ(*lib->Brand(d), 14);
  EXPECT_EQ(*lib->InforomVersion(d, NVML_INFOROM_ECC), "7.16");
  EXPECT_EQ(*lib->InforomImageVersion(d), "G525.0225.00.03");

  auto mem = lib->Memory(d);
  ASSERT_TRUE(mem.ok()) << mem.status().ToString();
  constexpr uint64_t kMiB = 1024 * 1024;
  EXPECT_TRUE(mem->has_reserved);
  EXPECT_EQ(mem->total, 143771 * kMiB);
  EXPECT_EQ(mem->reserved, 615 * kMiB);
  EXPECT_EQ(mem->used, 1024 * kMiB);
  EXPECT_EQ(mem->free, (143771 - 615 - 1024) * kMiB);

  EXPECT_EQ(*lib->PowerUsageMw(d), 123456u);
  EXPECT_EQ(*lib->GpuTemperatureC(d), 45u);
  EXPECT_EQ(lib->UtilizationRates(d)->gpu, 42u);
  // 5e6 mJ at start + 123.456 W for 100 s.
  EXPECT_EQ(*lib->TotalEnergyMj(d), 5000000u + 12345600u);
}

TEST_F(SimTest, EightGpusHaveDistinctIdentities) {
  const Library* lib = Load("eight_gpus.yaml", 0);
  ASSERT_NE(lib, nullptr);
  ASSERT_EQ(*lib->DeviceCount(), 8u);
  std::vector<std::string> uuids;
  for (unsigned i = 0; i < 8; ++i) {
    Device d = Dev(i);
    uuids.push_back(*lib->Uuid(d));
    unsigned index = 99;
    ASSERT_TRUE(lib->Call("nvmlDeviceGetIndex", lib->api().nvmlDeviceGetIndex, d, &index).ok());
    EXPECT_EQ(index, i);
    EXPECT_EQ(lib->UtilizationRates(d)->gpu, 10 * i + 5);
  }
  EXPECT_EQ(lib->Pci(Dev(7))->bus_id, "00000000:DB:00.0");
  std::sort(uuids.begin(), uuids.end());
  EXPECT_EQ(std::unique(uuids.begin(), uuids.end()), uuids.end());
  EXPECT_FALSE(lib->DeviceByIndex(8).ok());
}

TEST_F(SimTest, InjectedErrorBecomesStatusNamingTheFunction) {
  const Library* lib = Load("faults.yaml", 0);
  ASSERT_NE(lib, nullptr);
  EXPECT_TRUE(lib->FanSpeedPercent(Dev(0)).ok());
  auto fan = lib->FanSpeedPercent(Dev(1));
  ASSERT_FALSE(fan.ok());
  EXPECT_EQ(fan.status().code(), StatusCode::kNotSupported);
  EXPECT_EQ(fan.status().message(), "nvmlDeviceGetFanSpeed: Not Supported (3)");
}

TEST_F(SimTest, FaultWindowAfterUntil) {
  const Library* lib = Load("faults.yaml", 15);
  ASSERT_NE(lib, nullptr);
  auto p = lib->PowerUsageMw(Dev(0));
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kInternal);
  EXPECT_EQ(p.status().message(), "nvmlDeviceGetPowerUsage: Unknown Error (999)");
  EXPECT_TRUE(lib->PowerUsageMw(Dev(1)).ok());

  lib = Load("faults.yaml", 20);
  ASSERT_NE(lib, nullptr);
  EXPECT_TRUE(lib->PowerUsageMw(Dev(0)).ok());
}

TEST_F(SimTest, GpuLostAfterT) {
  const Library* lib = Load("faults.yaml", 29.5);
  ASSERT_NE(lib, nullptr);
  EXPECT_TRUE(lib->Name(Dev(2)).ok());

  lib = Load("faults.yaml", 30);
  ASSERT_NE(lib, nullptr);
  EXPECT_EQ(*lib->DeviceCount(), 3u);  // a lost GPU is still counted
  auto h = lib->DeviceByIndex(2);
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.status().code(), StatusCode::kGpuLost);
  EXPECT_EQ(h.status().message(), "nvmlDeviceGetHandleByIndex_v2: GPU is lost (15)");
  EXPECT_TRUE(lib->Name(Dev(1)).ok());
}

TEST_F(SimTest, GpuLostWithARunningClock) {
  // A handle taken before the loss fails once the clock passes lost_after_s.
  const std::string path =
      WriteScenario("lost_soon.yaml", "gpus: [{}, {}]\nfaults:\n  - {gpu: 1, lost_after_s: 0.2}\n");
  ASSERT_FALSE(path.empty());
  ASSERT_NE(Load(path.c_str()), nullptr);
  Device d1 = Dev(1);
  EXPECT_TRUE(lib_->GpuTemperatureC(d1).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto t = lib_->GpuTemperatureC(d1);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kGpuLost);
  EXPECT_EQ(t.status().message(), "nvmlDeviceGetTemperature: GPU is lost (15)");
  EXPECT_TRUE(lib_->GpuTemperatureC(Dev(0)).ok());
}

TEST_F(SimTest, BlockedCallTakesBlockMs) {
  const Library* lib = Load("faults.yaml", 0);
  ASSERT_NE(lib, nullptr);
  Device d = Dev(0);
  const auto start = std::chrono::steady_clock::now();
  auto e = lib->TotalEnergyMj(d);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(e.ok());  // block_ms without an error still answers
  EXPECT_GE(took, std::chrono::milliseconds(300));
  const auto start2 = std::chrono::steady_clock::now();
  EXPECT_TRUE(lib->PowerUsageMw(d).ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start2, std::chrono::milliseconds(300));
}

TEST_F(SimTest, FieldValuesPerElementFault) {
  const Library* lib = Load("faults.yaml", 0);
  ASSERT_NE(lib, nullptr);
  nvmlFieldValue_t v[4] = {};
  v[0].fieldId = NVML_FI_DEV_MEMORY_TEMP;
  v[1].fieldId = NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION;
  v[2].fieldId = NVML_FI_DEV_REMAPPED_UNC;
  v[3].fieldId = 999;
  ASSERT_TRUE(lib->FieldValues(Dev(0), v, 4).ok());
  EXPECT_EQ(v[0].nvmlReturn, NVML_SUCCESS);
  EXPECT_EQ(v[0].valueType, NVML_VALUE_TYPE_UNSIGNED_INT);
  EXPECT_EQ(v[0].value.uiVal, 40u);  // default mem_temp
  EXPECT_EQ(v[1].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(v[2].nvmlReturn, NVML_SUCCESS);
  EXPECT_EQ(v[2].valueType, NVML_VALUE_TYPE_UNSIGNED_INT);
  EXPECT_EQ(v[3].nvmlReturn, NVML_ERROR_INVALID_ARGUMENT);

  // The same field on another GPU is fine, and typed as the driver types it.
  nvmlFieldValue_t e{};
  e.fieldId = NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION;
  ASSERT_TRUE(lib->FieldValues(Dev(1), &e, 1).ok());
  EXPECT_EQ(e.nvmlReturn, NVML_SUCCESS);
  EXPECT_EQ(e.valueType, NVML_VALUE_TYPE_UNSIGNED_LONG_LONG);
  EXPECT_EQ(e.value.ullVal, 1000000u);  // default energy_mj_at_start at t=0
}

TEST_F(SimTest, FieldValueTypesFollowTheDriver) {
  const Library* lib = Load("eight_gpus.yaml", 10);
  ASSERT_NE(lib, nullptr);
  nvmlFieldValue_t v[5] = {};
  v[0].fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX;
  v[0].scopeId = NVMLX_SCOPE_ALL_LINKS;
  v[1].fieldId = NVML_FI_DEV_ECC_SBE_VOL_TOTAL;
  v[2].fieldId = NVML_FI_DEV_PERF_POLICY_THERMAL;
  v[3].fieldId = NVML_FI_DEV_POWER_INSTANT;
  v[4].fieldId = 251;  // moved id: R580 answers NOT_SUPPORTED
  ASSERT_TRUE(lib->FieldValues(Dev(3), v, 5).ok());
  EXPECT_EQ(v[0].nvmlReturn, NVML_SUCCESS);
  EXPECT_EQ(v[0].valueType, NVML_VALUE_TYPE_UNSIGNED_LONG_LONG);
  EXPECT_EQ(v[0].value.ullVal, 4000000u);
  EXPECT_EQ(v[1].valueType, NVML_VALUE_TYPE_UNSIGNED_LONG_LONG);
  EXPECT_EQ(v[1].value.ullVal, 3u);
  EXPECT_EQ(v[2].valueType, NVML_VALUE_TYPE_UNSIGNED_LONG_LONG);
  EXPECT_EQ(v[3].valueType, NVML_VALUE_TYPE_UNSIGNED_INT);
  EXPECT_EQ(v[3].value.uiVal, 375000u);
  EXPECT_EQ(v[4].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
  // Frozen time gives frozen timestamps: golden outputs stay byte-stable.
  EXPECT_EQ(v[0].timestamp, 1700000010000000LL);
}

// Per-link NVLink calls (nvlink.yaml): counters split over the GPU's links, INVALID_ARGUMENT past
// its last link, NOT_SUPPORTED on every link of a GPU without NVLink; link state per link.
TEST_F(SimTest, PerLinkNvlinkErrorCountersAndStates) {
  const Library* lib = Load("nvlink.yaml", 100);
  ASSERT_NE(lib, nullptr);
  for (unsigned k = 0; k < NVMLX_NVLINK_MAX_LINKS; ++k) {
    EXPECT_EQ(*lib->NvlinkErrorCounter(Dev(0), k, NVML_NVLINK_ERROR_DL_CRC_FLIT), 2u) << k;
    EXPECT_EQ(*lib->NvlinkErrorCounter(Dev(0), k, NVML_NVLINK_ERROR_DL_CRC_DATA), 1u) << k;
    EXPECT_EQ(*lib->NvlinkErrorCounter(Dev(0), k, NVML_NVLINK_ERROR_DL_REPLAY), 1u) << k;
    EXPECT_EQ(*lib->NvlinkErrorCounter(Dev(0), k, NVML_NVLINK_ERROR_DL_RECOVERY),
              (k == 5 || k == 11 || k == 17) ? 1u : 0u)
        << k;
    EXPECT_TRUE(*lib->NvlinkActive(Dev(0), k)) << k;
  }
  EXPECT_TRUE(*lib->NvlinkActive(Dev(1), 1));
  EXPECT_FALSE(*lib->NvlinkActive(Dev(1), 2));
  EXPECT_EQ(lib->NvlinkActive(Dev(1), 4).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(lib->NvlinkErrorCounter(Dev(1), 4, NVML_NVLINK_ERROR_DL_REPLAY).status().code(),
            StatusCode::kInvalidArgument);
  for (unsigned k : {0u, 17u}) {
    EXPECT_EQ(lib->NvlinkActive(Dev(2), k).status().code(), StatusCode::kNotSupported);
    Result<uint64_t> c = lib->NvlinkErrorCounter(Dev(2), k, NVML_NVLINK_ERROR_DL_CRC_FLIT);
    EXPECT_EQ(c.status().code(), StatusCode::kNotSupported);
    EXPECT_NE(c.status().message().find("nvmlDeviceGetNvLinkErrorCounter"), std::string::npos);
  }
  // The totals agree with the per-link counters, and a GPU without NVLink has none.
  nvmlFieldValue_t v[2] = {};
  v[0].fieldId = NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL;
  v[1].fieldId = NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL;
  ASSERT_TRUE(lib->FieldValues(Dev(0), v, 2).ok());
  EXPECT_EQ(v[0].value.ullVal, 36u);
  EXPECT_EQ(v[1].value.ullVal, 18u);
  ASSERT_TRUE(lib->FieldValues(Dev(2), v, 2).ok());
  EXPECT_EQ(v[0].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
}

TEST_F(SimTest, DefaultScenarioSquareWaveAtFrozenTimes) {
  const Library* lib = Load(nullptr, 5);
  ASSERT_NE(lib, nullptr);
  ASSERT_EQ(*lib->DeviceCount(), 2u);
  Device d = Dev(0);
  EXPECT_EQ(lib->UtilizationRates(d)->gpu, 100u);
  EXPECT_EQ(lib->UtilizationRates(d)->memory, 35u);
  EXPECT_EQ(*lib->PowerUsageMw(d), 690000u);
  EXPECT_EQ(*lib->ClockMhz(d, NVML_CLOCK_SM), 1980u);
  EXPECT_EQ(*lib->GpuTemperatureC(d), 62u);
  EXPECT_EQ(lib->Memory(d)->used, 80000ull * 1024 * 1024);
  EXPECT_EQ(lib->UtilizationRates(Dev(1))->gpu, 8u);  // ramp 0 -> 100 over 60 s, at 5 s
  EXPECT_EQ(lib->FanSpeedPercent(d).status().code(), StatusCode::kNotSupported);
  const uint64_t energy_at_5 = *lib->TotalEnergyMj(d);

  lib = Load(nullptr, 25);
  ASSERT_NE(lib, nullptr);
  d = Dev(0);
  EXPECT_EQ(lib->UtilizationRates(d)->gpu, 0u);
  EXPECT_EQ(*lib->PowerUsageMw(d), 80000u);
  EXPECT_EQ(*lib->ClockMhz(d, NVML_CLOCK_SM), 345u);
  EXPECT_EQ(*lib->GpuTemperatureC(d), 38u);
  EXPECT_EQ(lib->Memory(d)->used, 0u);
  // 15 s more at 690 W, then 5 s at 80 W.
  EXPECT_EQ(*lib->TotalEnergyMj(d), energy_at_5 + 15 * 690000 + 5 * 80000);

  lib = Load(nullptr, 45);
  ASSERT_NE(lib, nullptr);
  EXPECT_EQ(lib->UtilizationRates(Dev(0))->gpu, 100u);
}

TEST_F(SimTest, XidEventsAreDeliveredOncePerSet) {
  const Library* lib = Load("faults.yaml", 15);
  ASSERT_NE(lib, nullptr);
  const Api& api = lib->api();
  nvmlEventSet_t set = nullptr;
  ASSERT_EQ(api.nvmlEventSetCreate(&set), NVML_SUCCESS);
  for (unsigned i = 0; i < 3; ++i) {
    ASSERT_EQ(api.nvmlDeviceRegisterEvents(Dev(i), nvmlEventTypeXidCriticalError, set),
              NVML_SUCCESS);
  }
  nvmlEventData_t data{};
  ASSERT_EQ(api.nvmlEventSetWait_v2(set, &data, 0), NVML_SUCCESS);
  EXPECT_EQ(data.eventType, nvmlEventTypeXidCriticalError);
  EXPECT_EQ(data.eventData, 79u);
  EXPECT_EQ(data.device, Dev(0));
  // Delivered once; the Xid at 40 s is not due at a frozen 15 s, so the wait times out.
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(api.nvmlEventSetWait_v2(set, &data, 200), NVML_ERROR_TIMEOUT);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(200));

  // A second set gets its own copy.
  nvmlEventSet_t other = nullptr;
  ASSERT_EQ(api.nvmlEventSetCreate(&other), NVML_SUCCESS);
  ASSERT_EQ(api.nvmlDeviceRegisterEvents(Dev(0), nvmlEventTypeXidCriticalError, other),
            NVML_SUCCESS);
  EXPECT_EQ(api.nvmlEventSetWait_v2(other, &data, 0), NVML_SUCCESS);
  EXPECT_EQ(data.eventData, 79u);
  EXPECT_EQ(api.nvmlEventSetFree(other), NVML_SUCCESS);
  EXPECT_EQ(api.nvmlEventSetFree(set), NVML_SUCCESS);
  EXPECT_EQ(api.nvmlEventSetWait_v2(set, &data, 0), NVML_ERROR_INVALID_ARGUMENT);
}

TEST_F(SimTest, XidWaitWakesWhenTheEventFallsDue) {
  const std::string path =
      WriteScenario("xid_soon.yaml", "gpus: [{}]\nxids:\n  - {gpu: 0, at_s: 0.3, xid: 119}\n");
  ASSERT_FALSE(path.empty());
  ASSERT_NE(Load(path.c_str()), nullptr);
  const Api& api = lib_->api();
  nvmlEventSet_t set = nullptr;
  ASSERT_EQ(api.nvmlEventSetCreate(&set), NVML_SUCCESS);
  ASSERT_EQ(api.nvmlDeviceRegisterEvents(Dev(0), nvmlEventTypeXidCriticalError, set), NVML_SUCCESS);
  nvmlEventData_t data{};
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(api.nvmlEventSetWait_v2(set, &data, 5000), NVML_SUCCESS);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(data.eventData, 119u);
  EXPECT_GE(took, std::chrono::milliseconds(200));
  EXPECT_LT(took, std::chrono::milliseconds(4000));  // woke at the event, not at the timeout
  EXPECT_EQ(api.nvmlEventSetFree(set), NVML_SUCCESS);
}

TEST_F(SimTest, VersionedStructsAndGpm) {
  const Library* lib = Load("one_gpu.yaml", 0);
  ASSERT_NE(lib, nullptr);
  const Api& api = lib->api();
  Device d = Dev(0);
  nvmlMemory_v2_t mem{};
  mem.version = 2;  // the classic mistake (nvidia-settings#78)
  EXPECT_EQ(api.nvmlDeviceGetMemoryInfo_v2(d, &mem), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
  mem.version = nvmlMemory_v2;
  EXPECT_EQ(api.nvmlDeviceGetMemoryInfo_v2(d, &mem), NVML_SUCCESS);

  nvmlGpmSupport_t gpm{};
  gpm.version = NVMLX_STRUCT_VERSION(nvmlGpmSupport_t, 1);
  EXPECT_EQ(api.nvmlGpmQueryDeviceSupport(d, &gpm), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
  gpm.version = NVML_GPM_SUPPORT_VERSION;
  gpm.isSupportedDevice = 7;
  EXPECT_EQ(api.nvmlGpmQueryDeviceSupport(d, &gpm), NVML_SUCCESS);
  EXPECT_EQ(gpm.isSupportedDevice, 0u);
  // one_gpu.yaml has no `gpm: true`: buffers exist, but sampling this GPU is NOT_SUPPORTED.
  Result<GpmSample> sample = lib->GpmSampleAlloc();
  ASSERT_TRUE(sample.ok()) << sample.status().ToString();
  EXPECT_EQ(lib->GpmSampleGet(d, *sample).code(), StatusCode::kNotSupported);
  Result<bool> supported = lib->GpmSupported(d);
  ASSERT_TRUE(supported.ok());
  EXPECT_FALSE(*supported);
}

TEST_F(SimTest, GpmWindowAverageOfSquareWaveAndPerMetricErrors) {
  const Library* lib = Load("pulse_fast.yaml");
  ASSERT_NE(lib, nullptr);
  Device d = Dev(0);
  Result<bool> supported = lib->GpmSupported(d);
  ASSERT_TRUE(supported.ok() && *supported);
  Result<GpmSample> s1 = lib->GpmSampleAlloc();
  Result<GpmSample> s2 = lib->GpmSampleAlloc();
  ASSERT_TRUE(s1.ok() && s2.ok());
  ASSERT_TRUE(lib->GpmSampleGet(d, *s1).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  ASSERT_TRUE(lib->GpmSampleGet(d, *s2).ok());
  // 1 GRAPHICS (square 99.9/0, 3 s on: the first 120 ms are all "on"), 21 PCIe RX (3 MiB/s),
  // 0 (no such metric), 60 NVLink RX (0 here).
  const unsigned ids[] = {1, 21, 0, 60};
  auto got = lib->GpmMetricsGet(*s1, *s2, ids);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), 4u);
  ASSERT_TRUE((*got)[0].ok());
  EXPECT_NEAR(*(*got)[0], 99.9, 1e-9);
  ASSERT_TRUE((*got)[1].ok());
  EXPECT_DOUBLE_EQ(*(*got)[1], 3);
  EXPECT_EQ((*got)[2].status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE((*got)[3].ok());
  std::vector<unsigned> too_many(kGpmMaxMetricsPerCall + 1, 1);
  EXPECT_FALSE(lib->GpmMetricsGet(*s1, *s2, too_many).ok());
}

TEST_F(SimTest, GpmFaultsApplyLikeOtherCalls) {
  const Library* lib = Load("gpm.yaml", 0);
  ASSERT_NE(lib, nullptr);
  Result<GpmSample> s1 = lib->GpmSampleAlloc();
  Result<GpmSample> s2 = lib->GpmSampleAlloc();
  ASSERT_TRUE(s1.ok() && s2.ok());
  ASSERT_TRUE(lib->GpmSampleGet(Dev(2), *s1).ok());
  ASSERT_TRUE(lib->GpmSampleGet(Dev(2), *s2).ok());
  const unsigned ids[] = {1};
  auto got = lib->GpmMetricsGet(*s1, *s2, ids);
  ASSERT_FALSE(got.ok()) << "gpm.yaml faults nvmlGpmMetricsGet on GPU 2";
  EXPECT_NE(got.status().message().find("nvmlGpmMetricsGet"), std::string::npos);
  ASSERT_TRUE(lib->GpmSampleGet(Dev(0), *s1).ok());
  ASSERT_TRUE(lib->GpmSampleGet(Dev(0), *s2).ok());
  EXPECT_TRUE(lib->GpmMetricsGet(*s1, *s2, ids).ok()) << "GPU 0 is not faulted";
}

TEST_F(SimTest, InvalidHandlesAndBuffers) {
  const Library* lib = Load("one_gpu.yaml", 0);
  ASSERT_NE(lib, nullptr);
  const Api& api = lib->api();
  char buf[96];
  EXPECT_EQ(api.nvmlDeviceGetName(nullptr, buf, sizeof(buf)), NVML_ERROR_INVALID_ARGUMENT);
  int not_a_device = 0;
  EXPECT_EQ(api.nvmlDeviceGetName(reinterpret_cast<nvmlDevice_t>(&not_a_device), buf, 96),
            NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(api.nvmlDeviceGetName(Dev(0), buf, 5), NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(api.nvmlDeviceGetName(Dev(0), nullptr, 96), NVML_ERROR_INVALID_ARGUMENT);
  unsigned count = 0;
  // No pages retired: zero-sized query succeeds with 0.
  EXPECT_TRUE(lib->RetiredPageCount(Dev(0), NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR).ok());
  EXPECT_EQ(api.nvmlDeviceGetRetiredPages(Dev(0), NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR,
                                          &count, nullptr),
            NVML_SUCCESS);
}

TEST_F(SimTest, InitIsReferenceCountedAndCallsNeedIt) {
  const Library* lib = Load("one_gpu.yaml", 0);
  ASSERT_NE(lib, nullptr);
  const Api api = lib->api();  // a copy: the pointers outlive the Library (never dlclosed)
  EXPECT_STREQ(api.nvmlErrorString(NVML_SUCCESS), "Success");
  EXPECT_STREQ(api.nvmlErrorString(NVML_ERROR_UNINITIALIZED), "Uninitialized");
  EXPECT_STREQ(api.nvmlErrorString(NVML_ERROR_GPU_IS_LOST), "GPU is lost");
  EXPECT_STREQ(api.nvmlErrorString(12345), "Unknown Error");

  ASSERT_EQ(api.nvmlInit_v2(), NVML_SUCCESS);  // count 2
  lib_.reset();                                // count 1: still initialised
  unsigned n = 0;
  EXPECT_EQ(api.nvmlDeviceGetCount_v2(&n), NVML_SUCCESS);
  EXPECT_EQ(n, 1u);
  ASSERT_EQ(api.nvmlShutdown(), NVML_SUCCESS);  // count 0
  EXPECT_EQ(api.nvmlDeviceGetCount_v2(&n), NVML_ERROR_UNINITIALIZED);
  char buf[80];
  EXPECT_EQ(api.nvmlSystemGetDriverVersion(buf, sizeof(buf)), NVML_ERROR_UNINITIALIZED);
  EXPECT_EQ(api.nvmlShutdown(), NVML_ERROR_UNINITIALIZED);  // as measured on R580
}

TEST_F(SimTest, BadScenarioFailsInitWithFileAndLine) {
  ::testing::internal::CaptureStderr();
  auto r = TryLoad("bad_square.yaml", std::nullopt);
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "nvmlInit_v2: Unknown Error (999)");
  EXPECT_THAT(err, HasSubstr("simgpu: " + kScenarios + "bad_square.yaml:5: "));

  ::testing::internal::CaptureStderr();
  setenv("NVMLX_SIMGPU_FROZEN_TIME_S", "soon", 1);
  unsetenv("NVMLX_SIMGPU_SCENARIO");
  auto r2 = Library::Load(NVMLX_SIMGPU_LIBRARY);
  EXPECT_FALSE(r2.ok());
  EXPECT_THAT(::testing::internal::GetCapturedStderr(), HasSubstr("NVMLX_SIMGPU_FROZEN_TIME_S"));
}

TEST_F(SimTest, ConcurrentCallers) {
  const Library* lib = Load("eight_gpus.yaml", std::nullopt);
  ASSERT_NE(lib, nullptr);
  std::vector<Device> devs;
  for (unsigned i = 0; i < 8; ++i) devs.push_back(Dev(i));
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        Device d = devs[(t + i) % 8];
        if (!lib->UtilizationRates(d).ok() || !lib->Memory(d).ok()) ++failures;
        nvmlFieldValue_t v{};
        v.fieldId = NVML_FI_DEV_MEMORY_TEMP;
        if (!lib->FieldValues(d, &v, 1).ok() || v.nvmlReturn != NVML_SUCCESS) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST_F(SimTest, FreeingASetWakesItsWaiter) {
  const Library* lib = Load("one_gpu.yaml", 0);
  ASSERT_NE(lib, nullptr);
  const Api& api = lib->api();
  nvmlEventSet_t set = nullptr;
  ASSERT_EQ(api.nvmlEventSetCreate(&set), NVML_SUCCESS);
  ASSERT_EQ(api.nvmlDeviceRegisterEvents(Dev(0), nvmlEventTypeXidCriticalError, set), NVML_SUCCESS);
  std::atomic<nvmlReturn_t> rc{-1};
  const auto start = std::chrono::steady_clock::now();
  std::thread waiter([&] {
    nvmlEventData_t data{};
    rc = api.nvmlEventSetWait_v2(set, &data, 10000);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(api.nvmlEventSetFree(set), NVML_SUCCESS);
  waiter.join();
  EXPECT_EQ(rc.load(), NVML_ERROR_UNINITIALIZED);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

// MIG wrappers on testdata/scenarios/mig.yaml: GPU 0 has MIG devices in slots 0, 2 and 3.
TEST_F(SimTest, MigEnumerationAndIds) {
  const Library* lib = Load("mig.yaml", 100);
  ASSERT_NE(lib, nullptr);
  Result<bool> on = lib->MigEnabled(Dev(0));
  ASSERT_TRUE(on.ok()) << on.status().ToString();
  EXPECT_TRUE(*on);
  Result<unsigned> max = lib->MaxMigDeviceCount(Dev(0));
  ASSERT_TRUE(max.ok());
  EXPECT_EQ(*max, 7u);
  Result<std::optional<Device>> slot0 = lib->MigDeviceByIndex(Dev(0), 0);
  ASSERT_TRUE(slot0.ok() && slot0->has_value()) << slot0.status().ToString();
  Result<std::optional<Device>> slot1 = lib->MigDeviceByIndex(Dev(0), 1);
  ASSERT_TRUE(slot1.ok()) << "NOT_FOUND is an empty slot, not an error";
  EXPECT_FALSE(slot1->has_value());
  EXPECT_FALSE(lib->MigDeviceByIndex(Dev(0), 7).ok()) << "past the last slot";
  const Device mig = **slot0;
  EXPECT_EQ(*lib->GpuInstanceId(mig), 1u);
  EXPECT_EQ(*lib->ComputeInstanceId(mig), 0u);
  EXPECT_EQ(lib->Uuid(mig)->rfind("MIG-", 0), 0u);
  Result<nvmlDeviceAttributes_t> attrs = lib->Attributes(mig);
  ASSERT_TRUE(attrs.ok());
  EXPECT_EQ(attrs->gpuInstanceSliceCount, 3u);
  EXPECT_EQ(attrs->memorySizeMB, 72192u);
  Result<MemoryInfo> mem = lib->Memory(mig);
  ASSERT_TRUE(mem.ok());
  EXPECT_EQ(mem->total, 72192ull << 20);
  EXPECT_EQ(mem->used, 20000ull << 20);
  // The profile table: index 2 is 3 slices, 5 is absent (NOT_SUPPORTED), past 0x11 is the end.
  Result<nvmlGpuInstanceProfileInfo_t> p2 = lib->GpuInstanceProfileInfo(Dev(0), 2);
  ASSERT_TRUE(p2.ok());
  EXPECT_EQ(p2->sliceCount, 3u);
  EXPECT_EQ(lib->GpuInstanceProfileInfo(Dev(0), 5).status().code(), StatusCode::kNotSupported);
  EXPECT_EQ(lib->GpuInstanceProfileInfo(Dev(0), 0x12).status().code(),
            StatusCode::kInvalidArgument);
  // GPU-instance GPM through the parent; an unknown GI is NOT_FOUND.
  Result<GpmSample> s = lib->GpmSampleAlloc();
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(lib->GpmMigSampleGet(Dev(0), 1, *s).ok());
  EXPECT_EQ(lib->GpmMigSampleGet(Dev(0), 5, *s).code(), StatusCode::kNotFound);
  // GPU 1 has MIG off; utilization is NOT_SUPPORTED on the MIG-enabled GPU only.
  Result<bool> off = lib->MigEnabled(Dev(1));
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(*off);
  EXPECT_EQ(*lib->MaxMigDeviceCount(Dev(1)), 0u);
  EXPECT_EQ(lib->UtilizationRates(Dev(0)).status().code(), StatusCode::kNotSupported);
  EXPECT_TRUE(lib->UtilizationRates(Dev(1)).ok());
}

TEST_F(SimTest, MigModeNotSupportedMeansOff) {
  const std::string path = WriteScenario(
      "mig_unsupported.yaml",
      "gpus: [{}]\nfaults:\n  - {call: nvmlDeviceGetMigMode, error: NOT_SUPPORTED}\n");
  ASSERT_FALSE(path.empty());
  const Library* lib = Load(path.c_str());
  ASSERT_NE(lib, nullptr);
  Result<bool> on = lib->MigEnabled(Dev(0));
  ASSERT_TRUE(on.ok()) << on.status().ToString();
  EXPECT_FALSE(*on);
}

}  // namespace
}  // namespace nvmlx::nvml
