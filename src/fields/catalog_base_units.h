// Catalog rows of the DCGM 4.6.1-4.7 base-unit fields and of the GPU fabric health fields, kept
// out of catalog.cc so that its table stays one screenful per family.
//
// The base-unit fields (ids 1600-1648; docs/upstream/dcgm-fields-4.7.md lists ids and sources)
// duplicate older fields in the units of DCGM's naming standard: bytes for MiB, Hz for MHz, J for
// mJ, a 0-1 ratio for percent, seconds for ns, bytes/s for the NVLink "MB/s". Each reads the NVML
// call (or batched field value) of its older twin and converts the value; the older field keeps
// its unit, so a collectors file may name either. dcgm-exporter 4.9.0 switched its shipped CSV
// to these names.
//
// The fabric rows (174, 175) are the health mask and summary of nvmlDeviceGetGpuFabricInfoV,
// which dcgm-exporter 4.8.4 offers as opt-in fields; DCGM 4.6 reads them the same way.
//
// Internal to fields/ (catalog.cc merges these rows into its table). Compile-time constants.
#ifndef NVML_EXPORTER_FIELDS_CATALOG_BASE_UNITS_H_
#define NVML_EXPORTER_FIELDS_CATALOG_BASE_UNITS_H_

#include <array>
#include <cstddef>
#include <string_view>

#include "fields/catalog.h"
#include "fields/catalog_nvlink.h"
#include "fields/conversions.h"

namespace nvmlx::fields::internal {

// A row read by a dedicated call.
constexpr FieldDef BaseUnitRow(int id, std::string_view name, std::string_view new_name,
                               ValueKind kind, std::string_view unit, std::string_view help,
                               ReadFn read) {
  FieldDef f;
  f.id = id;
  f.name = name;
  f.new_name = new_name;
  f.kind = kind;
  f.unit = unit;
  f.help = help;
  f.read = read;
  return f;
}

// A row of the batched nvmlDeviceGetFieldValues call; these cost what their older twins cost
// (energy ~4 ms, the perf-policy counters ~0.7 ms on an H200), hence kSlow.
constexpr FieldDef BaseUnitFieldValue(int id, std::string_view name, std::string_view unit,
                                      std::string_view help, unsigned nvml_field_id,
                                      ConvertFn convert) {
  FieldDef f;
  f.id = id;
  f.name = name;
  f.kind = ValueKind::kDouble;
  f.unit = unit;
  f.help = help;
  f.nvml_field_id = nvml_field_id;
  f.convert = convert;
  f.cost = Cost::kSlow;
  return f;
}

constexpr ValueKind kBaseI = ValueKind::kInt64;
constexpr ValueKind kBaseD = ValueKind::kDouble;

// Ascending id.
inline constexpr FieldDef kBaseUnitListed[] = {
    BaseUnitRow(174, "DCGM_FI_DEV_FABRIC_HEALTH_MASK", "", kBaseI, "bitmask",
                "GPU fabric health mask (NVML_GPU_FABRIC_HEALTH_MASK_* sub-fields).",
                ReadFabricHealthMask),
    BaseUnitRow(175, "DCGM_FI_DEV_FABRIC_HEALTH_SUMMARY", "", kBaseI, "",
                "GPU fabric health (0 not supported, 1 healthy, 2 unhealthy, 3 limited "
                "capacity).",
                ReadFabricHealthSummary),
    BaseUnitRow(1600, "DCGM_FI_DEV_BAR1_CAPACITY_BYTES", "", kBaseI, "B",
                "Total BAR1 memory (in bytes).", ReadBar1CapacityBytes),
    BaseUnitRow(1601, "DCGM_FI_DEV_BAR1_USED_BYTES", "", kBaseI, "B",
                "Used BAR1 memory (in bytes).", ReadBar1UsedBytes),
    BaseUnitRow(1602, "DCGM_FI_DEV_BAR1_FREE_BYTES", "", kBaseI, "B",
                "Free BAR1 memory (in bytes).", ReadBar1FreeBytes),
    BaseUnitRow(1603, "DCGM_FI_DEV_SM_CLOCK_HERTZ", "", kBaseI, "Hz", "SM clock frequency (in Hz).",
                ReadSmClockHz),
    BaseUnitRow(1604, "DCGM_FI_DEV_MEMORY_CLOCK_HERTZ", "", kBaseI, "Hz",
                "Memory clock frequency (in Hz).", ReadMemClockHz),
    BaseUnitRow(1605, "DCGM_FI_DEV_VIDEO_CLOCK_HERTZ", "", kBaseI, "Hz",
                "Video encoder/decoder clock frequency (in Hz).", ReadVideoClockHz),
    BaseUnitRow(1608, "DCGM_FI_DEV_SM_MAX_CLOCK_HERTZ", "", kBaseI, "Hz",
                "Maximum SM clock frequency (in Hz).", ReadMaxSmClockHz),
    BaseUnitRow(1609, "DCGM_FI_DEV_MEMORY_MAX_CLOCK_HERTZ", "", kBaseI, "Hz",
                "Maximum memory clock frequency (in Hz).", ReadMaxMemClockHz),
    BaseUnitRow(1610, "DCGM_FI_DEV_VIDEO_MAX_CLOCK_HERTZ", "", kBaseI, "Hz",
                "Maximum video clock frequency (in Hz).", ReadMaxVideoClockHz),
    BaseUnitFieldValue(1611, "DCGM_FI_DEV_GPU_ENERGY_JOULES_TOTAL", "J",
                       "Total energy consumption since the driver was loaded (in J).",
                       NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION, ConvertMillijoulesToJoules),
    BaseUnitRow(1612, "DCGM_FI_DEV_FAN_SPEED_RATIO", "", kBaseD, "ratio",
                "Fan speed as a fraction of its maximum (may exceed 1).", ReadFanSpeedRatio),
    // DCGM 4.6.1 called 203 (percent) GPU_UTIL_RATIO; 4.7 gives the name to this field.
    BaseUnitRow(1613, "DCGM_FI_DEV_GPU_UTIL_RATIO", "DCGM_FI_DEV_GPU_UTIL_RATIO_V2", kBaseD,
                "ratio", "GPU utilization (0-1).", ReadGpuUtilRatio),
    BaseUnitRow(1614, "DCGM_FI_DEV_MEMORY_UTIL_RATIO", "", kBaseD, "ratio",
                "Memory utilization (0-1).", ReadMemoryUtilRatio),
    BaseUnitRow(1615, "DCGM_FI_DEV_ENC_UTIL_RATIO", "", kBaseD, "ratio",
                "Encoder utilization (0-1).", ReadEncUtilRatio),
    BaseUnitRow(1616, "DCGM_FI_DEV_DEC_UTIL_RATIO", "", kBaseD, "ratio",
                "Decoder utilization (0-1).", ReadDecUtilRatio),
    BaseUnitFieldValue(1617, "DCGM_FI_DEV_GPU_POWER_THROTTLE_SECONDS_TOTAL", "s",
                       "Throttling duration due to power constraints (in s).",
                       NVML_FI_DEV_PERF_POLICY_POWER, ConvertNanosecondsToSeconds),
    BaseUnitFieldValue(1618, "DCGM_FI_DEV_GPU_THERMAL_THROTTLE_SECONDS_TOTAL", "s",
                       "Throttling duration due to thermal constraints (in s).",
                       NVML_FI_DEV_PERF_POLICY_THERMAL, ConvertNanosecondsToSeconds),
    BaseUnitFieldValue(1619, "DCGM_FI_DEV_GPU_SYNC_BOOST_THROTTLE_SECONDS_TOTAL", "s",
                       "Throttling duration due to sync-boost constraints (in s).",
                       NVML_FI_DEV_PERF_POLICY_SYNC_BOOST, ConvertNanosecondsToSeconds),
    BaseUnitFieldValue(1620, "DCGM_FI_DEV_GPU_LIMIT_THROTTLE_SECONDS_TOTAL", "s",
                       "Throttling duration due to board limit constraints (in s).",
                       NVML_FI_DEV_PERF_POLICY_BOARD_LIMIT, ConvertNanosecondsToSeconds),
    BaseUnitFieldValue(1621, "DCGM_FI_DEV_GPU_LOW_UTIL_THROTTLE_SECONDS_TOTAL", "s",
                       "Throttling duration due to low utilization (in s).",
                       NVML_FI_DEV_PERF_POLICY_LOW_UTILIZATION, ConvertNanosecondsToSeconds),
    BaseUnitFieldValue(1622, "DCGM_FI_DEV_GPU_RELIABILITY_THROTTLE_SECONDS_TOTAL", "s",
                       "Throttling duration due to reliability constraints (in s).",
                       NVML_FI_DEV_PERF_POLICY_RELIABILITY, ConvertNanosecondsToSeconds),
    BaseUnitFieldValue(1623, "DCGM_FI_DEV_GPU_APP_THROTTLE_SECONDS_TOTAL", "s",
                       "Time below application clocks (in s).",
                       NVML_FI_DEV_PERF_POLICY_TOTAL_APP_CLOCKS, ConvertNanosecondsToSeconds),
    BaseUnitFieldValue(1624, "DCGM_FI_DEV_GPU_BASE_THROTTLE_SECONDS_TOTAL", "s",
                       "Time below base clocks (in s).", NVML_FI_DEV_PERF_POLICY_TOTAL_BASE_CLOCKS,
                       ConvertNanosecondsToSeconds),
    BaseUnitRow(1625, "DCGM_FI_DEV_FB_CAPACITY_BYTES", "", kBaseI, "B",
                "Total frame buffer memory (in bytes).", ReadFbCapacityBytes),
    BaseUnitRow(1626, "DCGM_FI_DEV_FB_FREE_BYTES", "", kBaseI, "B",
                "Free frame buffer memory (in bytes).", ReadFbFreeBytes),
    BaseUnitRow(1627, "DCGM_FI_DEV_FB_USED_BYTES", "", kBaseI, "B",
                "Used frame buffer memory (in bytes).", ReadFbUsedBytes),
    BaseUnitRow(1628, "DCGM_FI_DEV_FB_RESERVED_BYTES", "", kBaseI, "B",
                "Reserved frame buffer memory (in bytes).", ReadFbReservedBytes),
};

// NVLINK_THROUGHPUT_L<k>_BYTES_PER_SECOND (1630 + k) and the all-links total (1648): the RX + TX
// KiB counters of NVLINK_BANDWIDTH_L<k> / _TOTAL, as a rate in bytes/s (the counter's KiB times
// 1024, where the older fields divide KiB/s by 1000 and call it MB/s).
inline constexpr int kNvlinkThroughputBytesFirstId = 1630;
inline constexpr int kNvlinkThroughputBytesTotalId = 1648;
inline constexpr double kKibToBytesDivisor = 1.0 / 1024.0;  // rate / divisor = KiB/s * 1024
inline constexpr std::string_view kThroughputBytesNames[kNvlinkLinks] = {
    "DCGM_FI_DEV_NVLINK_THROUGHPUT_L0_BYTES_PER_SECOND",
    "DCGM_FI_DEV_NVLINK_THROUGHPUT_L1_BYTES_PER_SECOND",
    "DCGM_FI_DEV_NVLINK_THROUGHPUT_L2_BYTES_PER_SECOND",
    "DCGM_FI_DEV_NVLINK_THROUGHPUT_L3_BYTES_PER_SECOND",
    "DCGM_FI_DEV_NVLINK_THROUGHPUT_L4_BYTES_PER_SECOND",
    "DCGM_FI_DEV_NVLINK_THROUGHPUT_L5_BYTES_PER_SECOND",
    "DCGM_FI_DEV_NVLINK_THROUGHPUT_L6_BYTES_PER_SECOND",
    "DCGM_FI_DEV_NVLINK_THROUGHPUT_L7_BYTES_PER_SECOND",
    "DCGM_FI_DEV_NVLINK_THROUGHPUT_L8_BYTES_PER_SECOND",
    "DCGM_FI_DEV_NVLINK_THROUGHPUT_L9_BYTES_PER_SECOND",
    "DCGM_FI_DEV_NVLINK_THROUGHPUT_L10_BYTES_PER_SECOND",
    "DCGM_FI_DEV_NVLINK_THROUGHPUT_L11_BYTES_PER_SECOND",
    "DCGM_FI_DEV_NVLINK_THROUGHPUT_L12_BYTES_PER_SECOND",
    "DCGM_FI_DEV_NVLINK_THROUGHPUT_L13_BYTES_PER_SECOND",
    "DCGM_FI_DEV_NVLINK_THROUGHPUT_L14_BYTES_PER_SECOND",
    "DCGM_FI_DEV_NVLINK_THROUGHPUT_L15_BYTES_PER_SECOND",
    "DCGM_FI_DEV_NVLINK_THROUGHPUT_L16_BYTES_PER_SECOND",
    "DCGM_FI_DEV_NVLINK_THROUGHPUT_L17_BYTES_PER_SECOND"};

constexpr FieldDef NvlinkBytesRate(int id, std::string_view name, std::string_view help,
                                   unsigned scope) {
  FieldDef f = NvlinkRate(id, name, "", help, NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX,
                          NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, scope);
  f.unit = "B/s";
  f.rate_divisor = kKibToBytesDivisor;
  return f;
}

inline constexpr size_t kBaseUnitRows = std::size(kBaseUnitListed) + kNvlinkLinks + 1;

// All rows of this header, ascending id (the listed ones end at 1628, the rates follow).
constexpr std::array<FieldDef, kBaseUnitRows> BaseUnitFields() {
  std::array<FieldDef, kBaseUnitRows> rows{};
  size_t n = 0;
  for (const FieldDef& f : kBaseUnitListed) rows[n++] = f;
  for (unsigned k = 0; k < kNvlinkLinks; ++k) {
    rows[n++] = NvlinkBytesRate(kNvlinkThroughputBytesFirstId + static_cast<int>(k),
                                kThroughputBytesNames[k],
                                "NVLink throughput of this link, RX + TX (in bytes/s, averaged "
                                "since the previous read).",
                                k);
  }
  rows[n++] = NvlinkBytesRate(kNvlinkThroughputBytesTotalId,
                              "DCGM_FI_DEV_NVLINK_THROUGHPUT_BYTES_PER_SECOND",
                              "NVLink throughput over all links, RX + TX (in bytes/s, averaged "
                              "since the previous read).",
                              NVMLX_SCOPE_ALL_LINKS);
  return rows;
}

}  // namespace nvmlx::fields::internal

#endif  // NVML_EXPORTER_FIELDS_CATALOG_BASE_UNITS_H_
