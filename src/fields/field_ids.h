// Named DCGM field ids: the ids (dcgm_fields.h numbering) that fields/ code besides the catalog
// table refers to (the special-field table, fields/field_roles.cc, above all). Only fields/ and
// tests include this header: the other stages ask fields/field_roles.h or the FieldPlan what a
// field is for, never compare ids. catalog_test checks each name against the catalog's entry.
//
// Thread-safety: compile-time constants.
#ifndef NVML_EXPORTER_FIELDS_FIELD_IDS_H_
#define NVML_EXPORTER_FIELDS_FIELD_IDS_H_

namespace nvmlx::fields::ids {

inline constexpr int kBar1Total = 90;            // DCGM_FI_DEV_BAR1_TOTAL
inline constexpr int kBar1Used = 92;             // DCGM_FI_DEV_BAR1_USED
inline constexpr int kBar1Free = 93;             // DCGM_FI_DEV_BAR1_FREE
inline constexpr int kClocksEventReasons = 112;  // DCGM_FI_DEV_CLOCKS_EVENT_REASONS (bitmask)
inline constexpr int kGpuTemp = 150;             // DCGM_FI_DEV_GPU_TEMP
inline constexpr int kPowerUsage = 155;          // DCGM_FI_DEV_POWER_USAGE
inline constexpr int kTotalEnergy = 156;         // DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION (mJ)
inline constexpr int kGpuUtil = 203;             // DCGM_FI_DEV_GPU_UTIL
inline constexpr int kXidErrors = 230;           // DCGM_FI_DEV_XID_ERRORS (the last Xid)
inline constexpr int kFbTotal = 250;             // DCGM_FI_DEV_FB_TOTAL
inline constexpr int kFbFree = 251;              // DCGM_FI_DEV_FB_FREE
inline constexpr int kFbUsed = 252;              // DCGM_FI_DEV_FB_USED
inline constexpr int kFbReserved = 253;          // DCGM_FI_DEV_FB_RESERVED
inline constexpr int kFbUsedPercent = 254;       // DCGM_FI_DEV_FB_USED_PERCENT
inline constexpr int kGrEngineActive = 1001;     // DCGM_FI_PROF_GR_ENGINE_ACTIVE
inline constexpr int kTensorActive = 1004;       // DCGM_FI_PROF_PIPE_TENSOR_ACTIVE
inline constexpr int kDramActive = 1005;         // DCGM_FI_PROF_DRAM_ACTIVE
inline constexpr int kBar1CapacityBytes = 1600;  // DCGM_FI_DEV_BAR1_CAPACITY_BYTES (DCGM 4.6.1)
inline constexpr int kBar1UsedBytes = 1601;      // DCGM_FI_DEV_BAR1_USED_BYTES
inline constexpr int kBar1FreeBytes = 1602;      // DCGM_FI_DEV_BAR1_FREE_BYTES
inline constexpr int kFbCapacityBytes = 1625;    // DCGM_FI_DEV_FB_CAPACITY_BYTES (DCGM 4.7)
inline constexpr int kFbFreeBytes = 1626;        // DCGM_FI_DEV_FB_FREE_BYTES
inline constexpr int kFbUsedBytes = 1627;        // DCGM_FI_DEV_FB_USED_BYTES
inline constexpr int kFbReservedBytes = 1628;    // DCGM_FI_DEV_FB_RESERVED_BYTES
inline constexpr int kXidErrorsCount = 9001;     // DCGM_EXP_XID_ERRORS_COUNT (windowed counts)
inline constexpr int kClockEventsCount = 9002;   // DCGM_EXP_CLOCK_EVENTS_COUNT (windowed counts)
inline constexpr int kGpuHealthStatus = 9003;    // DCGM_EXP_GPU_HEALTH_STATUS (per health watch)
inline constexpr int kP2pStatus = 9004;          // DCGM_EXP_P2P_STATUS (per peer GPU)
inline constexpr int kXidErrorsTotal = 9005;     // DCGM_EXP_XID_ERRORS_TOTAL (since start)
inline constexpr int kClockEventsTotal = 9006;   // DCGM_EXP_CLOCK_EVENTS_TOTAL (since start)

}  // namespace nvmlx::fields::ids

#endif  // NVML_EXPORTER_FIELDS_FIELD_IDS_H_
