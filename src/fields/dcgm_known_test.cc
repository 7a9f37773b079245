// Table-driven over DCGM's whole field list (dcgm_field_list.inc): every name resolves, to a field
// we read or to a skipped one with its reason; names DCGM does not know resolve to nothing and get
// a suggestion.
#include "fields/dcgm_known.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fields/catalog.h"

namespace nvmlx::fields {
namespace {

// A catalog entry we collect: read by DeviceReader, host-wide, GPM, or one of the exporter/event
// fields the collector computes.
bool Served(const FieldDef& f) {
  if (!f.skip_reason.empty()) return false;
  switch (f.source) {
    case Source::kDevice:
      return f.read != nullptr || (f.nvml_field_id > 0 && f.convert != nullptr);
    case Source::kSystem:
      return f.read != nullptr;
    case Source::kProfiling:
      return f.gpm_metric_id > 0;
    case Source::kExporter:
    case Source::kEvent:
      return true;
  }
  return false;
}

TEST(DcgmKnownTest, TheListIsDcgmsWholeList) {
  // go-dcgm of dcgm-exporter 4.5.3-4.8.2 has 626 current and 99 legacy names; 4.6.1 adds more.
  EXPECT_GE(AllDcgmIds().size(), 620u);
  EXPECT_GE(AllDcgmNames().size(), 1000u);
  // Each name's id is in the id table; each id has its canonical name among the names.
  for (const DcgmFieldName& n : AllDcgmNames()) {
    EXPECT_NE(FindDcgmId(n.id), nullptr) << n.name;
  }
  for (const DcgmFieldId& d : AllDcgmIds()) {
    const DcgmFieldName* n = FindDcgmName(d.name);
    ASSERT_NE(n, nullptr) << d.name;
    EXPECT_EQ(n->id, d.id) << d.name;
  }
}

TEST(DcgmKnownTest, EveryDcgmNameIsServedOrSkippedWithAReason) {
  size_t served = 0, skipped = 0;
  for (const DcgmFieldName& n : AllDcgmNames()) {
    const FieldDef* f = FindByName(n.name);
    ASSERT_NE(f, nullptr) << n.name << " is a DCGM name and must resolve";
    EXPECT_EQ(f->id, n.id) << n.name;
    if (Served(*f)) {
      ++served;
      EXPECT_EQ(f, FindById(n.id)) << n.name << ": a served name resolves to the catalog row";
    } else {
      ++skipped;
      // Skipped: with the reason of its DCGM id, or a catalog row the daemon drops with its own
      // reason (a profiling field without GPM metric, a DCGM_EXP_* field not computed yet).
      EXPECT_TRUE(!f->skip_reason.empty() || f == FindById(n.id)) << n.name;
    }
  }
  EXPECT_GT(served, 200u);
  EXPECT_GT(skipped, 400u);
}

TEST(DcgmKnownTest, EveryCatalogIdIsADcgmIdOrAnExporterField) {
  for (const FieldDef& f : AllFields()) {
    if (f.source == Source::kExporter) continue;  // DCGM_EXP_* belong to dcgm-exporter
    EXPECT_NE(FindDcgmId(f.id), nullptr) << f.name << " (" << f.id << ") is not a DCGM id";
    EXPECT_TRUE(f.skip_reason.empty()) << f.name;
  }
}

struct ReasonCase {
  std::string_view name;
  std::string_view reason_part;
};

class SkipReasonTest : public ::testing::TestWithParam<ReasonCase> {};

TEST_P(SkipReasonTest, NamesWhatIsMissing) {
  const FieldDef* f = FindByName(GetParam().name);
  ASSERT_NE(f, nullptr) << GetParam().name;
  EXPECT_NE(f->skip_reason.find(GetParam().reason_part), std::string_view::npos)
      << GetParam().name << ": " << f->skip_reason;
}

INSTANTIATE_TEST_SUITE_P(
    Families, SkipReasonTest,
    ::testing::Values(ReasonCase{"DCGM_FI_DEV_NVSWITCH_TEMPERATURE_CURRENT", "NvSwitch"},
                      ReasonCase{"DCGM_FI_DEV_NVSWITCH_LINK_CRC_ERRORS_LANE7", "NvSwitch"},
                      ReasonCase{"DCGM_FI_DEV_CPU_UTIL_TOTAL", "Grace CPUs"},
                      ReasonCase{"DCGM_FI_DEV_CPU_TEMP_CURRENT", "Grace CPUs"},
                      ReasonCase{"DCGM_FI_DEV_CONNECTX_HEALTH", "ConnectX"},
                      ReasonCase{"DCGM_FI_DEV_DIAG_MEMORY_RESULT", "diagnostics"},
                      ReasonCase{"DCGM_FI_DEV_VGPU_UTILIZATIONS", "vGPU"},
                      ReasonCase{"DCGM_FI_FIRST_NVSWITCH_FIELD_ID", "range marker"},
                      ReasonCase{"DCGM_FI_UNKNOWN", "null field id"},
                      ReasonCase{"DCGM_FI_DEV_NVLINK_PPCNT_IBPC_PORT_XMIT_WAIT", "DCGM_FE_LINK"}));

// Every per-link NVLink error counter (4 families x 18 links) is a catalog row under its go-dcgm
// id, by either spelling, read with one dedicated call (nvmlDeviceGetNvLinkErrorCounter).
TEST(DcgmKnownTest, PerLinkNvlinkErrorCountersAreServed) {
  std::set<int> ids;
  for (int k = 0; k < 18; ++k) {
    const std::string l = std::to_string(k);
    for (const auto& [old_name, new_name] : std::vector<std::pair<std::string, std::string>>{
             {"DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_L" + l,
              "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_L" + l + "_TOTAL"},
             {"DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_L" + l,
              "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_L" + l + "_TOTAL"},
             {"DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_L" + l,
              "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_L" + l + "_TOTAL"},
             {"DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_L" + l,
              "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_L" + l + "_TOTAL"}}) {
      const FieldDef* f = FindByName(old_name);
      ASSERT_NE(f, nullptr) << old_name;
      EXPECT_EQ(FindByName(new_name), f) << new_name;
      EXPECT_EQ(f->name, old_name);
      EXPECT_TRUE(f->skip_reason.empty()) << old_name;
      EXPECT_NE(f->read, nullptr) << old_name;
      EXPECT_EQ(f->nvml_field_id, 0u) << old_name;
      EXPECT_EQ(f->kind, ValueKind::kInt64);
      const DcgmFieldName* d = FindDcgmName(old_name);
      ASSERT_NE(d, nullptr) << old_name;
      EXPECT_EQ(d->id, f->id) << old_name;
      ASSERT_NE(FindDcgmName(new_name), nullptr) << new_name;
      EXPECT_EQ(FindDcgmName(new_name)->id, f->id) << new_name;
      ids.insert(f->id);
    }
  }
  EXPECT_EQ(ids.size(), 72u);
  // The _TOTAL counters stay batched field values (FI 38/45/52/59 at the default scope).
  EXPECT_EQ(FindByName("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL")->nvml_field_id, 38u);
  EXPECT_EQ(FindByName("DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL")->nvml_field_id, 59u);
}

TEST(DcgmKnownTest, PerLinkNvlinkBandwidthIsServed) {
  std::set<int> ids;
  for (int k = 0; k < 18; ++k) {
    for (std::string family :
         {"DCGM_FI_DEV_NVLINK_BANDWIDTH_L", "DCGM_FI_DEV_NVLINK_THROUGHPUT_L",
          "DCGM_FI_DEV_NVLINK_TX_BANDWIDTH_L", "DCGM_FI_DEV_NVLINK_RX_BANDWIDTH_L"}) {
      const std::string name = family + std::to_string(k);
      const FieldDef* f = FindByName(name);
      ASSERT_NE(f, nullptr) << name;
      EXPECT_TRUE(f->skip_reason.empty()) << name;
      EXPECT_TRUE(f->rate) << name;
      EXPECT_EQ(f->nvml_scope_id, static_cast<unsigned>(k)) << name;
      // The go-dcgm id of the name (legacy or current) is the catalog row's id.
      const DcgmFieldName* d = FindDcgmName(name);
      ASSERT_NE(d, nullptr) << name;
      EXPECT_EQ(d->id, f->id) << name;
      ids.insert(f->id);
    }
  }
  EXPECT_EQ(ids.size(), 3u * 18u);  // BANDWIDTH and THROUGHPUT are one field
  const FieldDef* l0 = FindByName("DCGM_FI_DEV_NVLINK_BANDWIDTH_L0");
  ASSERT_NE(l0, nullptr);
  EXPECT_EQ(l0->id, 440);
  EXPECT_EQ(l0->nvml_field_id, 139u);          // RX
  EXPECT_EQ(l0->rate_partner_field_id, 138u);  // + TX
  const FieldDef* tx = FindByName("DCGM_FI_DEV_NVLINK_TX_BANDWIDTH_TOTAL");
  ASSERT_NE(tx, nullptr);
  EXPECT_EQ(tx->id, 843);
  EXPECT_EQ(tx->rate_partner_field_id, 0u);
  EXPECT_EQ(tx->nvml_scope_id, NVMLX_SCOPE_ALL_LINKS);
}

struct UnknownCase {
  std::string_view name;
  std::string_view suggestion;  // empty: none expected
};

class UnknownNameTest : public ::testing::TestWithParam<UnknownCase> {};

TEST_P(UnknownNameTest, IsUnknownWithSuggestion) {
  EXPECT_EQ(FindByName(GetParam().name), nullptr) << GetParam().name;
  EXPECT_EQ(SuggestName(GetParam().name), GetParam().suggestion) << GetParam().name;
}

INSTANTIATE_TEST_SUITE_P(
    Typos, UnknownNameTest,
    ::testing::Values(
        UnknownCase{"DCGM_FI_DEV_GPU_UTL", "DCGM_FI_DEV_GPU_UTIL"},
        UnknownCase{"DCGM_FI_DEV_NVSWITCH_TEMPERATURE_CURENT",
                    "DCGM_FI_DEV_NVSWITCH_TEMPERATURE_CURRENT"},
        UnknownCase{"DCGM_FI_DEV_CPU_UTIL_TOTL", "DCGM_FI_DEV_CPU_UTIL_TOTAL"},
        UnknownCase{"dcgm_fi_dev_gpu_util", "DCGM_FI_DEV_GPU_UTIL"},  // names are case-sensitive
        UnknownCase{"DCGM_FI_DEV_NVLINK_BANDWIDTH_L18", "DCGM_FI_DEV_NVLINK_BANDWIDTH_L1"},
        UnknownCase{"not_a_field_at_all", ""}));

}  // namespace
}  // namespace nvmlx::fields
