// Internal to src/fields: the ConvertFns and ReadFns the catalog table points at, and the pure
// helpers behind them (exposed here so that the tests can call them on hand-built inputs).
//
// All functions are stateless; ReadFns touch only their ReadContext (one collecting thread).
#ifndef NVML_EXPORTER_FIELDS_CONVERSIONS_H_
#define NVML_EXPORTER_FIELDS_CONVERSIONS_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "fields/catalog.h"

namespace nvmlx::fields::internal {

// --- Pure helpers ------------------------------------------------------------------------------
// nvmlBrandType_t -> the name DCGM reports for DCGM_FI_DEV_BRAND ("NVIDIA", "Tesla", ...).
std::string_view BrandName(int brand);
// bytes -> MiB, truncating (DCGM's bytes / (1024 * 1024) on integers).
int64_t BytesToMiB(uint64_t bytes);
// mW -> W the way DCGM does it for the power-limit fields: integer division, so 650500 -> 650.
double MilliwattsToWholeWatts(unsigned mw);
// MHz -> Hz (the DCGM 4.7 *_CLOCK_HERTZ fields: NVML counts clocks in whole MHz).
int64_t MhzToHz(unsigned mhz);
// Percent (0-100, fan speed may exceed 100) -> ratio (the DCGM 4.7 *_RATIO fields).
double PercentToRatio(unsigned percent);
// (cur - prev) per second / divisor, truncated. nullopt when no rate can be given: time did not
// advance, or the counter went backwards (driver reload, wrap).
std::optional<int64_t> CounterRate(uint64_t prev, int64_t prev_us, uint64_t cur, int64_t cur_us,
                                   double divisor);

// --- ConvertFns (one nvmlFieldValue_t element whose nvmlReturn was SUCCESS) ----------------------
// Any integer valueType (DOUBLE truncates); error on an unknown valueType.
Result<model::Value> ConvertInteger(const nvmlFieldValue_t& fv);
// ECC counters: value.ullVal whatever valueType says (DCGM forces ULL for the ECC range).
Result<model::Value> ConvertEccUll(const nvmlFieldValue_t& fv);
// FI 82: value.uiVal whatever valueType says (r545 reported DOUBLE); > 200 C is an error.
Result<model::Value> ConvertMemoryTemp(const nvmlFieldValue_t& fv);
// FI 269-271: valueType must be ULL (ns); anything else means the id moved between headers.
Result<model::Value> ConvertClockEventNs(const nvmlFieldValue_t& fv);
// Integer mW -> double W (/1000.0), e.g. FI 186 POWER_INSTANT.
Result<model::Value> ConvertMilliwattsToWatts(const nvmlFieldValue_t& fv);
// Integer mJ -> double J (/1000.0): FI 83 for DCGM_FI_DEV_GPU_ENERGY_JOULES_TOTAL.
Result<model::Value> ConvertMillijoulesToJoules(const nvmlFieldValue_t& fv);
// Integer ns -> double s (/1e9): FI 74-81 for the *_THROTTLE_SECONDS_TOTAL fields.
Result<model::Value> ConvertNanosecondsToSeconds(const nvmlFieldValue_t& fv);

// --- ReadFns -------------------------------------------------------------------------------------
// System (the device in the context is ignored).
Result<model::Value> ReadDriverVersion(ReadContext& ctx);
Result<model::Value> ReadNvmlVersion(ReadContext& ctx);
// Identity / label fields.
Result<model::Value> ReadName(ReadContext& ctx);
Result<model::Value> ReadBrand(ReadContext& ctx);
Result<model::Value> ReadSerial(ReadContext& ctx);
Result<model::Value> ReadUuid(ReadContext& ctx);
Result<model::Value> ReadMinorNumber(ReadContext& ctx);
Result<model::Value> ReadOemInforom(ReadContext& ctx);
Result<model::Value> ReadPciBusId(ReadContext& ctx);
Result<model::Value> ReadEccInforom(ReadContext& ctx);
Result<model::Value> ReadPowerInforom(ReadContext& ctx);
Result<model::Value> ReadInforomImage(ReadContext& ctx);
Result<model::Value> ReadVbios(ReadContext& ctx);
// BAR1 (memoised).
Result<model::Value> ReadBar1Total(ReadContext& ctx);
Result<model::Value> ReadBar1Used(ReadContext& ctx);
Result<model::Value> ReadBar1Free(ReadContext& ctx);
// Clocks.
Result<model::Value> ReadSmClock(ReadContext& ctx);
Result<model::Value> ReadMemClock(ReadContext& ctx);
Result<model::Value> ReadVideoClock(ReadContext& ctx);
Result<model::Value> ReadClocksEventReasons(ReadContext& ctx);
Result<model::Value> ReadMaxSmClock(ReadContext& ctx);
Result<model::Value> ReadMaxMemClock(ReadContext& ctx);
Result<model::Value> ReadMaxVideoClock(ReadContext& ctx);
// Thermal and power.
Result<model::Value> ReadGpuTemp(ReadContext& ctx);
Result<model::Value> ReadPowerUsage(ReadContext& ctx);
Result<model::Value> ReadPowerMgmtLimit(ReadContext& ctx);
Result<model::Value> ReadPowerMgmtLimitMin(ReadContext& ctx);
Result<model::Value> ReadPowerMgmtLimitMax(ReadContext& ctx);
Result<model::Value> ReadPowerMgmtLimitDef(ReadContext& ctx);
Result<model::Value> ReadEnforcedPowerLimit(ReadContext& ctx);
Result<model::Value> ReadPstate(ReadContext& ctx);
Result<model::Value> ReadFanSpeed(ReadContext& ctx);
// PCIe.
Result<model::Value> ReadPcieTxThroughput(ReadContext& ctx);
Result<model::Value> ReadPcieRxThroughput(ReadContext& ctx);
Result<model::Value> ReadPcieReplay(ReadContext& ctx);
Result<model::Value> ReadPcieMaxLinkGen(ReadContext& ctx);
Result<model::Value> ReadPcieMaxLinkWidth(ReadContext& ctx);
Result<model::Value> ReadPcieLinkGen(ReadContext& ctx);
Result<model::Value> ReadPcieLinkWidth(ReadContext& ctx);
// Utilisation (GPU/MEM_COPY memoised).
Result<model::Value> ReadGpuUtil(ReadContext& ctx);
Result<model::Value> ReadMemCopyUtil(ReadContext& ctx);
Result<model::Value> ReadEncUtil(ReadContext& ctx);
Result<model::Value> ReadDecUtil(ReadContext& ctx);
// Frame buffer (memoised).
Result<model::Value> ReadFbTotal(ReadContext& ctx);
Result<model::Value> ReadFbFree(ReadContext& ctx);
Result<model::Value> ReadFbUsed(ReadContext& ctx);
Result<model::Value> ReadFbReserved(ReadContext& ctx);
Result<model::Value> ReadFbUsedPercent(ReadContext& ctx);
// Page retirement and row remapping (remapped rows memoised).
Result<model::Value> ReadRetiredSbe(ReadContext& ctx);
Result<model::Value> ReadRemappedUncorrectable(ReadContext& ctx);
Result<model::Value> ReadRemappedCorrectable(ReadContext& ctx);
Result<model::Value> ReadRemapFailure(ReadContext& ctx);
Result<model::Value> ReadRemapPending(ReadContext& ctx);
// vGPU.
Result<model::Value> ReadVgpuLicenseStatus(ReadContext& ctx);
// DCGM 4.7 base-unit twins of the fields above: the same NVML call (and memo), bytes instead of
// MiB, Hz instead of MHz, a 0-1 ratio instead of percent.
Result<model::Value> ReadBar1CapacityBytes(ReadContext& ctx);
Result<model::Value> ReadBar1UsedBytes(ReadContext& ctx);
Result<model::Value> ReadBar1FreeBytes(ReadContext& ctx);
Result<model::Value> ReadSmClockHz(ReadContext& ctx);
Result<model::Value> ReadMemClockHz(ReadContext& ctx);
Result<model::Value> ReadVideoClockHz(ReadContext& ctx);
Result<model::Value> ReadMaxSmClockHz(ReadContext& ctx);
Result<model::Value> ReadMaxMemClockHz(ReadContext& ctx);
Result<model::Value> ReadMaxVideoClockHz(ReadContext& ctx);
Result<model::Value> ReadFanSpeedRatio(ReadContext& ctx);
Result<model::Value> ReadGpuUtilRatio(ReadContext& ctx);
Result<model::Value> ReadMemoryUtilRatio(ReadContext& ctx);
Result<model::Value> ReadEncUtilRatio(ReadContext& ctx);
Result<model::Value> ReadDecUtilRatio(ReadContext& ctx);
Result<model::Value> ReadFbCapacityBytes(ReadContext& ctx);
Result<model::Value> ReadFbFreeBytes(ReadContext& ctx);
Result<model::Value> ReadFbUsedBytes(ReadContext& ctx);
Result<model::Value> ReadFbReservedBytes(ReadContext& ctx);
// GPU fabric health (nvmlDeviceGetGpuFabricInfoV, memoised): the mask, and the summary, which
// is NOT_SUPPORTED when the driver has only the v2 struct (DCGM reports it blank then).
Result<model::Value> ReadFabricHealthMask(ReadContext& ctx);
Result<model::Value> ReadFabricHealthSummary(ReadContext& ctx);
// One NVLink error counter of one link (nvmlDeviceGetNvLinkErrorCounter); catalog_nvlink.h binds
// link and counter per row.
Result<model::Value> ReadNvlinkErrorCounter(ReadContext& ctx, unsigned link,
                                            nvmlNvLinkErrorCounter_t counter);

}  // namespace nvmlx::fields::internal

#endif  // NVML_EXPORTER_FIELDS_CONVERSIONS_H_
