// The field table. Names and ids are those of dcgm_fields.h (DCGM 4.6.1, the copy in
// NVIDIA/go-dcgm); "new" names are the DCGM 4.6 names that replaced the old ones (the old ones stay
// as aliases there, and dcgm-exporter's CSVs still use them). Reads follow docs/nvml.md §2.
#include "fields/catalog.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <vector>

#include "fields/catalog_base_units.h"
#include "fields/catalog_nvlink.h"
#include "fields/conversions.h"
#include "fields/dcgm_known.h"
#include "fields/field_ids.h"

namespace nvmlx::fields {
namespace {

namespace in = internal;

constexpr ValueKind kI = ValueKind::kInt64;
constexpr ValueKind kD = ValueKind::kDouble;
constexpr ValueKind kS = ValueKind::kString;
constexpr Cost kFast = Cost::kFast;
constexpr Cost kSlow = Cost::kSlow;

// Small constexpr builders: FieldDef is an aggregate with defaults, and positional braces for its
// twelve members would be unreadable.
constexpr FieldDef F(int id, std::string_view name, std::string_view new_name, ValueKind kind,
                     std::string_view unit, std::string_view help) {
  FieldDef f;
  f.id = id;
  f.name = name;
  f.new_name = new_name;
  f.kind = kind;
  f.unit = unit;
  f.help = help;
  return f;
}

// A dedicated NVML call.
constexpr FieldDef Rd(FieldDef f, ReadFn read, Cost cost = kFast) {
  f.read = read;
  f.cost = cost;
  return f;
}

// One host-wide value (driver/NVML version); the read ignores the device.
constexpr FieldDef Sys(FieldDef f, ReadFn read) {
  f.source = Source::kSystem;
  f.read = read;
  return f;
}

// An element of the batched nvmlDeviceGetFieldValues call.
constexpr FieldDef Fi(FieldDef f, unsigned nvml_field_id, ConvertFn convert, Cost cost = kFast,
                      unsigned scope = 0) {
  f.nvml_field_id = nvml_field_id;
  f.convert = convert;
  f.cost = cost;
  f.nvml_scope_id = scope;
  return f;
}

// Not read by DeviceReader: profiling (GPM, issue 3), exporter-computed, event-driven.
constexpr FieldDef As(FieldDef f, Source source) {
  f.source = source;
  return f;
}

// DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL: DCGM sums the RX and TX KiB counters over all links
// (scopeId UINT_MAX), takes the difference to the previous sample, divides by the elapsed
// seconds and by 1000, and caches that rate (dcgm-exporter then types it a counter).
constexpr FieldDef Rate(FieldDef f) {
  f.nvml_field_id = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX;
  f.rate_partner_field_id = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX;
  f.nvml_scope_id = NVMLX_SCOPE_ALL_LINKS;
  f.convert = in::ConvertInteger;
  f.rate = true;
  f.rate_divisor = 1000.0;
  return f;
}

// A DCGM_FI_PROF_* field computed by NVML GPM from two samples (docs/nvml.md §3, after DCGM
// 4.6's DcgmFieldIdToNvmlGpmMetricId): the GPM metric id and the factor to DCGM's unit.
constexpr double kPercentToRatio = 0.01;
constexpr double kMibToBytes = 1048576.0;
constexpr FieldDef Gpm(FieldDef f, unsigned gpm_metric_id, double scale) {
  f.source = Source::kProfiling;
  f.gpm_metric_id = gpm_metric_id;
  f.gpm_scale = scale;
  return f;
}

// Ascending id. kSlow marks what costs milliseconds on an H200 (energy ~4 ms, PCIe throughput
// ~21 ms, violation counters ~0.7 ms, PCIe replay ~0.15 ms; docs/nvml.md §9). The
// clock-event-reason ns counters 1422-1424 are not measured; they are assumed to cost what the
// perf-policy counters (FI 74-81) cost, which is where NVML keeps them.
constexpr FieldDef kListed[] = {
    Sys(F(1, "DCGM_FI_DRIVER_VERSION", "DCGM_FI_SYSTEM_DRIVER_VERSION", kS, "",
          "Version of the NVIDIA driver."),
        in::ReadDriverVersion),
    Sys(F(2, "DCGM_FI_NVML_VERSION", "DCGM_FI_SYSTEM_NVML_VERSION", kS, "",
          "Version of the NVML library."),
        in::ReadNvmlVersion),
    Rd(F(50, "DCGM_FI_DEV_NAME", "DCGM_FI_DEV_GPU_NAME", kS, "", "GPU model name."), in::ReadName),
    Rd(F(51, "DCGM_FI_DEV_BRAND", "DCGM_FI_DEV_GPU_BRAND", kS, "",
         "GPU brand (e.g. NVIDIA, Tesla)."),
       in::ReadBrand),
    Rd(F(53, "DCGM_FI_DEV_SERIAL", "DCGM_FI_DEV_BOARD_SERIAL", kS, "", "Board serial number."),
       in::ReadSerial),
    Rd(F(54, "DCGM_FI_DEV_UUID", "DCGM_FI_DEV_GPU_UUID", kS, "", "GPU UUID."), in::ReadUuid),
    Rd(F(55, "DCGM_FI_DEV_MINOR_NUMBER", "DCGM_FI_DEV_GPU_MINOR_NUMBER", kI, "",
         "Device minor number (the N of /dev/nvidiaN)."),
       in::ReadMinorNumber),
    Rd(F(56, "DCGM_FI_DEV_OEM_INFOROM_VER", "DCGM_FI_DEV_INFOROM_OEM_VERSION", kS, "",
         "OEM inforom version."),
       in::ReadOemInforom),
    Rd(F(57, "DCGM_FI_DEV_PCI_BUSID", "DCGM_FI_DEV_PCI_BUS_ID", kS, "",
         "PCI bus id (domain:bus:device.function)."),
       in::ReadPciBusId),
    Rd(F(80, "DCGM_FI_DEV_ECC_INFOROM_VER", "DCGM_FI_DEV_INFOROM_ECC_VERSION", kS, "",
         "ECC inforom version."),
       in::ReadEccInforom),
    Rd(F(81, "DCGM_FI_DEV_POWER_INFOROM_VER", "DCGM_FI_DEV_INFOROM_POWER_VERSION", kS, "",
         "Power management inforom version."),
       in::ReadPowerInforom),
    Rd(F(82, "DCGM_FI_DEV_INFOROM_IMAGE_VER", "DCGM_FI_DEV_INFOROM_IMAGE_VERSION", kS, "",
         "Inforom image version."),
       in::ReadInforomImage),
    Rd(F(85, "DCGM_FI_DEV_VBIOS_VERSION", "", kS, "", "VBIOS version."), in::ReadVbios),
    Rd(F(ids::kBar1Total, "DCGM_FI_DEV_BAR1_TOTAL", "", kI, "MiB", "Total BAR1 memory (in MiB)."),
       in::ReadBar1Total),
    Rd(F(ids::kBar1Used, "DCGM_FI_DEV_BAR1_USED", "", kI, "MiB", "Used BAR1 memory (in MiB)."),
       in::ReadBar1Used),
    Rd(F(ids::kBar1Free, "DCGM_FI_DEV_BAR1_FREE", "", kI, "MiB", "Free BAR1 memory (in MiB)."),
       in::ReadBar1Free),
    Rd(F(100, "DCGM_FI_DEV_SM_CLOCK", "", kI, "MHz", "SM clock frequency (in MHz)."),
       in::ReadSmClock),
    Rd(F(101, "DCGM_FI_DEV_MEM_CLOCK", "", kI, "MHz", "Memory clock frequency (in MHz)."),
       in::ReadMemClock),
    Rd(F(102, "DCGM_FI_DEV_VIDEO_CLOCK", "", kI, "MHz",
         "Video encoder/decoder clock frequency (in MHz)."),
       in::ReadVideoClock),
    Rd(F(112, "DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "", kI, "bitmask",
         "Current clock event (throttle) reasons (bitmask)."),
       in::ReadClocksEventReasons),
    Rd(F(113, "DCGM_FI_DEV_MAX_SM_CLOCK", "", kI, "MHz", "Maximum SM clock frequency (in MHz)."),
       in::ReadMaxSmClock),
    Rd(F(114, "DCGM_FI_DEV_MAX_MEM_CLOCK", "", kI, "MHz",
         "Maximum memory clock frequency (in MHz)."),
       in::ReadMaxMemClock),
    Rd(F(115, "DCGM_FI_DEV_MAX_VIDEO_CLOCK", "", kI, "MHz",
         "Maximum video clock frequency (in MHz)."),
       in::ReadMaxVideoClock),
    Fi(F(140, "DCGM_FI_DEV_MEMORY_TEMP", "DCGM_FI_DEV_MEMORY_TEMP_CELSIUS", kI, "C",
         "Memory temperature (in C)."),
       NVML_FI_DEV_MEMORY_TEMP, in::ConvertMemoryTemp),
    Rd(F(150, "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_GPU_TEMP_CELSIUS", kI, "C",
         "GPU temperature (in C)."),
       in::ReadGpuTemp),
    Rd(F(155, "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_BOARD_POWER_WATTS", kD, "W",
         "Power draw (in W)."),
       in::ReadPowerUsage),
    Fi(F(156, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "", kI, "mJ",
         "Total energy consumption since the driver was loaded (in mJ)."),
       NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION, in::ConvertInteger, kSlow),
    Fi(F(157, "DCGM_FI_DEV_POWER_USAGE_INSTANT", "DCGM_FI_DEV_BOARD_POWER_RAW_WATTS", kD, "W",
         "Instantaneous power draw (in W)."),
       NVML_FI_DEV_POWER_INSTANT, in::ConvertMilliwattsToWatts),
    Rd(F(160, "DCGM_FI_DEV_POWER_MGMT_LIMIT", "DCGM_FI_DEV_BOARD_POWER_LIMIT_REQUESTED_WATTS", kD,
         "W", "Power management limit (in W)."),
       in::ReadPowerMgmtLimit),
    Rd(F(161, "DCGM_FI_DEV_POWER_MGMT_LIMIT_MIN", "DCGM_FI_DEV_BOARD_POWER_LIMIT_MIN_WATTS", kD,
         "W", "Minimum settable power limit (in W)."),
       in::ReadPowerMgmtLimitMin),
    Rd(F(162, "DCGM_FI_DEV_POWER_MGMT_LIMIT_MAX", "DCGM_FI_DEV_BOARD_POWER_LIMIT_MAX_WATTS", kD,
         "W", "Maximum settable power limit (in W)."),
       in::ReadPowerMgmtLimitMax),
    Rd(F(163, "DCGM_FI_DEV_POWER_MGMT_LIMIT_DEF", "DCGM_FI_DEV_BOARD_POWER_LIMIT_DEFAULT_WATTS", kD,
         "W", "Default power limit (in W)."),
       in::ReadPowerMgmtLimitDef),
    Rd(F(164, "DCGM_FI_DEV_ENFORCED_POWER_LIMIT", "DCGM_FI_DEV_BOARD_POWER_LIMIT_ENFORCED_WATTS",
         kD, "W", "Enforced power limit (in W)."),
       in::ReadEnforcedPowerLimit),
    Rd(F(190, "DCGM_FI_DEV_PSTATE", "DCGM_FI_DEV_GPU_PSTATE", kI, "",
         "Performance state (P0=0 ... P15=15, 32 unknown)."),
       in::ReadPstate),
    Rd(F(191, "DCGM_FI_DEV_FAN_SPEED", "", kI, "%", "Fan speed (in %, may exceed 100)."),
       in::ReadFanSpeed),
    Rd(F(200, "DCGM_FI_DEV_PCIE_TX_THROUGHPUT", "", kI, "KB/s",
         "PCIe transmit throughput (in KB/s)."),
       in::ReadPcieTxThroughput, kSlow),
    Rd(F(201, "DCGM_FI_DEV_PCIE_RX_THROUGHPUT", "", kI, "KB/s",
         "PCIe receive throughput (in KB/s)."),
       in::ReadPcieRxThroughput, kSlow),
    Rd(F(202, "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "DCGM_FI_DEV_PCIE_REPLAY_TOTAL", kI, "count",
         "Total number of PCIe retries."),
       in::ReadPcieReplay, kSlow),
    Rd(F(ids::kGpuUtil, "DCGM_FI_DEV_GPU_UTIL", "", kI, "%", "GPU utilization (in %)."),
       in::ReadGpuUtil),
    Rd(F(204, "DCGM_FI_DEV_MEM_COPY_UTIL", "", kI, "%", "Memory utilization (in %)."),
       in::ReadMemCopyUtil),
    Rd(F(206, "DCGM_FI_DEV_ENC_UTIL", "", kI, "%", "Encoder utilization (in %)."), in::ReadEncUtil),
    Rd(F(207, "DCGM_FI_DEV_DEC_UTIL", "", kI, "%", "Decoder utilization (in %)."), in::ReadDecUtil),
    As(F(ids::kXidErrors, "DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_XID_ERROR", kI, "",
         "Value of the last XID error encountered."),
       Source::kEvent),
    Rd(F(235, "DCGM_FI_DEV_PCIE_MAX_LINK_GEN", "", kI, "", "Maximum PCIe link generation."),
       in::ReadPcieMaxLinkGen),
    Rd(F(236, "DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH", "", kI, "", "Maximum PCIe link width (lanes)."),
       in::ReadPcieMaxLinkWidth),
    Rd(F(237, "DCGM_FI_DEV_PCIE_LINK_GEN", "", kI, "", "Current PCIe link generation."),
       in::ReadPcieLinkGen),
    Rd(F(238, "DCGM_FI_DEV_PCIE_LINK_WIDTH", "", kI, "", "Current PCIe link width (lanes)."),
       in::ReadPcieLinkWidth),
    Fi(F(240, "DCGM_FI_DEV_POWER_VIOLATION", "", kI, "ns",
         "Throttling duration due to power constraints (in ns)."),
       NVML_FI_DEV_PERF_POLICY_POWER, in::ConvertInteger, kSlow),
    Fi(F(241, "DCGM_FI_DEV_THERMAL_VIOLATION", "", kI, "ns",
         "Throttling duration due to thermal constraints (in ns)."),
       NVML_FI_DEV_PERF_POLICY_THERMAL, in::ConvertInteger, kSlow),
    Fi(F(242, "DCGM_FI_DEV_SYNC_BOOST_VIOLATION", "", kI, "ns",
         "Throttling duration due to sync-boost constraints (in ns)."),
       NVML_FI_DEV_PERF_POLICY_SYNC_BOOST, in::ConvertInteger, kSlow),
    Fi(F(243, "DCGM_FI_DEV_BOARD_LIMIT_VIOLATION", "", kI, "ns",
         "Throttling duration due to board limit constraints (in ns)."),
       NVML_FI_DEV_PERF_POLICY_BOARD_LIMIT, in::ConvertInteger, kSlow),
    Fi(F(244, "DCGM_FI_DEV_LOW_UTIL_VIOLATION", "", kI, "ns",
         "Throttling duration due to low utilization (in ns)."),
       NVML_FI_DEV_PERF_POLICY_LOW_UTILIZATION, in::ConvertInteger, kSlow),
    Fi(F(245, "DCGM_FI_DEV_RELIABILITY_VIOLATION", "", kI, "ns",
         "Throttling duration due to reliability constraints (in ns)."),
       NVML_FI_DEV_PERF_POLICY_RELIABILITY, in::ConvertInteger, kSlow),
    Fi(F(246, "DCGM_FI_DEV_TOTAL_APP_CLOCKS_VIOLATION", "", kI, "ns",
         "Time below application clocks (in ns)."),
       NVML_FI_DEV_PERF_POLICY_TOTAL_APP_CLOCKS, in::ConvertInteger, kSlow),
    Fi(F(247, "DCGM_FI_DEV_TOTAL_BASE_CLOCKS_VIOLATION", "", kI, "ns",
         "Time below base clocks (in ns)."),
       NVML_FI_DEV_PERF_POLICY_TOTAL_BASE_CLOCKS, in::ConvertInteger, kSlow),
    Rd(F(ids::kFbTotal, "DCGM_FI_DEV_FB_TOTAL", "", kI, "MiB",
         "Total frame buffer memory (in MiB)."),
       in::ReadFbTotal),
    Rd(F(ids::kFbFree, "DCGM_FI_DEV_FB_FREE", "", kI, "MiB", "Free frame buffer memory (in MiB)."),
       in::ReadFbFree),
    Rd(F(ids::kFbUsed, "DCGM_FI_DEV_FB_USED", "", kI, "MiB", "Used frame buffer memory (in MiB)."),
       in::ReadFbUsed),
    Rd(F(ids::kFbReserved, "DCGM_FI_DEV_FB_RESERVED", "", kI, "MiB",
         "Reserved frame buffer memory (in MiB)."),
       in::ReadFbReserved),
    Rd(F(ids::kFbUsedPercent, "DCGM_FI_DEV_FB_USED_PERCENT", "DCGM_FI_DEV_FB_USED_RATIO", kD,
         "ratio", "Used frame buffer as a fraction of non-reserved memory (0-1)."),
       in::ReadFbUsedPercent),
    Fi(F(300, "DCGM_FI_DEV_ECC_CURRENT", "DCGM_FI_DEV_ECC_MODE", kI, "",
         "Current ECC mode (1 = enabled)."),
       NVML_FI_DEV_ECC_CURRENT, in::ConvertEccUll),
    Fi(F(301, "DCGM_FI_DEV_ECC_PENDING", "", kI, "",
         "Pending ECC mode (1 = enabled after reboot)."),
       NVML_FI_DEV_ECC_PENDING, in::ConvertEccUll),
    Fi(F(310, "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "", kI, "count",
         "Total single-bit volatile ECC errors."),
       NVML_FI_DEV_ECC_SBE_VOL_TOTAL, in::ConvertEccUll),
    Fi(F(311, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "", kI, "count",
         "Total double-bit volatile ECC errors."),
       NVML_FI_DEV_ECC_DBE_VOL_TOTAL, in::ConvertEccUll),
    Fi(F(312, "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", "", kI, "count",
         "Total single-bit persistent ECC errors."),
       NVML_FI_DEV_ECC_SBE_AGG_TOTAL, in::ConvertEccUll),
    Fi(F(313, "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", "", kI, "count",
         "Total double-bit persistent ECC errors."),
       NVML_FI_DEV_ECC_DBE_AGG_TOTAL, in::ConvertEccUll),
    Rd(F(390, "DCGM_FI_DEV_RETIRED_SBE", "DCGM_FI_DEV_PAGE_RETIRED_SBE_TOTAL", kI, "count",
         "Total number of pages retired due to single-bit errors."),
       in::ReadRetiredSbe),
    Fi(F(391, "DCGM_FI_DEV_RETIRED_DBE", "DCGM_FI_DEV_PAGE_RETIRED_DBE_TOTAL", kI, "count",
         "Total number of pages retired due to double-bit errors."),
       NVML_FI_DEV_RETIRED_DBE, in::ConvertInteger),
    Fi(F(392, "DCGM_FI_DEV_RETIRED_PENDING", "DCGM_FI_DEV_PAGE_RETIRED_PENDING", kI, "",
         "Pages pending retirement (1 = yes)."),
       NVML_FI_DEV_RETIRED_PENDING, in::ConvertInteger),
    Rd(F(393, "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
         "DCGM_FI_DEV_ROW_REMAP_UNCORRECTABLE_TOTAL", kI, "count",
         "Number of remapped rows for uncorrectable errors."),
       in::ReadRemappedUncorrectable),
    Rd(F(394, "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "DCGM_FI_DEV_ROW_REMAP_CORRECTABLE_TOTAL",
         kI, "count", "Number of remapped rows for correctable errors."),
       in::ReadRemappedCorrectable),
    Rd(F(395, "DCGM_FI_DEV_ROW_REMAP_FAILURE", "DCGM_FI_DEV_ROW_REMAP_FAILED", kI, "",
         "Whether remapping of rows has failed (1 = yes)."),
       in::ReadRemapFailure),
    Rd(F(396, "DCGM_FI_DEV_ROW_REMAP_PENDING", "", kI, "",
         "Whether a row remapping is pending a GPU reset (1 = yes)."),
       in::ReadRemapPending),
    Fi(F(409, "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL",
         "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_TOTAL", kI, "count",
         "Total NVLink flow-control CRC errors."),
       NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL, in::ConvertInteger),
    Fi(F(419, "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL",
         "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_TOTAL", kI, "count", "Total NVLink data CRC errors."),
       NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL, in::ConvertInteger),
    Fi(F(429, "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL",
         "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_TOTAL", kI, "count", "Total NVLink retries."),
       NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL, in::ConvertInteger),
    Fi(F(439, "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL",
         "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_TOTAL", kI, "count", "Total NVLink recovery errors."),
       NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL, in::ConvertInteger),
    Rate(
        F(449, "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "DCGM_FI_DEV_NVLINK_THROUGHPUT_TOTAL", kI,
          "MB/s",
          "NVLink bandwidth over all links, RX + TX (in MB/s, averaged since the previous read).")),
    Rd(F(526, "DCGM_FI_DEV_VGPU_LICENSE_STATUS", "", kI, "", "vGPU license status (1 = licensed)."),
       in::ReadVgpuLicenseStatus),
    Gpm(F(1001, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO", kD, "ratio",
          "Ratio of time the graphics engine is active."),
        1, kPercentToRatio),
    Gpm(F(1002, "DCGM_FI_PROF_SM_ACTIVE", "DCGM_FI_PROF_SM_UTIL_RATIO", kD, "ratio",
          "Ratio of cycles an SM has at least one warp assigned."),
        2, kPercentToRatio),
    Gpm(F(1003, "DCGM_FI_PROF_SM_OCCUPANCY", "DCGM_FI_PROF_SM_OCCUPANCY_RATIO", kD, "ratio",
          "Ratio of resident warps to the maximum, per SM."),
        3, kPercentToRatio),
    Gpm(F(1004, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_PROF_TENSOR_UTIL_RATIO", kD, "ratio",
          "Ratio of cycles any tensor pipe is active."),
        5, kPercentToRatio),
    Gpm(F(1005, "DCGM_FI_PROF_DRAM_ACTIVE", "DCGM_FI_PROF_DRAM_UTIL_RATIO", kD, "ratio",
          "Ratio of cycles the device memory interface is active."),
        10, kPercentToRatio),
    Gpm(F(1006, "DCGM_FI_PROF_PIPE_FP64_ACTIVE", "DCGM_FI_PROF_FP64_UTIL_RATIO", kD, "ratio",
          "Ratio of cycles the FP64 pipe is active."),
        11, kPercentToRatio),
    Gpm(F(1007, "DCGM_FI_PROF_PIPE_FP32_ACTIVE", "DCGM_FI_PROF_FP32_UTIL_RATIO", kD, "ratio",
          "Ratio of cycles the FP32 pipe is active."),
        12, kPercentToRatio),
    Gpm(F(1008, "DCGM_FI_PROF_PIPE_FP16_ACTIVE", "DCGM_FI_PROF_FP16_UTIL_RATIO", kD, "ratio",
          "Ratio of cycles the FP16 pipe is active."),
        13, kPercentToRatio),
    Gpm(F(1009, "DCGM_FI_PROF_PCIE_TX_BYTES", "", kI, "B/s",
          "PCIe transmitted data, header and payload (in B/s)."),
        20, kMibToBytes),
    Gpm(F(1010, "DCGM_FI_PROF_PCIE_RX_BYTES", "", kI, "B/s",
          "PCIe received data, header and payload (in B/s)."),
        21, kMibToBytes),
    Gpm(F(1011, "DCGM_FI_PROF_NVLINK_TX_BYTES", "", kI, "B/s",
          "NVLink transmitted data, header and payload (in B/s)."),
        61, kMibToBytes),
    Gpm(F(1012, "DCGM_FI_PROF_NVLINK_RX_BYTES", "", kI, "B/s",
          "NVLink received data, header and payload (in B/s)."),
        60, kMibToBytes),
    Gpm(F(1013, "DCGM_FI_PROF_PIPE_TENSOR_IMMA_ACTIVE", "DCGM_FI_PROF_IMMA_UTIL_RATIO", kD, "ratio",
          "Ratio of cycles the integer tensor (IMMA) pipe is active."),
        9, kPercentToRatio),
    Gpm(F(1014, "DCGM_FI_PROF_PIPE_TENSOR_HMMA_ACTIVE", "DCGM_FI_PROF_HMMA_UTIL_RATIO", kD, "ratio",
          "Ratio of cycles the half-precision tensor (HMMA) pipe is active."),
        7, kPercentToRatio),
    Gpm(F(1015, "DCGM_FI_PROF_PIPE_TENSOR_DFMA_ACTIVE", "DCGM_FI_PROF_DFMA_UTIL_RATIO", kD, "ratio",
          "Ratio of cycles the FP64 tensor (DFMA) pipe is active."),
        6, kPercentToRatio),
    Gpm(F(1016, "DCGM_FI_PROF_PIPE_INT_ACTIVE", "DCGM_FI_PROF_INT_UTIL_RATIO", kD, "ratio",
          "Ratio of cycles the integer pipe is active."),
        4, kPercentToRatio),
    Gpm(F(1017, "DCGM_FI_PROF_NVDEC0_ACTIVE", "DCGM_FI_PROF_NVDEC_UTIL_0_RATIO", kD, "ratio",
          "Ratio of time NVDEC engine 0 is active."),
        30, kPercentToRatio),
    Gpm(F(1018, "DCGM_FI_PROF_NVDEC1_ACTIVE", "DCGM_FI_PROF_NVDEC_UTIL_1_RATIO", kD, "ratio",
          "Ratio of time NVDEC engine 1 is active."),
        31, kPercentToRatio),
    Gpm(F(1019, "DCGM_FI_PROF_NVDEC2_ACTIVE", "DCGM_FI_PROF_NVDEC_UTIL_2_RATIO", kD, "ratio",
          "Ratio of time NVDEC engine 2 is active."),
        32, kPercentToRatio),
    Gpm(F(1020, "DCGM_FI_PROF_NVDEC3_ACTIVE", "DCGM_FI_PROF_NVDEC_UTIL_3_RATIO", kD, "ratio",
          "Ratio of time NVDEC engine 3 is active."),
        33, kPercentToRatio),
    Gpm(F(1021, "DCGM_FI_PROF_NVDEC4_ACTIVE", "DCGM_FI_PROF_NVDEC_UTIL_4_RATIO", kD, "ratio",
          "Ratio of time NVDEC engine 4 is active."),
        34, kPercentToRatio),
    Gpm(F(1022, "DCGM_FI_PROF_NVDEC5_ACTIVE", "DCGM_FI_PROF_NVDEC_UTIL_5_RATIO", kD, "ratio",
          "Ratio of time NVDEC engine 5 is active."),
        35, kPercentToRatio),
    Gpm(F(1023, "DCGM_FI_PROF_NVDEC6_ACTIVE", "DCGM_FI_PROF_NVDEC_UTIL_6_RATIO", kD, "ratio",
          "Ratio of time NVDEC engine 6 is active."),
        36, kPercentToRatio),
    Gpm(F(1024, "DCGM_FI_PROF_NVDEC7_ACTIVE", "DCGM_FI_PROF_NVDEC_UTIL_7_RATIO", kD, "ratio",
          "Ratio of time NVDEC engine 7 is active."),
        37, kPercentToRatio),
    Gpm(F(1025, "DCGM_FI_PROF_NVJPG0_ACTIVE", "DCGM_FI_PROF_NVJPG_UTIL_0_RATIO", kD, "ratio",
          "Ratio of time NVJPG engine 0 is active."),
        40, kPercentToRatio),
    Gpm(F(1026, "DCGM_FI_PROF_NVJPG1_ACTIVE", "DCGM_FI_PROF_NVJPG_UTIL_1_RATIO", kD, "ratio",
          "Ratio of time NVJPG engine 1 is active."),
        41, kPercentToRatio),
    Gpm(F(1027, "DCGM_FI_PROF_NVJPG2_ACTIVE", "DCGM_FI_PROF_NVJPG_UTIL_2_RATIO", kD, "ratio",
          "Ratio of time NVJPG engine 2 is active."),
        42, kPercentToRatio),
    Gpm(F(1028, "DCGM_FI_PROF_NVJPG3_ACTIVE", "DCGM_FI_PROF_NVJPG_UTIL_3_RATIO", kD, "ratio",
          "Ratio of time NVJPG engine 3 is active."),
        43, kPercentToRatio),
    Gpm(F(1029, "DCGM_FI_PROF_NVJPG4_ACTIVE", "DCGM_FI_PROF_NVJPG_UTIL_4_RATIO", kD, "ratio",
          "Ratio of time NVJPG engine 4 is active."),
        44, kPercentToRatio),
    Gpm(F(1030, "DCGM_FI_PROF_NVJPG5_ACTIVE", "DCGM_FI_PROF_NVJPG_UTIL_5_RATIO", kD, "ratio",
          "Ratio of time NVJPG engine 5 is active."),
        45, kPercentToRatio),
    Gpm(F(1031, "DCGM_FI_PROF_NVJPG6_ACTIVE", "DCGM_FI_PROF_NVJPG_UTIL_6_RATIO", kD, "ratio",
          "Ratio of time NVJPG engine 6 is active."),
        46, kPercentToRatio),
    Gpm(F(1032, "DCGM_FI_PROF_NVJPG7_ACTIVE", "DCGM_FI_PROF_NVJPG_UTIL_7_RATIO", kD, "ratio",
          "Ratio of time NVJPG engine 7 is active."),
        47, kPercentToRatio),
    Gpm(F(1033, "DCGM_FI_PROF_NVOFA0_ACTIVE", "DCGM_FI_PROF_NVOFA_UTIL_0_RATIO", kD, "ratio",
          "Ratio of time NVOFA engine 0 is active."),
        50, kPercentToRatio),
    Gpm(F(1034, "DCGM_FI_PROF_NVOFA1_ACTIVE", "DCGM_FI_PROF_NVOFA_UTIL_1_RATIO", kD, "ratio",
          "Ratio of time NVOFA engine 1 is active."),
        51, kPercentToRatio),
    Gpm(F(1040, "DCGM_FI_PROF_NVLINK_L0_TX_BYTES", "", kI, "B/s",
          "NVLink link 0 transmitted data (in B/s)."),
        63, kMibToBytes),
    Gpm(F(1041, "DCGM_FI_PROF_NVLINK_L0_RX_BYTES", "", kI, "B/s",
          "NVLink link 0 received data (in B/s)."),
        62, kMibToBytes),
    Gpm(F(1042, "DCGM_FI_PROF_NVLINK_L1_TX_BYTES", "", kI, "B/s",
          "NVLink link 1 transmitted data (in B/s)."),
        65, kMibToBytes),
    Gpm(F(1043, "DCGM_FI_PROF_NVLINK_L1_RX_BYTES", "", kI, "B/s",
          "NVLink link 1 received data (in B/s)."),
        64, kMibToBytes),
    Gpm(F(1044, "DCGM_FI_PROF_NVLINK_L2_TX_BYTES", "", kI, "B/s",
          "NVLink link 2 transmitted data (in B/s)."),
        67, kMibToBytes),
    Gpm(F(1045, "DCGM_FI_PROF_NVLINK_L2_RX_BYTES", "", kI, "B/s",
          "NVLink link 2 received data (in B/s)."),
        66, kMibToBytes),
    Gpm(F(1046, "DCGM_FI_PROF_NVLINK_L3_TX_BYTES", "", kI, "B/s",
          "NVLink link 3 transmitted data (in B/s)."),
        69, kMibToBytes),
    Gpm(F(1047, "DCGM_FI_PROF_NVLINK_L3_RX_BYTES", "", kI, "B/s",
          "NVLink link 3 received data (in B/s)."),
        68, kMibToBytes),
    Gpm(F(1048, "DCGM_FI_PROF_NVLINK_L4_TX_BYTES", "", kI, "B/s",
          "NVLink link 4 transmitted data (in B/s)."),
        71, kMibToBytes),
    Gpm(F(1049, "DCGM_FI_PROF_NVLINK_L4_RX_BYTES", "", kI, "B/s",
          "NVLink link 4 received data (in B/s)."),
        70, kMibToBytes),
    Gpm(F(1050, "DCGM_FI_PROF_NVLINK_L5_TX_BYTES", "", kI, "B/s",
          "NVLink link 5 transmitted data (in B/s)."),
        73, kMibToBytes),
    Gpm(F(1051, "DCGM_FI_PROF_NVLINK_L5_RX_BYTES", "", kI, "B/s",
          "NVLink link 5 received data (in B/s)."),
        72, kMibToBytes),
    Gpm(F(1052, "DCGM_FI_PROF_NVLINK_L6_TX_BYTES", "", kI, "B/s",
          "NVLink link 6 transmitted data (in B/s)."),
        75, kMibToBytes),
    Gpm(F(1053, "DCGM_FI_PROF_NVLINK_L6_RX_BYTES", "", kI, "B/s",
          "NVLink link 6 received data (in B/s)."),
        74, kMibToBytes),
    Gpm(F(1054, "DCGM_FI_PROF_NVLINK_L7_TX_BYTES", "", kI, "B/s",
          "NVLink link 7 transmitted data (in B/s)."),
        77, kMibToBytes),
    Gpm(F(1055, "DCGM_FI_PROF_NVLINK_L7_RX_BYTES", "", kI, "B/s",
          "NVLink link 7 received data (in B/s)."),
        76, kMibToBytes),
    Gpm(F(1056, "DCGM_FI_PROF_NVLINK_L8_TX_BYTES", "", kI, "B/s",
          "NVLink link 8 transmitted data (in B/s)."),
        79, kMibToBytes),
    Gpm(F(1057, "DCGM_FI_PROF_NVLINK_L8_RX_BYTES", "", kI, "B/s",
          "NVLink link 8 received data (in B/s)."),
        78, kMibToBytes),
    Gpm(F(1058, "DCGM_FI_PROF_NVLINK_L9_TX_BYTES", "", kI, "B/s",
          "NVLink link 9 transmitted data (in B/s)."),
        81, kMibToBytes),
    Gpm(F(1059, "DCGM_FI_PROF_NVLINK_L9_RX_BYTES", "", kI, "B/s",
          "NVLink link 9 received data (in B/s)."),
        80, kMibToBytes),
    Gpm(F(1060, "DCGM_FI_PROF_NVLINK_L10_TX_BYTES", "", kI, "B/s",
          "NVLink link 10 transmitted data (in B/s)."),
        83, kMibToBytes),
    Gpm(F(1061, "DCGM_FI_PROF_NVLINK_L10_RX_BYTES", "", kI, "B/s",
          "NVLink link 10 received data (in B/s)."),
        82, kMibToBytes),
    Gpm(F(1062, "DCGM_FI_PROF_NVLINK_L11_TX_BYTES", "", kI, "B/s",
          "NVLink link 11 transmitted data (in B/s)."),
        85, kMibToBytes),
    Gpm(F(1063, "DCGM_FI_PROF_NVLINK_L11_RX_BYTES", "", kI, "B/s",
          "NVLink link 11 received data (in B/s)."),
        84, kMibToBytes),
    Gpm(F(1064, "DCGM_FI_PROF_NVLINK_L12_TX_BYTES", "", kI, "B/s",
          "NVLink link 12 transmitted data (in B/s)."),
        87, kMibToBytes),
    Gpm(F(1065, "DCGM_FI_PROF_NVLINK_L12_RX_BYTES", "", kI, "B/s",
          "NVLink link 12 received data (in B/s)."),
        86, kMibToBytes),
    Gpm(F(1066, "DCGM_FI_PROF_NVLINK_L13_TX_BYTES", "", kI, "B/s",
          "NVLink link 13 transmitted data (in B/s)."),
        89, kMibToBytes),
    Gpm(F(1067, "DCGM_FI_PROF_NVLINK_L13_RX_BYTES", "", kI, "B/s",
          "NVLink link 13 received data (in B/s)."),
        88, kMibToBytes),
    Gpm(F(1068, "DCGM_FI_PROF_NVLINK_L14_TX_BYTES", "", kI, "B/s",
          "NVLink link 14 transmitted data (in B/s)."),
        91, kMibToBytes),
    Gpm(F(1069, "DCGM_FI_PROF_NVLINK_L14_RX_BYTES", "", kI, "B/s",
          "NVLink link 14 received data (in B/s)."),
        90, kMibToBytes),
    Gpm(F(1070, "DCGM_FI_PROF_NVLINK_L15_TX_BYTES", "", kI, "B/s",
          "NVLink link 15 transmitted data (in B/s)."),
        93, kMibToBytes),
    Gpm(F(1071, "DCGM_FI_PROF_NVLINK_L15_RX_BYTES", "", kI, "B/s",
          "NVLink link 15 received data (in B/s)."),
        92, kMibToBytes),
    Gpm(F(1072, "DCGM_FI_PROF_NVLINK_L16_TX_BYTES", "", kI, "B/s",
          "NVLink link 16 transmitted data (in B/s)."),
        95, kMibToBytes),
    Gpm(F(1073, "DCGM_FI_PROF_NVLINK_L16_RX_BYTES", "", kI, "B/s",
          "NVLink link 16 received data (in B/s)."),
        94, kMibToBytes),
    Gpm(F(1074, "DCGM_FI_PROF_NVLINK_L17_TX_BYTES", "", kI, "B/s",
          "NVLink link 17 transmitted data (in B/s)."),
        97, kMibToBytes),
    Gpm(F(1075, "DCGM_FI_PROF_NVLINK_L17_RX_BYTES", "", kI, "B/s",
          "NVLink link 17 received data (in B/s)."),
        96, kMibToBytes),
    Gpm(F(1076, "DCGM_FI_PROF_C2C_TX_ALL_BYTES", "", kI, "B/s",
          "C2C transmitted data, header and payload (in B/s)."),
        100, kMibToBytes),
    Gpm(F(1077, "DCGM_FI_PROF_C2C_TX_DATA_BYTES", "", kI, "B/s",
          "C2C transmitted payload data (in B/s)."),
        102, kMibToBytes),
    Gpm(F(1078, "DCGM_FI_PROF_C2C_RX_ALL_BYTES", "", kI, "B/s",
          "C2C received data, header and payload (in B/s)."),
        101, kMibToBytes),
    Gpm(F(1079, "DCGM_FI_PROF_C2C_RX_DATA_BYTES", "", kI, "B/s",
          "C2C received payload data (in B/s)."),
        103, kMibToBytes),
    Gpm(F(1080, "DCGM_FI_PROF_HOSTMEM_CACHE_HIT", "", kD, "%",
          "Host memory requests served from cache (in %)."),
        160, 1),
    Gpm(F(1081, "DCGM_FI_PROF_HOSTMEM_CACHE_MISS", "", kD, "%",
          "Host memory requests missing the cache (in %)."),
        161, 1),
    Gpm(F(1082, "DCGM_FI_PROF_PEERMEM_CACHE_HIT", "", kD, "%",
          "Peer memory requests served from cache (in %)."),
        162, 1),
    Gpm(F(1083, "DCGM_FI_PROF_PEERMEM_CACHE_MISS", "", kD, "%",
          "Peer memory requests missing the cache (in %)."),
        163, 1),
    Gpm(F(1084, "DCGM_FI_PROF_SM_CYCLES_ELAPSED_TOTAL", "", kI, "count",
          "Total SM cycles elapsed since boot."),
        248, 1),
    Gpm(F(1085, "DCGM_FI_PROF_SM_CYCLES_ACTIVE_TOTAL", "", kI, "count",
          "Total SM cycles active since boot."),
        249, 1),
    Gpm(F(1086, "DCGM_FI_PROF_MMA_CYCLES_ACTIVE_TOTAL", "", kI, "count",
          "Total tensor (MMA) cycles active since boot."),
        250, 1),
    Gpm(F(1087, "DCGM_FI_PROF_DMMA_CYCLES_ACTIVE_TOTAL", "", kI, "count",
          "Total FP64 tensor (DMMA) cycles active since boot."),
        251, 1),
    Gpm(F(1088, "DCGM_FI_PROF_HMMA_CYCLES_ACTIVE_TOTAL", "", kI, "count",
          "Total half-precision tensor (HMMA) cycles active since boot."),
        252, 1),
    Gpm(F(1089, "DCGM_FI_PROF_IMMA_CYCLES_ACTIVE_TOTAL", "", kI, "count",
          "Total integer tensor (IMMA) cycles active since boot."),
        253, 1),
    Gpm(F(1090, "DCGM_FI_PROF_DFMA_CYCLES_ACTIVE_TOTAL", "", kI, "count",
          "Total DFMA tensor cycles active since boot."),
        254, 1),
    Gpm(F(1091, "DCGM_FI_PROF_PCIE_TX_BYTES_TOTAL", "", kI, "B",
          "Total PCIe bytes transmitted since boot."),
        255, 1),
    Gpm(F(1092, "DCGM_FI_PROF_PCIE_RX_BYTES_TOTAL", "", kI, "B",
          "Total PCIe bytes received since boot."),
        256, 1),
    Gpm(F(1093, "DCGM_FI_PROF_INT_CYCLES_ACTIVE_TOTAL", "", kI, "count",
          "Total integer pipe cycles active since boot."),
        257, 1),
    Gpm(F(1094, "DCGM_FI_PROF_FP64_CYCLES_ACTIVE_TOTAL", "", kI, "count",
          "Total FP64 pipe cycles active since boot."),
        258, 1),
    Gpm(F(1095, "DCGM_FI_PROF_FP32_CYCLES_ACTIVE_TOTAL", "", kI, "count",
          "Total FP32 pipe cycles active since boot."),
        259, 1),
    Gpm(F(1096, "DCGM_FI_PROF_FP16_CYCLES_ACTIVE_TOTAL", "", kI, "count",
          "Total FP16 pipe cycles active since boot."),
        260, 1),
    Fi(F(1420, "DCGM_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP_NS", "", kI, "ns",
         "Time clocks were held down by the software power cap (in ns)."),
       NVML_FI_DEV_PERF_POLICY_POWER, in::ConvertInteger, kSlow),
    Fi(F(1421, "DCGM_FI_DEV_CLOCKS_EVENT_REASON_SYNC_BOOST_NS", "", kI, "ns",
         "Time clocks were held down by sync boost (in ns)."),
       NVML_FI_DEV_PERF_POLICY_SYNC_BOOST, in::ConvertInteger, kSlow),
    Fi(F(1422, "DCGM_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN_NS", "", kI, "ns",
         "Time clocks were held down by software thermal slowdown (in ns)."),
       NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN, in::ConvertClockEventNs, kSlow),
    Fi(F(1423, "DCGM_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN_NS", "", kI, "ns",
         "Time clocks were held down by hardware thermal slowdown (in ns)."),
       NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN, in::ConvertClockEventNs, kSlow),
    Fi(F(1424, "DCGM_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN_NS", "", kI, "ns",
         "Time clocks were held down by the hardware power brake (in ns)."),
       NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN, in::ConvertClockEventNs, kSlow),
    Fi(F(1501, "DCGM_FI_DEV_PCIE_COUNT_CORRECTABLE_ERRORS",
         "DCGM_FI_DEV_PCIE_CORRECTABLE_ERROR_TOTAL", kI, "count", "Total PCIe correctable errors."),
       NVML_FI_DEV_PCIE_COUNT_CORRECTABLE_ERRORS, in::ConvertInteger),
    As(F(ids::kXidErrorsCount, "DCGM_EXP_XID_ERRORS_COUNT", "", kI, "count",
         "Count of XID errors within the window, per XID value."),
       Source::kExporter),
    As(F(ids::kClockEventsCount, "DCGM_EXP_CLOCK_EVENTS_COUNT", "", kI, "count",
         "Count of clock events within the window, per reason."),
       Source::kExporter),
    As(F(ids::kGpuHealthStatus, "DCGM_EXP_GPU_HEALTH_STATUS", "", kI, "",
         "GPU health per watch (0 = pass, 10 = warn, 20 = fail)."),
       Source::kExporter),
    As(F(ids::kP2pStatus, "DCGM_EXP_P2P_STATUS", "", kI, "",
         "Peer-to-peer link status to each other GPU (0 = OK)."),
       Source::kExporter),
    // dcgm-exporter 4.8.3's opt-in monotonic counters (docs/upstream/total-counters.md).
    As(F(ids::kXidErrorsTotal, "DCGM_EXP_XID_ERRORS_TOTAL", "", kI, "count",
         "XID errors since the exporter started, per XID value."),
       Source::kExporter),
    As(F(ids::kClockEventsTotal, "DCGM_EXP_CLOCK_EVENTS_TOTAL", "", kI, "count",
         "Clock-event reasons turning active since the exporter started, per reason."),
       Source::kExporter),
};

// Two ascending tables merged into one, ascending id.
template <size_t A, size_t B>
constexpr std::array<FieldDef, A + B> Merge(const std::array<FieldDef, A>& a,
                                            const std::array<FieldDef, B>& b) {
  std::array<FieldDef, A + B> out{};
  size_t i = 0, j = 0, n = 0;
  while (i < A || j < B) {
    const bool take_a = j == B || (i < A && a[i].id < b[j].id);
    out[n++] = take_a ? a[i++] : b[j++];
  }
  return out;
}
template <size_t N>
constexpr std::array<FieldDef, N> ToArray(const FieldDef (&rows)[N]) {
  std::array<FieldDef, N> out{};
  for (size_t i = 0; i < N; ++i) out[i] = rows[i];
  return out;
}

// The table: kListed merged with the per-link NVLink rows of catalog_nvlink.h (rates and error
// counters) and the base-unit and fabric rows of catalog_base_units.h, ascending id.
constexpr auto kFields =
    Merge(Merge(Merge(ToArray(kListed), in::NvlinkRateFields()), in::NvlinkErrorFields()),
          in::BaseUnitFields());

constexpr bool AscendingUniqueIds() {
  for (size_t i = 1; i < std::size(kFields); ++i) {
    if (kFields[i - 1].id >= kFields[i].id) return false;
  }
  return true;
}
static_assert(AscendingUniqueIds(), "kFields must be sorted by id: FindById bisects it");

// Legacy names: the 1.x lower-case names of dcgm-exporter's 1.x-compatibility-metrics.csv and
// go-dcgm's legacyDCGMFields, and deprecated DCGM_FI_* spellings.
constexpr FieldAlias kAliases[] = {
    {"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", 112},  // renamed to CLOCKS_EVENT_REASONS in R535
    {"dcgm_sm_clock", 100},
    {"dcgm_memory_clock", 101},
    // Not in go-dcgm's map, but written that way in older docs and dashboards.
    {"dcgm_mem_clock", 101},
    {"dcgm_memory_temp", 140},
    {"dcgm_gpu_temp", 150},
    {"dcgm_power_usage", 155},
    {"dcgm_total_energy_consumption", 156},
    {"dcgm_pcie_tx_throughput", 200},
    {"dcgm_pcie_rx_throughput", 201},
    {"dcgm_pcie_replay_counter", 202},
    {"dcgm_gpu_utilization", 203},
    {"dcgm_mem_copy_utilization", 204},
    {"dcgm_enc_utilization", 206},
    {"dcgm_dec_utilization", 207},
    {"dcgm_xid_errors", ids::kXidErrors},
    {"dcgm_power_violation", 240},
    {"dcgm_thermal_violation", 241},
    {"dcgm_sync_boost_violation", 242},
    {"dcgm_board_limit_violation", 243},
    {"dcgm_low_util_violation", 244},
    {"dcgm_reliability_violation", 245},
    {"dcgm_fb_free", 251},
    {"dcgm_fb_used", 252},
    {"dcgm_ecc_sbe_volatile_total", 310},
    {"dcgm_ecc_dbe_volatile_total", 311},
    {"dcgm_ecc_sbe_aggregate_total", 312},
    {"dcgm_ecc_dbe_aggregate_total", 313},
    {"dcgm_retired_pages_sbe", 390},
    {"dcgm_retired_pages_dbe", 391},
    {"dcgm_retired_pages_pending", 392},
    {"dcgm_nvlink_flit_crc_error_count_total", 409},
    {"dcgm_nvlink_data_crc_error_count_total", 419},
    {"dcgm_nvlink_replay_error_count_total", 429},
    {"dcgm_nvlink_recovery_error_count_total", 439},
    {"dcgm_nvlink_bandwidth_total", 449},
    {"dcgm_fi_prof_gr_engine_active", 1001},
    {"dcgm_fi_prof_sm_active", 1002},
    {"dcgm_fi_prof_sm_occupancy", 1003},
    {"dcgm_fi_prof_pipe_tensor_active", 1004},
    {"dcgm_fi_prof_dram_active", 1005},
    {"dcgm_fi_prof_pcie_tx_bytes", 1009},
    {"dcgm_fi_prof_pcie_rx_bytes", 1010},
};

}  // namespace

std::span<const FieldDef> AllFields() { return kFields; }

std::span<const FieldAlias> AllAliases() { return kAliases; }

const FieldDef* FindById(int id) {
  const FieldDef* first = kFields.data();
  const FieldDef* last = first + kFields.size();
  const FieldDef* it =
      std::lower_bound(first, last, id, [](const FieldDef& f, int v) { return f.id < v; });
  return (it != last && it->id == id) ? it : nullptr;
}

Result<model::Value> FromGpm(const FieldDef& f, double gpm_value) {
  if (f.gpm_metric_id == 0) return InvalidArgument(std::string(f.name) + " has no GPM metric");
  const double v = gpm_value * f.gpm_scale;
  // GPM answers averages over a window: a negative or non-finite one is not a measurement.
  if (!std::isfinite(v) || v < 0) {
    return Internal("GPM metric " + std::to_string(f.gpm_metric_id) + " gave " +
                    std::to_string(gpm_value));
  }
  if (f.kind == ValueKind::kDouble) return model::Value(v);
  if (v >= 9.2e18) return Internal("GPM metric " + std::to_string(f.gpm_metric_id) + " overflows");
  return model::Value(static_cast<int64_t>(v));
}

}  // namespace nvmlx::fields
