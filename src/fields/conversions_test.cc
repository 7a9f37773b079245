#include "fields/conversions.h"

#include <gtest/gtest.h>

namespace nvmlx::fields {
namespace {

nvmlFieldValue_t Fv(unsigned field_id, nvmlValueType_t type) {
  nvmlFieldValue_t fv{};
  fv.fieldId = field_id;
  fv.valueType = type;
  fv.nvmlReturn = NVML_SUCCESS;
  return fv;
}

ConvertFn ConvertOf(int dcgm_id) {
  const FieldDef* f = FindById(dcgm_id);
  EXPECT_NE(f, nullptr) << dcgm_id;
  return f != nullptr ? f->convert : nullptr;
}

TEST(ConvertTest, MemoryTempReadsUiValWhateverValueTypeSays) {
  ConvertFn conv = ConvertOf(140);
  ASSERT_NE(conv, nullptr);
  // r545: valueType DOUBLE but uiVal written. Setting uiVal after dVal leaves the upper half of
  // the double's bytes as garbage, so reading dVal would not give 44.
  nvmlFieldValue_t fv = Fv(NVML_FI_DEV_MEMORY_TEMP, NVML_VALUE_TYPE_DOUBLE);
  fv.value.ullVal = 0x4045000000000000ULL;  // 42.0 as a double
  fv.value.uiVal = 44;
  auto r = conv(fv);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(std::get<int64_t>(*r), 44);

  fv = Fv(NVML_FI_DEV_MEMORY_TEMP, NVML_VALUE_TYPE_UNSIGNED_INT);
  fv.value.uiVal = 200;
  EXPECT_EQ(std::get<int64_t>(*conv(fv)), 200);
  fv.value.uiVal = 201;
  auto bad = conv(fv);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("201"), std::string::npos);
}

TEST(ConvertTest, EccForcedUll) {
  for (int id : {300, 301, 310, 311, 312, 313}) {
    ConvertFn conv = ConvertOf(id);
    ASSERT_EQ(conv, &internal::ConvertEccUll) << id;
  }
  // Reported as UINT, but the driver wrote 64 bits: the high half must survive.
  nvmlFieldValue_t fv = Fv(NVML_FI_DEV_ECC_SBE_VOL_TOTAL, NVML_VALUE_TYPE_UNSIGNED_INT);
  fv.value.ullVal = 0x100000007ULL;
  EXPECT_EQ(std::get<int64_t>(*internal::ConvertEccUll(fv)), 0x100000007LL);
}

TEST(ConvertTest, ClockEventReasonNsRequiresUll) {
  for (int id : {1422, 1423, 1424}) {
    ASSERT_EQ(ConvertOf(id), &internal::ConvertClockEventNs);
  }
  nvmlFieldValue_t fv = Fv(269, NVML_VALUE_TYPE_UNSIGNED_LONG_LONG);
  fv.value.ullVal = 7240000000ULL;
  auto ok = internal::ConvertClockEventNs(fv);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(std::get<int64_t>(*ok), 7240000000LL);
  // A driver with the 12.9/13.0 numbering answers a power-smoothing field (not ULL ns) here.
  fv.valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
  auto bad = internal::ConvertClockEventNs(fv);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kNotSupported);
  fv.valueType = NVML_VALUE_TYPE_DOUBLE;
  EXPECT_FALSE(internal::ConvertClockEventNs(fv).ok());
}

TEST(ConvertTest, IntegerByValueType) {
  nvmlFieldValue_t fv = Fv(83, NVML_VALUE_TYPE_UNSIGNED_LONG_LONG);
  fv.value.ullVal = 123456789012ULL;
  EXPECT_EQ(std::get<int64_t>(*internal::ConvertInteger(fv)), 123456789012LL);
  fv = Fv(30, NVML_VALUE_TYPE_UNSIGNED_INT);
  fv.value.ullVal = 0xFFFFFFFF00000005ULL;  // only the low 32 bits are the value
  EXPECT_EQ(std::get<int64_t>(*internal::ConvertInteger(fv)), 5);
  fv = Fv(1, NVML_VALUE_TYPE_SIGNED_INT);
  fv.value.siVal = -3;
  EXPECT_EQ(std::get<int64_t>(*internal::ConvertInteger(fv)), -3);
  fv = Fv(1, NVML_VALUE_TYPE_UNSIGNED_SHORT);
  fv.value.ullVal = 0xFFFF0009ULL;
  EXPECT_EQ(std::get<int64_t>(*internal::ConvertInteger(fv)), 9);
  fv = Fv(1, NVML_VALUE_TYPE_DOUBLE);
  fv.value.dVal = 41.9;
  EXPECT_EQ(std::get<int64_t>(*internal::ConvertInteger(fv)), 41);
  fv = Fv(1, static_cast<nvmlValueType_t>(42));
  EXPECT_FALSE(internal::ConvertInteger(fv).ok());
}

TEST(ConvertTest, PowerInstantMilliwattsToWatts) {
  ConvertFn conv = ConvertOf(157);
  ASSERT_NE(conv, nullptr);
  nvmlFieldValue_t fv = Fv(NVML_FI_DEV_POWER_INSTANT, NVML_VALUE_TYPE_UNSIGNED_INT);
  fv.value.uiVal = 299437;
  auto r = conv(fv);
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(std::get<double>(*r), 299.437);
}

TEST(ConvertTest, EveryBatchedFieldConvertsAPlausibleUll) {
  for (const FieldDef& f : AllFields()) {
    if (f.convert == nullptr) continue;
    nvmlFieldValue_t fv = Fv(f.nvml_field_id, NVML_VALUE_TYPE_UNSIGNED_LONG_LONG);
    fv.value.ullVal = 42;
    auto r = f.convert(fv);
    ASSERT_TRUE(r.ok()) << f.name << ": " << r.status().ToString();
    if (f.kind == ValueKind::kDouble) {
      EXPECT_TRUE(std::holds_alternative<double>(*r)) << f.name;
    } else {
      EXPECT_TRUE(std::holds_alternative<int64_t>(*r)) << f.name;
    }
  }
}

TEST(HelpersTest, Units) {
  EXPECT_EQ(internal::BytesToMiB(1048576ULL * 1234 + 1048575), 1234);
  EXPECT_EQ(internal::BytesToMiB(1048575), 0);
  EXPECT_DOUBLE_EQ(internal::MilliwattsToWholeWatts(650500), 650.0);
  EXPECT_DOUBLE_EQ(internal::MilliwattsToWholeWatts(700000), 700.0);
  EXPECT_DOUBLE_EQ(internal::MilliwattsToWholeWatts(999), 0.0);
}

TEST(HelpersTest, BrandNames) {
  EXPECT_EQ(internal::BrandName(14), "NVIDIA");
  EXPECT_EQ(internal::BrandName(2), "Tesla");
  EXPECT_EQ(internal::BrandName(5), "GeForce");
  EXPECT_EQ(internal::BrandName(0), "Unknown");
  EXPECT_EQ(internal::BrandName(999), "Unknown");
}

TEST(HelpersTest, CounterRate) {
  // 2,000,000 KiB more over 2 s, /1000: 1000 "MB/s" as DCGM computes NVLINK_BANDWIDTH_TOTAL.
  EXPECT_EQ(internal::CounterRate(5000, 1'000'000, 2'005'000, 3'000'000, 1000.0), 1000);
  EXPECT_EQ(internal::CounterRate(0, 0, 1999, 1'000'000, 1000.0), 1);  // truncates
  EXPECT_EQ(internal::CounterRate(10, 0, 10, 1'000'000, 1000.0), 0);
  EXPECT_FALSE(internal::CounterRate(10, 5, 20, 5, 1000.0).has_value());         // no time passed
  EXPECT_FALSE(internal::CounterRate(10, 0, 5, 1'000'000, 1000.0).has_value());  // went back
}

}  // namespace
}  // namespace nvmlx::fields
