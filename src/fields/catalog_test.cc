#include "fields/catalog.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>

#include "fields/field_ids.h"

namespace nvmlx::fields {
namespace {

TEST(CatalogTest, NamedIdsMatchTheirEntries) {
  const std::pair<int, std::string_view> named[] = {
      {ids::kBar1Total, "DCGM_FI_DEV_BAR1_TOTAL"},
      {ids::kBar1Used, "DCGM_FI_DEV_BAR1_USED"},
      {ids::kBar1Free, "DCGM_FI_DEV_BAR1_FREE"},
      {ids::kGpuUtil, "DCGM_FI_DEV_GPU_UTIL"},
      {ids::kXidErrors, "DCGM_FI_DEV_XID_ERRORS"},
      {ids::kFbTotal, "DCGM_FI_DEV_FB_TOTAL"},
      {ids::kFbFree, "DCGM_FI_DEV_FB_FREE"},
      {ids::kFbUsed, "DCGM_FI_DEV_FB_USED"},
      {ids::kFbReserved, "DCGM_FI_DEV_FB_RESERVED"},
      {ids::kFbUsedPercent, "DCGM_FI_DEV_FB_USED_PERCENT"},
      {ids::kBar1CapacityBytes, "DCGM_FI_DEV_BAR1_CAPACITY_BYTES"},
      {ids::kBar1UsedBytes, "DCGM_FI_DEV_BAR1_USED_BYTES"},
      {ids::kBar1FreeBytes, "DCGM_FI_DEV_BAR1_FREE_BYTES"},
      {ids::kFbCapacityBytes, "DCGM_FI_DEV_FB_CAPACITY_BYTES"},
      {ids::kFbFreeBytes, "DCGM_FI_DEV_FB_FREE_BYTES"},
      {ids::kFbUsedBytes, "DCGM_FI_DEV_FB_USED_BYTES"},
      {ids::kFbReservedBytes, "DCGM_FI_DEV_FB_RESERVED_BYTES"},
      {ids::kXidErrorsCount, "DCGM_EXP_XID_ERRORS_COUNT"},
      {ids::kClockEventsCount, "DCGM_EXP_CLOCK_EVENTS_COUNT"},
      {ids::kGpuHealthStatus, "DCGM_EXP_GPU_HEALTH_STATUS"},
      {ids::kP2pStatus, "DCGM_EXP_P2P_STATUS"},
      {ids::kXidErrorsTotal, "DCGM_EXP_XID_ERRORS_TOTAL"},
      {ids::kClockEventsTotal, "DCGM_EXP_CLOCK_EVENTS_TOTAL"},
      {ids::kClocksEventReasons, "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"},
      {ids::kGpuTemp, "DCGM_FI_DEV_GPU_TEMP"},
      {ids::kPowerUsage, "DCGM_FI_DEV_POWER_USAGE"},
      {ids::kGrEngineActive, "DCGM_FI_PROF_GR_ENGINE_ACTIVE"},
      {ids::kTensorActive, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"},
      {ids::kDramActive, "DCGM_FI_PROF_DRAM_ACTIVE"},
  };
  for (const auto& [id, name] : named) {
    const FieldDef* f = FindById(id);
    ASSERT_NE(f, nullptr) << name;
    EXPECT_EQ(f->name, name);
  }
}

TEST(CatalogTest, IdsAscendingAndUnique) {
  auto all = AllFields();
  ASSERT_FALSE(all.empty());
  for (size_t i = 1; i < all.size(); ++i) {
    EXPECT_LT(all[i - 1].id, all[i].id) << all[i].name;
  }
}

TEST(CatalogTest, NamesUniqueAcrossCanonicalNewAndAliases) {
  std::set<std::string_view> seen;
  for (const FieldDef& f : AllFields()) {
    ASSERT_FALSE(f.name.empty()) << f.id;
    EXPECT_TRUE(seen.insert(f.name).second) << f.name;
    if (!f.new_name.empty()) {
      EXPECT_NE(f.new_name, f.name) << f.id;
      EXPECT_TRUE(seen.insert(f.new_name).second) << f.new_name;
    }
  }
  for (const FieldAlias& a : AllAliases()) {
    EXPECT_TRUE(seen.insert(a.name).second) << a.name;
    EXPECT_NE(FindById(a.id), nullptr) << a.name;
  }
  for (const TwinName& t : AllTwinNames()) EXPECT_TRUE(seen.insert(t.name).second) << t.name;
}

TEST(CatalogTest, EveryDeviceFieldHasExactlyOneWayToBeRead) {
  for (const FieldDef& f : AllFields()) {
    const bool batched = f.nvml_field_id > 0 && f.convert != nullptr;
    const bool direct = f.read != nullptr;
    if (f.source == Source::kDevice) {
      EXPECT_NE(batched, direct) << f.name;
      if (direct) {
        EXPECT_EQ(f.nvml_field_id, 0u) << f.name;
      }
      if (f.rate_partner_field_id > 0) {
        EXPECT_TRUE(batched) << f.name;
      }
    } else if (f.source == Source::kSystem) {
      EXPECT_TRUE(direct && !batched) << f.name;
    } else {
      EXPECT_FALSE(batched || direct) << f.name << " is read elsewhere";
    }
    EXPECT_FALSE(f.help.empty()) << f.name;
    EXPECT_TRUE(f.name.starts_with("DCGM_FI_") || f.name.starts_with("DCGM_EXP_")) << f.name;
    EXPECT_EQ(f.source == Source::kProfiling, f.id > 1000 && f.id < 1100) << f.name;
    EXPECT_EQ(f.source == Source::kExporter, f.id >= 9001 && f.id <= 9006) << f.name;
    if (f.kind == ValueKind::kString) {
      EXPECT_TRUE(f.unit.empty()) << f.name;
    }
  }
}

TEST(CatalogTest, ContainsTheShippedCsvAndCommentedOutFields) {
  // default-counters.csv / dcp-metrics-included.csv, then the commented-out rows and labels.
  constexpr std::string_view kNames[] = {
      "DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_MEM_CLOCK", "DCGM_FI_DEV_MEMORY_TEMP",
      "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
      "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_MEM_COPY_UTIL",
      "DCGM_FI_DEV_ENC_UTIL", "DCGM_FI_DEV_DEC_UTIL", "DCGM_FI_DEV_XID_ERRORS",
      "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_RESERVED",
      "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "DCGM_FI_DEV_VGPU_LICENSE_STATUS",
      "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
      "DCGM_FI_DEV_ROW_REMAP_FAILURE", "DCGM_FI_DRIVER_VERSION", "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
      "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_PROF_DRAM_ACTIVE", "DCGM_FI_PROF_PCIE_TX_BYTES",
      "DCGM_FI_PROF_PCIE_RX_BYTES",
      // Commented out in the shipped CSV.
      "DCGM_FI_DEV_POWER_VIOLATION", "DCGM_FI_DEV_THERMAL_VIOLATION",
      "DCGM_FI_DEV_SYNC_BOOST_VIOLATION", "DCGM_FI_DEV_BOARD_LIMIT_VIOLATION",
      "DCGM_FI_DEV_LOW_UTIL_VIOLATION", "DCGM_FI_DEV_RELIABILITY_VIOLATION",
      "DCGM_FI_DEV_TOTAL_APP_CLOCKS_VIOLATION", "DCGM_FI_DEV_TOTAL_BASE_CLOCKS_VIOLATION",
      "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
      "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", "DCGM_FI_DEV_RETIRED_SBE",
      "DCGM_FI_DEV_RETIRED_DBE", "DCGM_FI_DEV_RETIRED_PENDING",
      "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL",
      "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL",
      "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL",
      "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", "DCGM_FI_DEV_PCIE_MAX_LINK_GEN",
      "DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH", "DCGM_FI_DEV_PCIE_LINK_GEN", "DCGM_FI_DEV_PCIE_LINK_WIDTH",
      "DCGM_FI_DEV_POWER_MGMT_LIMIT", "DCGM_FI_DEV_POWER_MGMT_LIMIT_MIN",
      "DCGM_FI_DEV_POWER_MGMT_LIMIT_MAX", "DCGM_FI_DEV_POWER_MGMT_LIMIT_DEF",
      "DCGM_FI_DEV_ENFORCED_POWER_LIMIT", "DCGM_FI_DEV_FAN_SPEED",
      "DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "DCGM_FI_DEV_PSTATE", "DCGM_FI_DEV_FB_TOTAL",
      "DCGM_FI_DEV_MAX_SM_CLOCK", "DCGM_FI_DEV_MAX_MEM_CLOCK", "DCGM_FI_DEV_VIDEO_CLOCK",
      "DCGM_FI_DEV_PCIE_TX_THROUGHPUT", "DCGM_FI_DEV_PCIE_RX_THROUGHPUT", "DCGM_FI_PROF_SM_ACTIVE",
      "DCGM_FI_PROF_SM_OCCUPANCY", "DCGM_FI_PROF_PIPE_FP64_ACTIVE", "DCGM_FI_PROF_PIPE_FP32_ACTIVE",
      "DCGM_FI_PROF_PIPE_FP16_ACTIVE",
      // Labels.
      "DCGM_FI_NVML_VERSION", "DCGM_FI_DEV_NAME", "DCGM_FI_DEV_BRAND", "DCGM_FI_DEV_SERIAL",
      "DCGM_FI_DEV_UUID", "DCGM_FI_DEV_MINOR_NUMBER", "DCGM_FI_DEV_OEM_INFOROM_VER",
      "DCGM_FI_DEV_ECC_INFOROM_VER", "DCGM_FI_DEV_POWER_INFOROM_VER",
      "DCGM_FI_DEV_INFOROM_IMAGE_VER", "DCGM_FI_DEV_VBIOS_VERSION", "DCGM_FI_DEV_PCI_BUSID",
      // Exporter counters.
      "DCGM_EXP_XID_ERRORS_COUNT", "DCGM_EXP_CLOCK_EVENTS_COUNT", "DCGM_EXP_GPU_HEALTH_STATUS",
      "DCGM_EXP_P2P_STATUS", "DCGM_EXP_XID_ERRORS_TOTAL", "DCGM_EXP_CLOCK_EVENTS_TOTAL"};
  for (std::string_view n : kNames) {
    const FieldDef* f = FindByName(n);
    ASSERT_NE(f, nullptr) << n;
    EXPECT_EQ(f->name, n) << "canonical (old) name expected";
  }
  // Every PROF id of docs/nvml.md §3.
  for (int id = 1001; id <= 1096; ++id) {
    if (id >= 1035 && id <= 1039) continue;  // unassigned in dcgm_fields.h
    const FieldDef* f = FindById(id);
    ASSERT_NE(f, nullptr) << id;
    EXPECT_EQ(f->source, Source::kProfiling);
    EXPECT_EQ(f->read, nullptr);
  }
}

TEST(CatalogTest, TypesUnitsAndCosts) {
  EXPECT_EQ(FindById(155)->kind, ValueKind::kDouble);  // POWER_USAGE W
  EXPECT_EQ(FindById(160)->kind, ValueKind::kDouble);  // POWER_MGMT_LIMIT, DCGM type double
  EXPECT_EQ(FindById(203)->kind, ValueKind::kInt64);   // GPU_UTIL stays percent
  EXPECT_EQ(FindById(203)->unit, "%");
  EXPECT_EQ(FindById(1001)->kind, ValueKind::kDouble);
  EXPECT_EQ(FindById(1009)->kind, ValueKind::kInt64);
  EXPECT_EQ(FindById(51)->kind, ValueKind::kString);
  EXPECT_EQ(FindById(1)->source, Source::kSystem);
  EXPECT_EQ(FindById(2)->source, Source::kSystem);
  EXPECT_EQ(FindById(230)->source, Source::kEvent);
  for (int id : {156, 200, 201, 202, 240, 241, 242, 243, 244, 245, 246, 247}) {
    EXPECT_EQ(FindById(id)->cost, Cost::kSlow) << id;
  }
  for (int id : {100, 101, 140, 150, 155, 203, 252}) {
    EXPECT_EQ(FindById(id)->cost, Cost::kFast) << id;
  }
  // Easy to swap (docs/nvml.md §2); we read them through nvmlDeviceGetRemappedRows.
  EXPECT_NE(FindById(393)->read, FindById(394)->read);
  EXPECT_EQ(FindById(140)->nvml_field_id, NVML_FI_DEV_MEMORY_TEMP);
  EXPECT_EQ(FindById(1422)->nvml_field_id, 269u);
  EXPECT_EQ(FindById(1424)->nvml_field_id, 271u);
  const FieldDef* bw = FindById(449);
  EXPECT_EQ(bw->nvml_field_id, 139u);
  EXPECT_EQ(bw->rate_partner_field_id, 138u);
  EXPECT_EQ(bw->nvml_scope_id, NVMLX_SCOPE_ALL_LINKS);
  EXPECT_DOUBLE_EQ(bw->rate_divisor, 1000.0);
}

// The DCGM 4.7 base-unit names are read (not "metric not enabled"), each next to its older twin,
// which keeps its unit (reader_test checks the values against the simulator).
TEST(CatalogTest, BaseUnitFieldsAreReadBesideTheirOlderTwins) {
  struct Twin {
    std::string_view old_name, old_unit, new_name, new_unit;
  };
  const Twin twins[] = {
      {"DCGM_FI_DEV_BAR1_TOTAL", "MiB", "DCGM_FI_DEV_BAR1_CAPACITY_BYTES", "B"},
      {"DCGM_FI_DEV_BAR1_USED", "MiB", "DCGM_FI_DEV_BAR1_USED_BYTES", "B"},
      {"DCGM_FI_DEV_BAR1_FREE", "MiB", "DCGM_FI_DEV_BAR1_FREE_BYTES", "B"},
      {"DCGM_FI_DEV_SM_CLOCK", "MHz", "DCGM_FI_DEV_SM_CLOCK_HERTZ", "Hz"},
      {"DCGM_FI_DEV_MEM_CLOCK", "MHz", "DCGM_FI_DEV_MEMORY_CLOCK_HERTZ", "Hz"},
      {"DCGM_FI_DEV_VIDEO_CLOCK", "MHz", "DCGM_FI_DEV_VIDEO_CLOCK_HERTZ", "Hz"},
      {"DCGM_FI_DEV_MAX_SM_CLOCK", "MHz", "DCGM_FI_DEV_SM_MAX_CLOCK_HERTZ", "Hz"},
      {"DCGM_FI_DEV_MAX_MEM_CLOCK", "MHz", "DCGM_FI_DEV_MEMORY_MAX_CLOCK_HERTZ", "Hz"},
      {"DCGM_FI_DEV_MAX_VIDEO_CLOCK", "MHz", "DCGM_FI_DEV_VIDEO_MAX_CLOCK_HERTZ", "Hz"},
      {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "mJ", "DCGM_FI_DEV_GPU_ENERGY_JOULES_TOTAL", "J"},
      {"DCGM_FI_DEV_FAN_SPEED", "%", "DCGM_FI_DEV_FAN_SPEED_RATIO", "ratio"},
      {"DCGM_FI_DEV_GPU_UTIL", "%", "DCGM_FI_DEV_GPU_UTIL_RATIO_V2", "ratio"},
      {"DCGM_FI_DEV_MEM_COPY_UTIL", "%", "DCGM_FI_DEV_MEMORY_UTIL_RATIO", "ratio"},
      {"DCGM_FI_DEV_ENC_UTIL", "%", "DCGM_FI_DEV_ENC_UTIL_RATIO", "ratio"},
      {"DCGM_FI_DEV_DEC_UTIL", "%", "DCGM_FI_DEV_DEC_UTIL_RATIO", "ratio"},
      {"DCGM_FI_DEV_POWER_VIOLATION", "ns", "DCGM_FI_DEV_GPU_POWER_THROTTLE_SECONDS_TOTAL", "s"},
      {"DCGM_FI_DEV_THERMAL_VIOLATION", "ns", "DCGM_FI_DEV_GPU_THERMAL_THROTTLE_SECONDS_TOTAL",
       "s"},
      {"DCGM_FI_DEV_SYNC_BOOST_VIOLATION", "ns",
       "DCGM_FI_DEV_GPU_SYNC_BOOST_THROTTLE_SECONDS_TOTAL", "s"},
      {"DCGM_FI_DEV_BOARD_LIMIT_VIOLATION", "ns", "DCGM_FI_DEV_GPU_LIMIT_THROTTLE_SECONDS_TOTAL",
       "s"},
      {"DCGM_FI_DEV_LOW_UTIL_VIOLATION", "ns", "DCGM_FI_DEV_GPU_LOW_UTIL_THROTTLE_SECONDS_TOTAL",
       "s"},
      {"DCGM_FI_DEV_RELIABILITY_VIOLATION", "ns",
       "DCGM_FI_DEV_GPU_RELIABILITY_THROTTLE_SECONDS_TOTAL", "s"},
      {"DCGM_FI_DEV_TOTAL_APP_CLOCKS_VIOLATION", "ns", "DCGM_FI_DEV_GPU_APP_THROTTLE_SECONDS_TOTAL",
       "s"},
      {"DCGM_FI_DEV_TOTAL_BASE_CLOCKS_VIOLATION", "ns",
       "DCGM_FI_DEV_GPU_BASE_THROTTLE_SECONDS_TOTAL", "s"},
      {"DCGM_FI_DEV_FB_TOTAL", "MiB", "DCGM_FI_DEV_FB_CAPACITY_BYTES", "B"},
      {"DCGM_FI_DEV_FB_FREE", "MiB", "DCGM_FI_DEV_FB_FREE_BYTES", "B"},
      {"DCGM_FI_DEV_FB_USED", "MiB", "DCGM_FI_DEV_FB_USED_BYTES", "B"},
      {"DCGM_FI_DEV_FB_RESERVED", "MiB", "DCGM_FI_DEV_FB_RESERVED_BYTES", "B"},
      {"DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "MB/s",
       "DCGM_FI_DEV_NVLINK_THROUGHPUT_BYTES_PER_SECOND", "B/s"},
      {"DCGM_FI_DEV_NVLINK_BANDWIDTH_L0", "MB/s",
       "DCGM_FI_DEV_NVLINK_THROUGHPUT_L0_BYTES_PER_SECOND", "B/s"},
      {"DCGM_FI_DEV_NVLINK_BANDWIDTH_L17", "MB/s",
       "DCGM_FI_DEV_NVLINK_THROUGHPUT_L17_BYTES_PER_SECOND", "B/s"},
  };
  for (const Twin& t : twins) {
    const FieldDef* o = FindByName(t.old_name);
    const FieldDef* n = FindByName(t.new_name);
    ASSERT_NE(o, nullptr) << t.old_name;
    ASSERT_NE(n, nullptr) << t.new_name;
    EXPECT_NE(o->id, n->id) << t.new_name;
    EXPECT_TRUE(o->skip_reason.empty()) << t.old_name;
    EXPECT_TRUE(n->skip_reason.empty()) << t.new_name << ": " << n->skip_reason;
    EXPECT_EQ(o->unit, t.old_unit) << t.old_name;
    EXPECT_EQ(n->unit, t.new_unit) << t.new_name;
    EXPECT_GE(n->id, 1600) << t.new_name;
    // Same NVML source: the batched field id, or the rate counters, or a dedicated call.
    EXPECT_EQ(n->nvml_field_id, o->nvml_field_id) << t.new_name;
    EXPECT_EQ(n->rate, o->rate) << t.new_name;
    EXPECT_EQ(n->nvml_scope_id, o->nvml_scope_id) << t.new_name;
    EXPECT_EQ(n->read == nullptr, o->read == nullptr) << t.new_name;
    EXPECT_EQ(n->cost, o->cost) << t.new_name;
    if (n->rate) {
      // (delta KiB / s) / divisor: the factor between the two divisors.
      EXPECT_DOUBLE_EQ(o->rate_divisor / n->rate_divisor, 1000.0 * 1024.0) << t.new_name;
    }
  }
  // Fabric health (dcgm-exporter 4.8.4 opt-in) is read too.
  EXPECT_TRUE(FindByName("DCGM_FI_DEV_FABRIC_HEALTH_MASK")->skip_reason.empty());
  EXPECT_TRUE(FindByName("DCGM_FI_DEV_FABRIC_HEALTH_SUMMARY")->skip_reason.empty());
  // Known to DCGM 4.7 but without an NVML source here: skipped with a reason.
  for (std::string_view n : {"DCGM_FI_DEV_SM_APP_CLOCK_HERTZ", "DCGM_FI_DEV_VGPU_FB_USED_BYTES",
                             "DCGM_FI_DEV_C2C_MAX_BANDWIDTH_BYTES_PER_SECOND"}) {
    const FieldDef* f = FindByName(n);
    ASSERT_NE(f, nullptr) << n;
    EXPECT_FALSE(f->skip_reason.empty()) << n;
  }
}

TEST(CatalogTest, FindByIdMisses) {
  EXPECT_EQ(FindById(0), nullptr);
  EXPECT_EQ(FindById(52), nullptr);
  EXPECT_EQ(FindById(99999), nullptr);
  EXPECT_EQ(FindById(-1), nullptr);
}

TEST(CatalogTest, FindByNameResolvesCanonicalNewAndLegacy) {
  EXPECT_EQ(FindByName("DCGM_FI_DEV_GPU_TEMP")->id, 150);
  EXPECT_EQ(FindByName("DCGM_FI_DEV_GPU_TEMP_CELSIUS")->id, 150);
  EXPECT_EQ(FindByName("dcgm_gpu_temp")->id, 150);
  EXPECT_EQ(FindByName("DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO")->id, 1001);
  // DCGM 4.6.1 named 203 GPU_UTIL_RATIO; 4.7 moved the name to the ratio field 1613.
  EXPECT_EQ(FindByName("DCGM_FI_DEV_GPU_UTIL_RATIO")->id, 1613);
  EXPECT_EQ(FindByName("DCGM_FI_DEV_GPU_UTIL_RATIO_V2")->id, 1613);
  EXPECT_EQ(FindByName("DCGM_FI_DEV_BOARD_POWER_WATTS")->id, 155);
  EXPECT_EQ(FindByName("DCGM_FI_DEV_NVLINK_THROUGHPUT_TOTAL")->id, 449);
  EXPECT_EQ(FindByName("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS")->id, 112);
  EXPECT_EQ(FindByName("DCGM_FI_SYSTEM_DRIVER_VERSION")->id, 1);
  EXPECT_EQ(FindByName("dcgm_sm_clock")->id, 100);
  EXPECT_EQ(FindByName("dcgm_mem_clock")->id, 101);
  EXPECT_EQ(FindByName("dcgm_memory_clock")->id, 101);
  EXPECT_EQ(FindByName("dcgm_power_usage")->id, 155);
  EXPECT_EQ(FindByName("dcgm_gpu_utilization")->id, 203);
  EXPECT_EQ(FindByName("dcgm_mem_copy_utilization")->id, 204);
  EXPECT_EQ(FindByName("dcgm_enc_utilization")->id, 206);
  EXPECT_EQ(FindByName("dcgm_dec_utilization")->id, 207);
  EXPECT_EQ(FindByName("dcgm_fb_free")->id, 251);
  EXPECT_EQ(FindByName("dcgm_fb_used")->id, 252);
  EXPECT_EQ(FindByName("dcgm_xid_errors")->id, 230);
  EXPECT_EQ(FindByName("dcgm_pcie_replay_counter")->id, 202);
  EXPECT_EQ(FindByName("DCGM_EXP_GPU_HEALTH_STATUS")->id, 9003);
  // Exact and case-sensitive.
  EXPECT_EQ(FindByName("dcgm_fi_dev_gpu_temp"), nullptr);
  EXPECT_EQ(FindByName("DCGM_FI_DEV_GPU_TEMP "), nullptr);
  EXPECT_EQ(FindByName(""), nullptr);
}

TEST(CatalogTest, SuggestName) {
  EXPECT_EQ(SuggestName("DCGM_FI_DEV_GPU_UTL"), "DCGM_FI_DEV_GPU_UTIL");
  EXPECT_EQ(SuggestName("dcgm_fi_dev_gpu_temp"), "DCGM_FI_DEV_GPU_TEMP");
  EXPECT_EQ(SuggestName("DCGM_FI_DEV_FB_USD"), "DCGM_FI_DEV_FB_USED");
  EXPECT_EQ(SuggestName("dcgm_sm_clok"), "dcgm_sm_clock");
  EXPECT_EQ(SuggestName("DCGM_FI_PROF_GR_ENGINE_ACTIV"), "DCGM_FI_PROF_GR_ENGINE_ACTIVE");
  EXPECT_EQ(SuggestName("completely_unrelated"), "");
  EXPECT_EQ(SuggestName("foo"), "");
  EXPECT_EQ(SuggestName(""), "");
}

TEST(CatalogTest, GpmMappingAndConversions) {
  const FieldDef* gr = FindById(1001);
  ASSERT_NE(gr, nullptr);
  EXPECT_EQ(gr->source, Source::kProfiling);
  EXPECT_EQ(gr->gpm_metric_id, 1u);
  Result<model::Value> v = FromGpm(*gr, 99.9);
  ASSERT_TRUE(v.ok());
  EXPECT_DOUBLE_EQ(std::get<double>(*v), 0.999) << "percent / 100 -> ratio";
  EXPECT_EQ(FindById(1004)->gpm_metric_id, 5u) << "PIPE_TENSOR_ACTIVE is ANY_TENSOR_UTIL";
  EXPECT_EQ(FindById(1005)->gpm_metric_id, 10u);

  const FieldDef* pcie_tx = FindById(1009);
  EXPECT_EQ(pcie_tx->gpm_metric_id, 20u);
  v = FromGpm(*pcie_tx, 2.5);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(std::get<int64_t>(*v), 2621440) << "MiB/s * 1048576 -> B/s, an integer";
  v = FromGpm(*pcie_tx, 1.0000001);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(std::get<int64_t>(*v), 1048576) << "truncated";

  // The header has NVLink RX (60) before TX (61); DCGM's TX field comes first.
  EXPECT_EQ(FindById(1011)->gpm_metric_id, 61u);
  EXPECT_EQ(FindById(1012)->gpm_metric_id, 60u);
  EXPECT_EQ(FindById(1040)->gpm_metric_id, 63u) << "L0 TX";
  EXPECT_EQ(FindById(1041)->gpm_metric_id, 62u) << "L0 RX";
  EXPECT_EQ(FindById(1075)->gpm_metric_id, 96u) << "L17 RX";
  EXPECT_EQ(FindById(1077)->gpm_metric_id, 102u) << "C2C TX data";

  // Every PROF field has a GPM id; nothing else does.
  for (const FieldDef& f : AllFields()) {
    EXPECT_EQ(f.source == Source::kProfiling, f.gpm_metric_id > 0) << f.name;
  }
  EXPECT_FALSE(FromGpm(*FindById(203), 1).ok()) << "not a GPM field";
  EXPECT_FALSE(FromGpm(*gr, -1).ok());
}

// dcgm-exporter 4.10.0's renames (its release notes): same unit, served as the older field, so a
// 4.10 collectors file loads and each name reads exactly what its twin reads.
TEST(CatalogTest, TwinNamesAreServedAsTheirOlderTwins) {
  const std::pair<std::string_view, std::string_view> renames[] = {
      {"DCGM_FI_PROF_PCIE_TX_BYTES_PER_SECOND", "DCGM_FI_PROF_PCIE_TX_BYTES"},
      {"DCGM_FI_PROF_PCIE_RX_BYTES_PER_SECOND", "DCGM_FI_PROF_PCIE_RX_BYTES"},
      {"DCGM_FI_PROF_NVLINK_TX_BYTES_PER_SECOND", "DCGM_FI_PROF_NVLINK_TX_BYTES"},
      {"DCGM_FI_PROF_NVLINK_RX_BYTES_PER_SECOND", "DCGM_FI_PROF_NVLINK_RX_BYTES"},
  };
  for (const auto& [name, twin] : renames) {
    const FieldDef* f = FindByName(name);
    ASSERT_NE(f, nullptr) << name;
    EXPECT_EQ(f, FindByName(twin)) << name;
    EXPECT_EQ(f->unit, "B/s") << name;
    EXPECT_EQ(f->source, Source::kProfiling) << name;
    EXPECT_GT(f->gpm_metric_id, 0u) << name;
    EXPECT_TRUE(f->skip_reason.empty()) << name;
  }
  EXPECT_EQ(AllTwinNames().size(), std::size(renames));
  // Every twin is a name the catalog reads, not another twin.
  for (const TwinName& t : AllTwinNames()) {
    const FieldDef* f = FindByName(t.twin);
    ASSERT_NE(f, nullptr) << t.twin;
    EXPECT_TRUE(f->name == t.twin || f->new_name == t.twin) << t.twin;
  }
  // A typo of one still gets its suggestion.
  EXPECT_EQ(SuggestName("DCGM_FI_PROF_PCIE_TX_BYTES_PER_SECON"),
            "DCGM_FI_PROF_PCIE_TX_BYTES_PER_SECOND");
}

TEST(CatalogTest, UnknownNameFieldReadsNothingAndIsNeverFound) {
  const FieldDef* u = UnknownNameField();
  ASSERT_NE(u, nullptr);
  EXPECT_TRUE(IsUnknownName(*u));
  EXPECT_FALSE(u->skip_reason.empty());
  EXPECT_EQ(u->read, nullptr);
  EXPECT_EQ(u->nvml_field_id, 0u);
  EXPECT_EQ(u->gpm_metric_id, 0u);
  EXPECT_EQ(FindByName("DCGM_FI_DEV_FROM_A_FUTURE_RELEASE"), nullptr);
  for (const FieldDef& f : AllFields()) EXPECT_FALSE(IsUnknownName(f)) << f.name;
}

}  // namespace
}  // namespace nvmlx::fields
