// Per-link NVLink fields of the catalog, built here rather than spelled out row by row in
// catalog.cc:
//  - the rate fields (DCGM_FI_DEV_NVLINK_BANDWIDTH_L<k>, TX_ and RX_ per link and their TX/RX
//    totals): 18 links x 3 families;
//  - the error counters (DCGM_FI_DEV_NVLINK_{CRC_FLIT,CRC_DATA,REPLAY,RECOVERY}_ERROR_COUNT_L<k>):
//    18 links x 4 families, each one nvmlDeviceGetNvLinkErrorCounter(link, counter) call, as
//    DCGM's cache manager reads them (its TryGetNvLinkErrorFieldInfo / ReadAndCacheNvLinkData).
//    The raw counter is the value; a link that answers an error (NOT_SUPPORTED without NVLink,
//    INVALID_ARGUMENT past the GPU's last link) has no series, as DCGM's blank values.
//
// The rate fields: DCGM reads each the way it reads NVLINK_BANDWIDTH_TOTAL (docs/nvml.md,
// docs/dcgm-fields.md): nvmlDeviceGetFieldValues with NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX and/or
// _TX (KiB counters) at scopeId = the link (UINT_MAX for the totals), the difference to the
// previous sample divided by the elapsed seconds and by 1000.
//
// Internal to fields/ (catalog.cc merges these rows into its table). Compile-time constants.
#ifndef NVML_EXPORTER_FIELDS_CATALOG_NVLINK_H_
#define NVML_EXPORTER_FIELDS_CATALOG_NVLINK_H_

#include <array>
#include <cstddef>
#include <string_view>
#include <utility>

#include "fields/catalog.h"
#include "fields/conversions.h"

namespace nvmlx::fields::internal {

inline constexpr unsigned kNvlinkLinks = 18;  // DCGM's per-link fields stop at L17 (H200: 18)

// DCGM ids of NVLINK_BANDWIDTH_L<k> (= NVLINK_THROUGHPUT_L<k>): four blocks in dcgm_fields.h.
constexpr int NvlinkBandwidthId(unsigned k) {
  return k < 6    ? 440 + static_cast<int>(k)        // L0-L5
         : k < 12 ? 475 + static_cast<int>(k) - 6    // L6-L11
         : k < 15 ? 446 + static_cast<int>(k) - 12   // L12-L14
                  : 494 + static_cast<int>(k) - 15;  // L15-L17
}
constexpr int NvlinkTxId(unsigned k) { return 825 + static_cast<int>(k); }  // TX_BANDWIDTH_L<k>
constexpr int NvlinkRxId(unsigned k) { return 879 + static_cast<int>(k); }  // RX_BANDWIDTH_L<k>
inline constexpr int kNvlinkTxTotalId = 843;
inline constexpr int kNvlinkRxTotalId = 897;

// The spellings: dcgm-exporter's files use the BANDWIDTH names (legacy in go-dcgm), DCGM 4.5+
// calls them THROUGHPUT.
inline constexpr std::string_view kBandwidthNames[kNvlinkLinks] = {
    "DCGM_FI_DEV_NVLINK_BANDWIDTH_L0",  "DCGM_FI_DEV_NVLINK_BANDWIDTH_L1",
    "DCGM_FI_DEV_NVLINK_BANDWIDTH_L2",  "DCGM_FI_DEV_NVLINK_BANDWIDTH_L3",
    "DCGM_FI_DEV_NVLINK_BANDWIDTH_L4",  "DCGM_FI_DEV_NVLINK_BANDWIDTH_L5",
    "DCGM_FI_DEV_NVLINK_BANDWIDTH_L6",  "DCGM_FI_DEV_NVLINK_BANDWIDTH_L7",
    "DCGM_FI_DEV_NVLINK_BANDWIDTH_L8",  "DCGM_FI_DEV_NVLINK_BANDWIDTH_L9",
    "DCGM_FI_DEV_NVLINK_BANDWIDTH_L10", "DCGM_FI_DEV_NVLINK_BANDWIDTH_L11",
    "DCGM_FI_DEV_NVLINK_BANDWIDTH_L12", "DCGM_FI_DEV_NVLINK_BANDWIDTH_L13",
    "DCGM_FI_DEV_NVLINK_BANDWIDTH_L14", "DCGM_FI_DEV_NVLINK_BANDWIDTH_L15",
    "DCGM_FI_DEV_NVLINK_BANDWIDTH_L16", "DCGM_FI_DEV_NVLINK_BANDWIDTH_L17"};
inline constexpr std::string_view kThroughputNames[kNvlinkLinks] = {
    "DCGM_FI_DEV_NVLINK_THROUGHPUT_L0",  "DCGM_FI_DEV_NVLINK_THROUGHPUT_L1",
    "DCGM_FI_DEV_NVLINK_THROUGHPUT_L2",  "DCGM_FI_DEV_NVLINK_THROUGHPUT_L3",
    "DCGM_FI_DEV_NVLINK_THROUGHPUT_L4",  "DCGM_FI_DEV_NVLINK_THROUGHPUT_L5",
    "DCGM_FI_DEV_NVLINK_THROUGHPUT_L6",  "DCGM_FI_DEV_NVLINK_THROUGHPUT_L7",
    "DCGM_FI_DEV_NVLINK_THROUGHPUT_L8",  "DCGM_FI_DEV_NVLINK_THROUGHPUT_L9",
    "DCGM_FI_DEV_NVLINK_THROUGHPUT_L10", "DCGM_FI_DEV_NVLINK_THROUGHPUT_L11",
    "DCGM_FI_DEV_NVLINK_THROUGHPUT_L12", "DCGM_FI_DEV_NVLINK_THROUGHPUT_L13",
    "DCGM_FI_DEV_NVLINK_THROUGHPUT_L14", "DCGM_FI_DEV_NVLINK_THROUGHPUT_L15",
    "DCGM_FI_DEV_NVLINK_THROUGHPUT_L16", "DCGM_FI_DEV_NVLINK_THROUGHPUT_L17"};
inline constexpr std::string_view kTxBandwidthNames[kNvlinkLinks] = {
    "DCGM_FI_DEV_NVLINK_TX_BANDWIDTH_L0",  "DCGM_FI_DEV_NVLINK_TX_BANDWIDTH_L1",
    "DCGM_FI_DEV_NVLINK_TX_BANDWIDTH_L2",  "DCGM_FI_DEV_NVLINK_TX_BANDWIDTH_L3",
    "DCGM_FI_DEV_NVLINK_TX_BANDWIDTH_L4",  "DCGM_FI_DEV_NVLINK_TX_BANDWIDTH_L5",
    "DCGM_FI_DEV_NVLINK_TX_BANDWIDTH_L6",  "DCGM_FI_DEV_NVLINK_TX_BANDWIDTH_L7",
    "DCGM_FI_DEV_NVLINK_TX_BANDWIDTH_L8",  "DCGM_FI_DEV_NVLINK_TX_BANDWIDTH_L9",
    "DCGM_FI_DEV_NVLINK_TX_BANDWIDTH_L10", "DCGM_FI_DEV_NVLINK_TX_BANDWIDTH_L11",
    "DCGM_FI_DEV_NVLINK_TX_BANDWIDTH_L12", "DCGM_FI_DEV_NVLINK_TX_BANDWIDTH_L13",
    "DCGM_FI_DEV_NVLINK_TX_BANDWIDTH_L14", "DCGM_FI_DEV_NVLINK_TX_BANDWIDTH_L15",
    "DCGM_FI_DEV_NVLINK_TX_BANDWIDTH_L16", "DCGM_FI_DEV_NVLINK_TX_BANDWIDTH_L17"};
inline constexpr std::string_view kTxThroughputNames[kNvlinkLinks] = {
    "DCGM_FI_DEV_NVLINK_TX_THROUGHPUT_L0",  "DCGM_FI_DEV_NVLINK_TX_THROUGHPUT_L1",
    "DCGM_FI_DEV_NVLINK_TX_THROUGHPUT_L2",  "DCGM_FI_DEV_NVLINK_TX_THROUGHPUT_L3",
    "DCGM_FI_DEV_NVLINK_TX_THROUGHPUT_L4",  "DCGM_FI_DEV_NVLINK_TX_THROUGHPUT_L5",
    "DCGM_FI_DEV_NVLINK_TX_THROUGHPUT_L6",  "DCGM_FI_DEV_NVLINK_TX_THROUGHPUT_L7",
    "DCGM_FI_DEV_NVLINK_TX_THROUGHPUT_L8",  "DCGM_FI_DEV_NVLINK_TX_THROUGHPUT_L9",
    "DCGM_FI_DEV_NVLINK_TX_THROUGHPUT_L10", "DCGM_FI_DEV_NVLINK_TX_THROUGHPUT_L11",
    "DCGM_FI_DEV_NVLINK_TX_THROUGHPUT_L12", "DCGM_FI_DEV_NVLINK_TX_THROUGHPUT_L13",
    "DCGM_FI_DEV_NVLINK_TX_THROUGHPUT_L14", "DCGM_FI_DEV_NVLINK_TX_THROUGHPUT_L15",
    "DCGM_FI_DEV_NVLINK_TX_THROUGHPUT_L16", "DCGM_FI_DEV_NVLINK_TX_THROUGHPUT_L17"};
inline constexpr std::string_view kRxBandwidthNames[kNvlinkLinks] = {
    "DCGM_FI_DEV_NVLINK_RX_BANDWIDTH_L0",  "DCGM_FI_DEV_NVLINK_RX_BANDWIDTH_L1",
    "DCGM_FI_DEV_NVLINK_RX_BANDWIDTH_L2",  "DCGM_FI_DEV_NVLINK_RX_BANDWIDTH_L3",
    "DCGM_FI_DEV_NVLINK_RX_BANDWIDTH_L4",  "DCGM_FI_DEV_NVLINK_RX_BANDWIDTH_L5",
    "DCGM_FI_DEV_NVLINK_RX_BANDWIDTH_L6",  "DCGM_FI_DEV_NVLINK_RX_BANDWIDTH_L7",
    "DCGM_FI_DEV_NVLINK_RX_BANDWIDTH_L8",  "DCGM_FI_DEV_NVLINK_RX_BANDWIDTH_L9",
    "DCGM_FI_DEV_NVLINK_RX_BANDWIDTH_L10", "DCGM_FI_DEV_NVLINK_RX_BANDWIDTH_L11",
    "DCGM_FI_DEV_NVLINK_RX_BANDWIDTH_L12", "DCGM_FI_DEV_NVLINK_RX_BANDWIDTH_L13",
    "DCGM_FI_DEV_NVLINK_RX_BANDWIDTH_L14", "DCGM_FI_DEV_NVLINK_RX_BANDWIDTH_L15",
    "DCGM_FI_DEV_NVLINK_RX_BANDWIDTH_L16", "DCGM_FI_DEV_NVLINK_RX_BANDWIDTH_L17"};
inline constexpr std::string_view kRxThroughputNames[kNvlinkLinks] = {
    "DCGM_FI_DEV_NVLINK_RX_THROUGHPUT_L0",  "DCGM_FI_DEV_NVLINK_RX_THROUGHPUT_L1",
    "DCGM_FI_DEV_NVLINK_RX_THROUGHPUT_L2",  "DCGM_FI_DEV_NVLINK_RX_THROUGHPUT_L3",
    "DCGM_FI_DEV_NVLINK_RX_THROUGHPUT_L4",  "DCGM_FI_DEV_NVLINK_RX_THROUGHPUT_L5",
    "DCGM_FI_DEV_NVLINK_RX_THROUGHPUT_L6",  "DCGM_FI_DEV_NVLINK_RX_THROUGHPUT_L7",
    "DCGM_FI_DEV_NVLINK_RX_THROUGHPUT_L8",  "DCGM_FI_DEV_NVLINK_RX_THROUGHPUT_L9",
    "DCGM_FI_DEV_NVLINK_RX_THROUGHPUT_L10", "DCGM_FI_DEV_NVLINK_RX_THROUGHPUT_L11",
    "DCGM_FI_DEV_NVLINK_RX_THROUGHPUT_L12", "DCGM_FI_DEV_NVLINK_RX_THROUGHPUT_L13",
    "DCGM_FI_DEV_NVLINK_RX_THROUGHPUT_L14", "DCGM_FI_DEV_NVLINK_RX_THROUGHPUT_L15",
    "DCGM_FI_DEV_NVLINK_RX_THROUGHPUT_L16", "DCGM_FI_DEV_NVLINK_RX_THROUGHPUT_L17"};

// One rate row: `fi` (and `partner`, 0 for none) at `scope`, KiB/s / 1000 as DCGM computes it.
constexpr FieldDef NvlinkRate(int id, std::string_view name, std::string_view new_name,
                              std::string_view help, unsigned fi, unsigned partner,
                              unsigned scope) {
  FieldDef f;
  f.id = id;
  f.name = name;
  f.new_name = new_name;
  f.kind = ValueKind::kInt64;
  f.unit = "MB/s";
  f.help = help;
  f.nvml_field_id = fi;
  f.rate_partner_field_id = partner;
  f.nvml_scope_id = scope;
  f.convert = ConvertInteger;
  f.rate = true;
  f.rate_divisor = 1000.0;
  return f;
}

inline constexpr size_t kNvlinkRateRows = 3 * kNvlinkLinks + 2;

// The rows, ascending id.
constexpr std::array<FieldDef, kNvlinkRateRows> NvlinkRateFields() {
  std::array<FieldDef, kNvlinkRateRows> rows{};
  size_t n = 0;
  for (unsigned k = 0; k < kNvlinkLinks; ++k) {
    rows[n++] =
        NvlinkRate(NvlinkBandwidthId(k), kBandwidthNames[k], kThroughputNames[k],
                   "NVLink bandwidth of this link, RX + TX (in MB/s, averaged since the "
                   "previous read).",
                   NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX, NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, k);
    rows[n++] = NvlinkRate(NvlinkTxId(k), kTxBandwidthNames[k], kTxThroughputNames[k],
                           "NVLink transmit bandwidth of this link (in MB/s, averaged since the "
                           "previous read).",
                           NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, 0, k);
    rows[n++] = NvlinkRate(NvlinkRxId(k), kRxBandwidthNames[k], kRxThroughputNames[k],
                           "NVLink receive bandwidth of this link (in MB/s, averaged since the "
                           "previous read).",
                           NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX, 0, k);
  }
  rows[n++] = NvlinkRate(kNvlinkTxTotalId, "DCGM_FI_DEV_NVLINK_TX_BANDWIDTH_TOTAL",
                         "DCGM_FI_DEV_NVLINK_TX_THROUGHPUT_TOTAL",
                         "NVLink transmit bandwidth over all links (in MB/s, averaged since the "
                         "previous read).",
                         NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, 0, NVMLX_SCOPE_ALL_LINKS);
  rows[n++] = NvlinkRate(kNvlinkRxTotalId, "DCGM_FI_DEV_NVLINK_RX_BANDWIDTH_TOTAL",
                         "DCGM_FI_DEV_NVLINK_RX_THROUGHPUT_TOTAL",
                         "NVLink receive bandwidth over all links (in MB/s, averaged since the "
                         "previous read).",
                         NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX, 0, NVMLX_SCOPE_ALL_LINKS);
  // Sort by id (insertion sort: constexpr, 56 rows).
  for (size_t i = 1; i < n; ++i) {
    for (size_t j = i; j > 0 && rows[j - 1].id > rows[j].id; --j) {
      FieldDef t = rows[j];
      rows[j] = rows[j - 1];
      rows[j - 1] = t;
    }
  }
  return rows;
}

// --- Error counters ------------------------------------------------------------------------------

// DCGM's ids of one error family per link: four blocks in dcgm_fields.h (L0-L5, L6-L11, L12-L14,
// L15-L17), e.g. CRC flit 400-405, 451-456, 406-408, 481-483.
struct NvlinkErrorIdBlocks {
  int l0, l6, l12, l15;
};
constexpr int NvlinkErrorId(NvlinkErrorIdBlocks b, unsigned k) {
  return k < 6    ? b.l0 + static_cast<int>(k)
         : k < 12 ? b.l6 + static_cast<int>(k) - 6
         : k < 15 ? b.l12 + static_cast<int>(k) - 12
                  : b.l15 + static_cast<int>(k) - 15;
}

// The names of links 0..17: prefix, link number, suffix (string literal concatenation).
#define NVMLX_NVLINK_L18(prefix, suffix)                                                         \
  prefix "0" suffix, prefix "1" suffix, prefix "2" suffix, prefix "3" suffix, prefix "4" suffix, \
      prefix "5" suffix, prefix "6" suffix, prefix "7" suffix, prefix "8" suffix,                \
      prefix "9" suffix, prefix "10" suffix, prefix "11" suffix, prefix "12" suffix,             \
      prefix "13" suffix, prefix "14" suffix, prefix "15" suffix, prefix "16" suffix,            \
      prefix "17" suffix

// One family: the NVML counter, DCGM's id blocks, the names dcgm-exporter's files use
// (..._ERROR_COUNT_L<k>) and DCGM 4.6's (..._ERROR_L<k>_TOTAL), and the help text.
struct NvlinkErrorFamily {
  nvmlNvLinkErrorCounter_t counter;
  NvlinkErrorIdBlocks ids;
  std::array<std::string_view, kNvlinkLinks> names;
  std::array<std::string_view, kNvlinkLinks> new_names;
  std::string_view help;
};
inline constexpr NvlinkErrorFamily kNvlinkErrorFamilies[] = {
    {NVML_NVLINK_ERROR_DL_CRC_FLIT,
     {400, 451, 406, 481},
     {NVMLX_NVLINK_L18("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_L", "")},
     {NVMLX_NVLINK_L18("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_L", "_TOTAL")},
     "NVLink flow-control CRC errors of this link."},
    {NVML_NVLINK_ERROR_DL_CRC_DATA,
     {410, 457, 416, 484},
     {NVMLX_NVLINK_L18("DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_L", "")},
     {NVMLX_NVLINK_L18("DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_L", "_TOTAL")},
     "NVLink data CRC errors of this link."},
    {NVML_NVLINK_ERROR_DL_REPLAY,
     {420, 463, 426, 487},
     {NVMLX_NVLINK_L18("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_L", "")},
     {NVMLX_NVLINK_L18("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_L", "_TOTAL")},
     "NVLink retries of this link."},
    {NVML_NVLINK_ERROR_DL_RECOVERY,
     {430, 469, 436, 491},
     {NVMLX_NVLINK_L18("DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_L", "")},
     {NVMLX_NVLINK_L18("DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_L", "_TOTAL")},
     "NVLink recovery errors of this link."},
};
#undef NVMLX_NVLINK_L18
inline constexpr size_t kNvlinkErrorFamilyCount = std::size(kNvlinkErrorFamilies);

// The ReadFn of one (family, link): a ReadFn takes only the context, so each pair is its own
// instantiation (ReadNvlinkErrorCounter in conversions.h does the call).
template <size_t Family, unsigned Link>
Result<model::Value> ReadNvlinkError(ReadContext& ctx) {
  return ReadNvlinkErrorCounter(ctx, Link, kNvlinkErrorFamilies[Family].counter);
}
template <size_t Family, size_t... L>
constexpr std::array<ReadFn, kNvlinkLinks> NvlinkErrorReaders(std::index_sequence<L...>) {
  return {&ReadNvlinkError<Family, static_cast<unsigned>(L)>...};
}

inline constexpr size_t kNvlinkErrorRows = kNvlinkErrorFamilyCount * kNvlinkLinks;

// The rows, ascending id. Cost kSlow: 72 calls per GPU when every row is enabled, not measured on
// a GPU with NVLink (the H200 VM has none), so they stay off the fast loop.
constexpr std::array<FieldDef, kNvlinkErrorRows> NvlinkErrorFields() {
  constexpr auto kSeq = std::make_index_sequence<kNvlinkLinks>();
  constexpr std::array<std::array<ReadFn, kNvlinkLinks>, kNvlinkErrorFamilyCount> kReaders = {
      NvlinkErrorReaders<0>(kSeq), NvlinkErrorReaders<1>(kSeq), NvlinkErrorReaders<2>(kSeq),
      NvlinkErrorReaders<3>(kSeq)};
  static_assert(kNvlinkErrorFamilyCount == 4, "one reader table per family");
  std::array<FieldDef, kNvlinkErrorRows> rows{};
  size_t n = 0;
  for (size_t fam = 0; fam < kNvlinkErrorFamilyCount; ++fam) {
    const NvlinkErrorFamily& f = kNvlinkErrorFamilies[fam];
    for (unsigned k = 0; k < kNvlinkLinks; ++k) {
      FieldDef d;
      d.id = NvlinkErrorId(f.ids, k);
      d.name = f.names[k];
      d.new_name = f.new_names[k];
      d.kind = ValueKind::kInt64;
      d.unit = "count";
      d.help = f.help;
      d.read = kReaders[fam][k];
      d.cost = Cost::kSlow;
      rows[n++] = d;
    }
  }
  for (size_t i = 1; i < n; ++i) {
    for (size_t j = i; j > 0 && rows[j - 1].id > rows[j].id; --j) {
      FieldDef t = rows[j];
      rows[j] = rows[j - 1];
      rows[j - 1] = t;
    }
  }
  return rows;
}

}  // namespace nvmlx::fields::internal

#endif  // NVML_EXPORTER_FIELDS_CATALOG_NVLINK_H_
