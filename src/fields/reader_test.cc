// DeviceReader against the simulated GPUs of tools/simgpu (testdata/fields/reader.yaml).
#include "fields/reader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>

#include "fields/catalog_nvlink.h"
#include "tools/simgpu/sim_control.h"

namespace nvmlx::fields {
namespace {

struct Outcome {
  std::map<int, model::Value> values;
  std::map<int, Status> errors;
  std::vector<int> order;
};

class ReaderTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("NVMLX_SIMGPU_SCENARIO", NVMLX_SOURCE_DIR "/testdata/fields/reader.yaml", 1);
    setenv("NVMLX_SIMGPU_FROZEN_TIME_S", "100", 1);
    auto lib = nvml::Library::Load(NVMLX_SIMGPU_LIBRARY);
    ASSERT_TRUE(lib.ok()) << lib.status().ToString();
    lib_ = std::move(*lib).release();
  }
  static void TearDownTestSuite() {
    delete lib_;
    lib_ = nullptr;
  }
  void SetUp() override {
    if (lib_ == nullptr) GTEST_SKIP() << "simulated NVML did not load";
  }

  static nvml::Device Dev(unsigned index) {
    auto d = lib_->DeviceByIndex(index);
    EXPECT_TRUE(d.ok()) << d.status().ToString();
    return d.ok() ? *d : nullptr;
  }

  static std::vector<const FieldDef*> Fields(std::initializer_list<int> ids) {
    std::vector<const FieldDef*> out;
    for (int id : ids) {
      const FieldDef* f = FindById(id);
      if (f == nullptr) {
        ADD_FAILURE() << id << " is not in the catalog";  // and not handed to a reader to read
        continue;
      }
      out.push_back(f);
    }
    return out;
  }

  static Outcome ReadAll(const DeviceReader& reader) {
    std::vector<model::Sample> samples;
    std::vector<FieldError> errors;
    reader.Read(&samples, &errors);
    Outcome o;
    for (auto& s : samples) {
      o.order.push_back(s.field_id);
      o.values.emplace(s.field_id, s.value);
    }
    for (auto& e : errors) o.errors.emplace(e.field_id, e.status);
    return o;
  }

  static nvml::Library* lib_;
};

nvml::Library* ReaderTest::lib_ = nullptr;

int64_t I(const Outcome& o, int id) {
  auto it = o.values.find(id);
  EXPECT_NE(it, o.values.end()) << "no sample for " << id;
  if (it == o.values.end()) return -1;
  EXPECT_TRUE(std::holds_alternative<int64_t>(it->second)) << id;
  return std::holds_alternative<int64_t>(it->second) ? std::get<int64_t>(it->second) : -1;
}

double D(const Outcome& o, int id) {
  auto it = o.values.find(id);
  EXPECT_NE(it, o.values.end()) << "no sample for " << id;
  if (it == o.values.end()) return -1;
  EXPECT_TRUE(std::holds_alternative<double>(it->second)) << id;
  return std::holds_alternative<double>(it->second) ? std::get<double>(it->second) : -1;
}

std::string S(const Outcome& o, int id) {
  auto it = o.values.find(id);
  EXPECT_NE(it, o.values.end()) << "no sample for " << id;
  if (it == o.values.end() || !std::holds_alternative<std::string>(it->second)) return "?";
  return std::get<std::string>(it->second);
}

TEST_F(ReaderTest, DirectCallsAndConversions) {
  DeviceReader reader(*lib_, Dev(0),
                      Fields({252, 100, 101, 150, 155, 160, 161, 162, 163, 203, 204, 250,
                              251, 253, 254, 112, 190, 237, 238, 393, 394, 395, 396}));
  Outcome o = ReadAll(reader);
  EXPECT_TRUE(o.errors.empty()) << o.errors.begin()->second.ToString();
  EXPECT_TRUE(std::is_sorted(o.order.begin(), o.order.end()));
  EXPECT_EQ(I(o, 100), 1755);
  EXPECT_EQ(I(o, 101), 3201);
  EXPECT_EQ(I(o, 150), 62);
  EXPECT_DOUBLE_EQ(D(o, 155), 299.437);
  EXPECT_DOUBLE_EQ(D(o, 160), 650.0);  // integer mW / 1000, as DCGM
  EXPECT_DOUBLE_EQ(D(o, 161), 200.0);
  EXPECT_DOUBLE_EQ(D(o, 162), 700.0);
  EXPECT_DOUBLE_EQ(D(o, 163), 700.0);
  EXPECT_EQ(I(o, 203), 87);
  EXPECT_EQ(I(o, 204), 35);
  EXPECT_EQ(I(o, 250), 143771);
  EXPECT_EQ(I(o, 252), 80000);  // v2 .used, without reserved
  EXPECT_EQ(I(o, 253), 615);
  EXPECT_EQ(I(o, 251), 143771 - 80000 - 615);
  EXPECT_NEAR(D(o, 254), 80000.0 / (143771.0 - 615.0), 1e-9);
  EXPECT_EQ(I(o, 112), 4);
  EXPECT_EQ(I(o, 190), 0);
  EXPECT_EQ(I(o, 237), 5);
  EXPECT_EQ(I(o, 238), 16);
  EXPECT_EQ(I(o, 393), 1);  // uncorrectable
  EXPECT_EQ(I(o, 394), 3);  // correctable
  EXPECT_EQ(I(o, 395), 0);
  EXPECT_EQ(I(o, 396), 1);
}

TEST_F(ReaderTest, Labels) {
  DeviceReader reader(*lib_, Dev(0), Fields({50, 51, 53, 54, 55, 57, 56, 80, 81, 82, 85}));
  Outcome o = ReadAll(reader);
  EXPECT_TRUE(o.errors.empty()) << o.errors.begin()->second.ToString();
  EXPECT_EQ(S(o, 50), "NVIDIA H200");
  EXPECT_EQ(S(o, 51), "NVIDIA");
  EXPECT_EQ(S(o, 53), "1650000000001");
  EXPECT_EQ(S(o, 54), "GPU-11111111-2222-3333-4444-555555555555");
  EXPECT_EQ(I(o, 55), 3);
  EXPECT_EQ(S(o, 57), "00000000:00:06.0");
  EXPECT_EQ(S(o, 56), "2.1");
  EXPECT_EQ(S(o, 80), "7.16");
  EXPECT_EQ(S(o, 81), "1.0");
  EXPECT_EQ(S(o, 82), "G525.0225.00.03");
  EXPECT_EQ(S(o, 85), "96.00.AF.00.01");
}

TEST_F(ReaderTest, NonDeviceFieldsAreIgnored) {
  DeviceReader reader(*lib_, Dev(0), Fields({1, 230, 1001, 9001, 100}));
  ASSERT_EQ(reader.fields().size(), 1u);
  EXPECT_EQ(reader.fields()[0]->id, 100);
  // The system read functions work against the library as well (used outside DeviceReader).
  ReadContext ctx{*lib_, Dev(0), std::nullopt, std::nullopt, std::nullopt, std::nullopt};
  auto v = FindById(1)->read(ctx);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(std::get<std::string>(*v), "580.159.04");
}

TEST_F(ReaderTest, NotSupportedCallBecomesFieldErrorNamingTheFunction) {
  DeviceReader reader(*lib_, Dev(0), Fields({191, 100}));
  Outcome o = ReadAll(reader);
  EXPECT_EQ(I(o, 100), 1755);
  ASSERT_EQ(o.errors.count(191), 1u);
  EXPECT_EQ(o.values.count(191), 0u);
  EXPECT_EQ(o.errors[191].code(), StatusCode::kNotSupported);
  EXPECT_NE(o.errors[191].message().find("nvmlDeviceGetFanSpeed"), std::string::npos)
      << o.errors[191].message();
}

TEST_F(ReaderTest, BatchedFieldValuesWithAPerElementFault) {
  DeviceReader reader(*lib_, Dev(0), Fields({312, 310, 140, 240, 1420}));
  Outcome o = ReadAll(reader);
  EXPECT_EQ(I(o, 310), 7);
  EXPECT_EQ(I(o, 140), 44);
  EXPECT_EQ(I(o, 240), 123456789);
  EXPECT_EQ(I(o, 1420), 123456789);  // same NVML field as 240, asked for once
  ASSERT_EQ(o.errors.count(312), 1u);
  EXPECT_EQ(o.errors[312].code(), StatusCode::kNotSupported);
  EXPECT_NE(o.errors[312].message().find("nvmlDeviceGetFieldValues"), std::string::npos);
  EXPECT_NE(o.errors[312].message().find("5"), std::string::npos);
  EXPECT_EQ((std::vector<int>{140, 240, 310, 1420}), o.order);
}

TEST_F(ReaderTest, NvlinkBandwidthNeedsTwoSamples) {
  DeviceReader reader(*lib_, Dev(0), Fields({449}));
  Outcome first = ReadAll(reader);
  EXPECT_TRUE(first.values.empty());
  EXPECT_TRUE(first.errors.empty()) << first.errors.begin()->second.ToString();
  // Frozen clock: no time passes, so still no rate, and still no error.
  Outcome second = ReadAll(reader);
  EXPECT_TRUE(second.errors.empty());
  for (auto& [id, v] : second.values) EXPECT_EQ(std::get<int64_t>(v), 0) << id;
}

// Every per-link NVLink rate field, and the totals, from the scenario's counters: the second Read
// after ten simulated seconds gives DCGM's (delta KiB) / seconds / 1000.
TEST_F(ReaderTest, PerLinkNvlinkRates) {
  std::vector<const FieldDef*> fields;
  for (unsigned k = 0; k < internal::kNvlinkLinks; ++k) {
    for (int id :
         {internal::NvlinkBandwidthId(k), internal::NvlinkTxId(k), internal::NvlinkRxId(k)}) {
      fields.push_back(FindById(id));
      ASSERT_NE(fields.back(), nullptr) << id;
    }
  }
  for (int id : {449, internal::kNvlinkTxTotalId, internal::kNvlinkRxTotalId}) {
    fields.push_back(FindById(id));
  }
  DeviceReader reader(*lib_, Dev(0), fields);
  ASSERT_EQ(reader.fields().size(), fields.size());
  Outcome first = ReadAll(reader);
  EXPECT_TRUE(first.values.empty());
  EXPECT_TRUE(first.errors.empty()) << first.errors.begin()->second.ToString();
  ASSERT_EQ(simgpu::SetFrozenTime(NVMLX_SIMGPU_LIBRARY, 110), "");
  Outcome second = ReadAll(reader);
  ASSERT_EQ(simgpu::SetFrozenTime(NVMLX_SIMGPU_LIBRARY, 100), "");  // as the other tests expect
  EXPECT_TRUE(second.errors.empty()) << second.errors.begin()->second.ToString();
  ASSERT_EQ(second.values.size(), fields.size());
  for (unsigned k = 0; k < internal::kNvlinkLinks; ++k) {
    EXPECT_EQ(I(second, internal::NvlinkBandwidthId(k)), 300) << "link " << k;
    EXPECT_EQ(I(second, internal::NvlinkTxId(k)), 100) << "link " << k;
    EXPECT_EQ(I(second, internal::NvlinkRxId(k)), 200) << "link " << k;
  }
  EXPECT_EQ(I(second, 449), 5400);
  EXPECT_EQ(I(second, internal::kNvlinkTxTotalId), 1800);
  EXPECT_EQ(I(second, internal::kNvlinkRxTotalId), 3600);
}

// The per-link NVLink error counters: one nvmlDeviceGetNvLinkErrorCounter call per row. Links the
// GPU has give the raw counter; the others answer INVALID_ARGUMENT, and a GPU without NVLink
// NOT_SUPPORTED on every link: an error per row (logged once by the collector), no series.
TEST_F(ReaderTest, PerLinkNvlinkErrorCounters) {
  std::vector<const FieldDef*> fields;
  for (const auto& fam : internal::kNvlinkErrorFamilies) {
    for (unsigned k = 0; k < internal::kNvlinkLinks; ++k) {
      fields.push_back(FindById(internal::NvlinkErrorId(fam.ids, k)));
      ASSERT_NE(fields.back(), nullptr);
    }
  }
  DeviceReader four_links(*lib_, Dev(2), fields);
  ASSERT_EQ(four_links.fields().size(), 72u);
  Outcome o = ReadAll(four_links);
  ASSERT_EQ(o.values.size(), 16u);
  ASSERT_EQ(o.errors.size(), 56u);
  for (unsigned k = 0; k < 4; ++k) {
    EXPECT_EQ(I(o, internal::NvlinkErrorId({400, 451, 406, 481}, k)), 2) << "flit, link " << k;
    EXPECT_EQ(I(o, internal::NvlinkErrorId({410, 457, 416, 484}, k)), k == 3 ? 1 : 0) << k;
    EXPECT_EQ(I(o, internal::NvlinkErrorId({420, 463, 426, 487}, k)), 1) << "replay, link " << k;
    EXPECT_EQ(I(o, internal::NvlinkErrorId({430, 469, 436, 491}, k)), 0) << "recovery " << k;
  }
  const Status& past = o.errors.at(internal::NvlinkErrorId({400, 451, 406, 481}, 17));
  EXPECT_EQ(past.code(), StatusCode::kInvalidArgument) << past.ToString();
  EXPECT_NE(past.message().find("nvmlDeviceGetNvLinkErrorCounter"), std::string::npos);

  DeviceReader no_nvlink(*lib_, Dev(3), fields);
  Outcome none = ReadAll(no_nvlink);
  EXPECT_TRUE(none.values.empty());
  ASSERT_EQ(none.errors.size(), 72u);
  for (auto& [id, st] : none.errors) EXPECT_EQ(st.code(), StatusCode::kNotSupported) << id;
}

// The DCGM 4.7 base-unit fields read the call of their older twin and convert: both are checked
// against the scenario (GPU 0 of reader.yaml), so a swapped call or factor shows.
TEST_F(ReaderTest, BaseUnitFieldsAndTheirOlderTwins) {
  DeviceReader reader(*lib_, Dev(0),
                      Fields({90,  1600, 92,  1601, 93,  1602, 100, 1603, 101, 1604, 102, 1605,
                              113, 1608, 114, 1609, 115, 1610, 250, 1625, 251, 1626, 252, 1627,
                              253, 1628, 203, 1613, 204, 1614, 206, 1615, 207, 1616}));
  Outcome o = ReadAll(reader);
  EXPECT_TRUE(o.errors.empty()) << o.errors.begin()->second.ToString();
  constexpr int64_t kMiB = 1048576;
  EXPECT_EQ(I(o, 90), 262144);
  EXPECT_EQ(I(o, 1600), 262144 * kMiB);
  EXPECT_EQ(I(o, 92), 1);
  EXPECT_EQ(I(o, 1601), kMiB);
  EXPECT_EQ(I(o, 93), 262143);
  EXPECT_EQ(I(o, 1602), 262143 * kMiB);
  EXPECT_EQ(I(o, 100), 1755);
  EXPECT_EQ(I(o, 1603), 1755000000);
  EXPECT_EQ(I(o, 101), 3201);
  EXPECT_EQ(I(o, 1604), 3201000000);
  EXPECT_EQ(I(o, 102), 1755);  // video_clock default
  EXPECT_EQ(I(o, 1605), 1755000000);
  EXPECT_EQ(I(o, 113), 1980);
  EXPECT_EQ(I(o, 1608), 1980000000);
  EXPECT_EQ(I(o, 114), 3201);
  EXPECT_EQ(I(o, 1609), 3201000000);
  EXPECT_EQ(I(o, 115), 1755);
  EXPECT_EQ(I(o, 1610), 1755000000);
  EXPECT_EQ(I(o, 250), 143771);
  EXPECT_EQ(I(o, 1625), 143771 * kMiB);
  EXPECT_EQ(I(o, 251), 143771 - 80000 - 615);
  EXPECT_EQ(I(o, 1626), (143771 - 80000 - 615) * kMiB);
  EXPECT_EQ(I(o, 252), 80000);
  EXPECT_EQ(I(o, 1627), 80000 * kMiB);
  EXPECT_EQ(I(o, 253), 615);
  EXPECT_EQ(I(o, 1628), 615 * kMiB);
  EXPECT_EQ(I(o, 203), 87);
  EXPECT_DOUBLE_EQ(D(o, 1613), 0.87);
  EXPECT_EQ(I(o, 204), 35);
  EXPECT_DOUBLE_EQ(D(o, 1614), 0.35);
  EXPECT_EQ(I(o, 206), 12);
  EXPECT_DOUBLE_EQ(D(o, 1615), 0.12);
  EXPECT_EQ(I(o, 207), 3);
  EXPECT_DOUBLE_EQ(D(o, 1616), 0.03);
}

// Energy and the throttle counters come from the batched call, shared with their older twins
// (one NVML element each), in J and s.
TEST_F(ReaderTest, BaseUnitFieldValuesShareTheBatchedElement) {
  DeviceReader reader(*lib_, Dev(0), Fields({156, 1611, 240, 1617, 241, 1618}));
  Outcome o = ReadAll(reader);
  EXPECT_TRUE(o.errors.empty()) << o.errors.begin()->second.ToString();
  // energy_mj_at_start (1e6 mJ) + 299.437 W over the 100 simulated seconds.
  EXPECT_EQ(I(o, 156), 1000000 + 29943700);
  EXPECT_DOUBLE_EQ(D(o, 1611), 30943.7);
  EXPECT_EQ(I(o, 240), 123456789);
  EXPECT_DOUBLE_EQ(D(o, 1617), 0.123456789);
  EXPECT_EQ(I(o, 241), 0);
  EXPECT_DOUBLE_EQ(D(o, 1618), 0.0);
}

TEST_F(ReaderTest, FanSpeedRatioAndPowerLimits) {
  DeviceReader fan(*lib_, Dev(4), Fields({191, 1612}));
  Outcome o = ReadAll(fan);
  EXPECT_TRUE(o.errors.empty()) << o.errors.begin()->second.ToString();
  EXPECT_EQ(I(o, 191), 45);
  EXPECT_DOUBLE_EQ(D(o, 1612), 0.45);
  // GPU 0 has no fan: both spellings answer the same NOT_SUPPORTED.
  DeviceReader no_fan(*lib_, Dev(0), Fields({1612}));
  Outcome n = ReadAll(no_fan);
  ASSERT_EQ(n.errors.count(1612), 1u);
  EXPECT_EQ(n.errors[1612].code(), StatusCode::kNotSupported);
  // The configured and enforced limits that dcgm-exporter 4.8.4 offers (opt-in), in W.
  DeviceReader limits(*lib_, Dev(0), Fields({160, 164}));
  Outcome l = ReadAll(limits);
  EXPECT_DOUBLE_EQ(D(l, 160), 650.0);
  EXPECT_DOUBLE_EQ(D(l, 164), 650.0);
  EXPECT_EQ(FindByName("DCGM_FI_DEV_BOARD_POWER_LIMIT_ENFORCED_WATTS")->id, 164);
}

// nvmlDeviceGetGpuFabricInfoV: v3 gives mask and summary; a v2-only driver gives the mask and no
// summary (NOT_SUPPORTED, as DCGM's blank); a GPU outside a fabric neither.
TEST_F(ReaderTest, FabricHealth) {
  DeviceReader v3(*lib_, Dev(0), Fields({174, 175}));
  Outcome o = ReadAll(v3);
  EXPECT_TRUE(o.errors.empty()) << o.errors.begin()->second.ToString();
  EXPECT_EQ(I(o, 174), 426);
  EXPECT_EQ(I(o, 175), 1);

  DeviceReader v2(*lib_, Dev(4), Fields({174, 175}));
  Outcome t = ReadAll(v2);
  EXPECT_EQ(I(t, 174), 1);
  ASSERT_EQ(t.errors.count(175), 1u);
  EXPECT_EQ(t.errors[175].code(), StatusCode::kNotSupported);
  EXPECT_NE(t.errors[175].message().find("v2"), std::string::npos) << t.errors[175].message();

  DeviceReader none(*lib_, Dev(3), Fields({174, 175}));
  Outcome n = ReadAll(none);
  EXPECT_TRUE(n.values.empty());
  ASSERT_EQ(n.errors.size(), 2u);
  for (auto& [id, st] : n.errors) {
    EXPECT_EQ(st.code(), StatusCode::kNotSupported) << id;
    EXPECT_NE(st.message().find("nvmlDeviceGetGpuFabricInfoV"), std::string::npos) << id;
  }
}

// NVLINK_THROUGHPUT_L<k>_BYTES_PER_SECOND and the total: the KiB counters of the MB/s fields, in
// bytes/s (KiB * 1024), from the second Read on.
TEST_F(ReaderTest, NvlinkThroughputInBytesPerSecond) {
  std::vector<const FieldDef*> fields;
  for (int id = 1630; id <= 1648; ++id) fields.push_back(FindById(id));
  fields.push_back(FindById(449));
  DeviceReader reader(*lib_, Dev(0), fields);
  ASSERT_EQ(reader.fields().size(), 20u);
  Outcome first = ReadAll(reader);
  EXPECT_TRUE(first.values.empty());
  ASSERT_EQ(simgpu::SetFrozenTime(NVMLX_SIMGPU_LIBRARY, 110), "");
  Outcome second = ReadAll(reader);
  ASSERT_EQ(simgpu::SetFrozenTime(NVMLX_SIMGPU_LIBRARY, 100), "");
  EXPECT_TRUE(second.errors.empty()) << second.errors.begin()->second.ToString();
  for (int id = 1630; id <= 1647; ++id) EXPECT_EQ(I(second, id), 300000 * 1024) << id;
  EXPECT_EQ(I(second, 1648), int64_t{5400000} * 1024);
  EXPECT_EQ(I(second, 449), 5400);  // the older field keeps DCGM's KiB/s / 1000
}

TEST_F(ReaderTest, LostGpuStopsFurtherCalls) {
  // The batched call runs first and says GPU_IS_LOST: no dedicated call is made after it.
  DeviceReader mixed(*lib_, Dev(1), Fields({100, 140, 150, 203, 310}));
  Outcome o = ReadAll(mixed);
  EXPECT_TRUE(o.values.empty());
  ASSERT_EQ(o.errors.size(), 5u);
  for (auto& [id, st] : o.errors) {
    EXPECT_EQ(st.code(), StatusCode::kGpuLost) << id;
    EXPECT_NE(st.message().find("nvmlDeviceGetFieldValues"), std::string::npos) << id;
  }
  // Dedicated calls only: temperature (150) would answer, but comes after the lost clock (100).
  DeviceReader direct(*lib_, Dev(1), Fields({150, 100}));
  Outcome d = ReadAll(direct);
  ASSERT_EQ(d.errors.size(), 2u);
  EXPECT_EQ(d.errors[150].code(), StatusCode::kGpuLost);
  EXPECT_NE(d.errors[150].message().find("nvmlDeviceGetClockInfo"), std::string::npos);
  // Sanity: on its own, temperature of GPU 1 reads fine (the scenario default, 35 C).
  DeviceReader temp_only(*lib_, Dev(1), Fields({150}));
  Outcome t = ReadAll(temp_only);
  EXPECT_EQ(I(t, 150), 35);
}

}  // namespace
}  // namespace nvmlx::fields
