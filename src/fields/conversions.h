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
// (cur - prev) per second / divisor, truncated. nullopt when no rate can be given: time did not
// advance, or the counter went backwards (driver reload, wrap).
std::optional<int64_t> CounterRate(uint64_t prev, int64_t prev_us, uint64_t cur, int64_t cur_us,
                                   double divisor);

// --- ConvertFns (one nvmlFieldValue_t element whose nvmlReturn was SUCCESS) ----------------------
// Any integer valueType (DOUBLE truncates); error on an unknown valueType.
Result<Value> ConvertInteger(const nvmlFieldValue_t& fv);
// ECC counters: value.ullVal whatever valueType says (DCGM forces ULL for the ECC range).
Result<Value> ConvertEccUll(const nvmlFieldValue_t& fv);
// FI 82: value.uiVal whatever valueType says (r545 reported DOUBLE); > 200 C is an error.
Result<Value> ConvertMemoryTemp(const nvmlFieldValue_t& fv);
// FI 269-271: valueType must be ULL (ns); anything else means the id moved between headers.
Result<Value> ConvertClockEventNs(const nvmlFieldValue_t& fv);
// Integer mW -> double W (/1000.0), e.g. FI 186 POWER_INSTANT.
Result<Value> ConvertMilliwattsToWatts(const nvmlFieldValue_t& fv);

// --- ReadFns -------------------------------------------------------------------------------------
// System (the device in the context is ignored).
Result<Value> ReadDriverVersion(ReadContext& ctx);
Result<Value> ReadNvmlVersion(ReadContext& ctx);
// Identity / label fields.
Result<Value> ReadName(ReadContext& ctx);
Result<Value> ReadBrand(ReadContext& ctx);
Result<Value> ReadSerial(ReadContext& ctx);
Result<Value> ReadUuid(ReadContext& ctx);
Result<Value> ReadMinorNumber(ReadContext& ctx);
Result<Value> ReadOemInforom(ReadContext& ctx);
Result<Value> ReadPciBusId(ReadContext& ctx);
Result<Value> ReadEccInforom(ReadContext& ctx);
Result<Value> ReadPowerInforom(ReadContext& ctx);
Result<Value> ReadInforomImage(ReadContext& ctx);
Result<Value> ReadVbios(ReadContext& ctx);
// BAR1 (memoised).
Result<Value> ReadBar1Total(ReadContext& ctx);
Result<Value> ReadBar1Used(ReadContext& ctx);
Result<Value> ReadBar1Free(ReadContext& ctx);
// Clocks.
Result<Value> ReadSmClock(ReadContext& ctx);
Result<Value> ReadMemClock(ReadContext& ctx);
Result<Value> ReadVideoClock(ReadContext& ctx);
Result<Value> ReadClocksEventReasons(ReadContext& ctx);
Result<Value> ReadMaxSmClock(ReadContext& ctx);
Result<Value> ReadMaxMemClock(ReadContext& ctx);
Result<Value> ReadMaxVideoClock(ReadContext& ctx);
// Thermal and power.
Result<Value> ReadGpuTemp(ReadContext& ctx);
Result<Value> ReadPowerUsage(ReadContext& ctx);
Result<Value> ReadPowerMgmtLimit(ReadContext& ctx);
Result<Value> ReadPowerMgmtLimitMin(ReadContext& ctx);
Result<Value> ReadPowerMgmtLimitMax(ReadContext& ctx);
Result<Value> ReadPowerMgmtLimitDef(ReadContext& ctx);
Result<Value> ReadEnforcedPowerLimit(ReadContext& ctx);
Result<Value> ReadPstate(ReadContext& ctx);
Result<Value> ReadFanSpeed(ReadContext& ctx);
// PCIe.
Result<Value> ReadPcieTxThroughput(ReadContext& ctx);
Result<Value> ReadPcieRxThroughput(ReadContext& ctx);
Result<Value> ReadPcieReplay(ReadContext& ctx);
Result<Value> ReadPcieMaxLinkGen(ReadContext& ctx);
Result<Value> ReadPcieMaxLinkWidth(ReadContext& ctx);
Result<Value> ReadPcieLinkGen(ReadContext& ctx);
Result<Value> ReadPcieLinkWidth(ReadContext& ctx);
// Utilisation (GPU/MEM_COPY memoised).
Result<Value> ReadGpuUtil(ReadContext& ctx);
Result<Value> ReadMemCopyUtil(ReadContext& ctx);
Result<Value> ReadEncUtil(ReadContext& ctx);
Result<Value> ReadDecUtil(ReadContext& ctx);
// Frame buffer (memoised).
Result<Value> ReadFbTotal(ReadContext& ctx);
Result<Value> ReadFbFree(ReadContext& ctx);
Result<Value> ReadFbUsed(ReadContext& ctx);
Result<Value> ReadFbReserved(ReadContext& ctx);
Result<Value> ReadFbUsedPercent(ReadContext& ctx);
// Page retirement and row remapping (remapped rows memoised).
Result<Value> ReadRetiredSbe(ReadContext& ctx);
Result<Value> ReadRemappedUncorrectable(ReadContext& ctx);
Result<Value> ReadRemappedCorrectable(ReadContext& ctx);
Result<Value> ReadRemapFailure(ReadContext& ctx);
Result<Value> ReadRemapPending(ReadContext& ctx);
// vGPU.
Result<Value> ReadVgpuLicenseStatus(ReadContext& ctx);

}  // namespace nvmlx::fields::internal

#endif  // NVML_EXPORTER_FIELDS_CONVERSIONS_H_
