#include "fields/conversions.h"

#include <string>
#include <utility>

namespace nvmlx::fields::internal {
namespace {

constexpr uint64_t kMiB = 1024ULL * 1024ULL;
// DCGM treats temperatures above this as garbage: GPU_TEMP drops them, MEMORY_TEMP errors.
constexpr unsigned kMaxPlausibleTempC = 200;

template <typename T>
Result<Value> AsInt(const Result<T>& r) {
  if (!r.ok()) return r.status();
  return Value(static_cast<int64_t>(*r));
}

Result<Value> AsString(const Result<std::string>& r) {
  if (!r.ok()) return r.status();
  return Value(*r);
}

Result<Value> AsWholeWatts(const Result<unsigned>& r) {
  if (!r.ok()) return r.status();
  return Value(MilliwattsToWholeWatts(*r));
}

const Result<nvml::MemoryInfo>& Memory(ReadContext& ctx) {
  if (!ctx.memory) ctx.memory.emplace(ctx.lib.Memory(ctx.device));
  return *ctx.memory;
}

const Result<nvml::Utilization>& Utilization(ReadContext& ctx) {
  if (!ctx.utilization) ctx.utilization.emplace(ctx.lib.UtilizationRates(ctx.device));
  return *ctx.utilization;
}

const Result<nvml::RemappedRows>& Remapped(ReadContext& ctx) {
  if (!ctx.remapped_rows) ctx.remapped_rows.emplace(ctx.lib.RemappedRowCounts(ctx.device));
  return *ctx.remapped_rows;
}

const Result<nvmlBAR1Memory_t>& Bar1(ReadContext& ctx) {
  if (!ctx.bar1) ctx.bar1.emplace(ctx.lib.Bar1Memory(ctx.device));
  return *ctx.bar1;
}

std::string TypeMismatch(const nvmlFieldValue_t& fv, std::string_view expected) {
  return "nvmlDeviceGetFieldValues: field " + std::to_string(fv.fieldId) + " has valueType " +
         std::to_string(static_cast<int>(fv.valueType)) + ", expected " + std::string(expected);
}

}  // namespace

// --- Pure helpers ------------------------------------------------------------------------------

std::string_view BrandName(int brand) {
  // nvmlBrandType_t values of the 13.3 header; names as DCGM/nvidia-smi spell them.
  switch (brand) {
    case 1:
      return "Quadro";
    case 2:
      return "Tesla";
    case 3:
      return "NVS";
    case 4:
      return "Grid";
    case 5:
      return "GeForce";
    case 6:
      return "Titan";
    case 7:
      return "NVIDIA Virtual Applications";
    case 8:
      return "NVIDIA Virtual PC";
    case 9:
      return "NVIDIA Virtual Compute Server";
    case 10:
      return "NVIDIA RTX Virtual Workstation";
    case 11:
      return "NVIDIA Cloud Gaming";
    case 12:
      return "Quadro RTX";
    case 13:
      return "NVIDIA RTX";
    case 14:
      return "NVIDIA";
    case 15:
      return "GeForce RTX";
    case 16:
      return "Titan RTX";
    default:
      return "Unknown";
  }
}

int64_t BytesToMiB(uint64_t bytes) { return static_cast<int64_t>(bytes / kMiB); }

// DCGM divides power limits as integers (mW / 1000), so watts come out truncated: kept on purpose.
double MilliwattsToWholeWatts(unsigned mw) {
  return static_cast<double>(mw / 1000U);  // NOLINT(bugprone-integer-division)
}

std::optional<int64_t> CounterRate(uint64_t prev, int64_t prev_us, uint64_t cur, int64_t cur_us,
                                   double divisor) {
  if (cur_us <= prev_us || cur < prev || divisor <= 0) return std::nullopt;
  const double seconds = static_cast<double>(cur_us - prev_us) / 1e6;
  return static_cast<int64_t>(static_cast<double>(cur - prev) / seconds / divisor);
}

// --- ConvertFns ----------------------------------------------------------------------------------

Result<Value> ConvertInteger(const nvmlFieldValue_t& fv) {
  switch (fv.valueType) {
    case NVML_VALUE_TYPE_DOUBLE:
      return Value(static_cast<int64_t>(fv.value.dVal));
    case NVML_VALUE_TYPE_UNSIGNED_INT:
      return Value(static_cast<int64_t>(fv.value.uiVal));
    case NVML_VALUE_TYPE_UNSIGNED_LONG:
      return Value(static_cast<int64_t>(fv.value.ulVal));
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
      return Value(static_cast<int64_t>(fv.value.ullVal));
    case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
      return Value(static_cast<int64_t>(fv.value.sllVal));
    case NVML_VALUE_TYPE_SIGNED_INT:
      return Value(static_cast<int64_t>(fv.value.siVal));
    case NVML_VALUE_TYPE_UNSIGNED_SHORT:
      return Value(static_cast<int64_t>(fv.value.usVal));
  }
  return Internal(TypeMismatch(fv, "an integer type"));
}

Result<Value> ConvertEccUll(const nvmlFieldValue_t& fv) {
  // An old NVML reported the ECC counters with a wrong valueType; DCGM ignores it and reads ull.
  return Value(static_cast<int64_t>(fv.value.ullVal));
}

Result<Value> ConvertMemoryTemp(const nvmlFieldValue_t& fv) {
  // r545 drivers said DOUBLE while writing an unsigned int; DCGM reads uiVal unconditionally.
  const unsigned c = fv.value.uiVal;
  if (c > kMaxPlausibleTempC) {
    return Internal("nvmlDeviceGetFieldValues: memory temperature " + std::to_string(c) +
                    " C is implausible (> 200)");
  }
  return Value(static_cast<int64_t>(c));
}

Result<Value> ConvertClockEventNs(const nvmlFieldValue_t& fv) {
  // These ids sat at 251-253 in the 12.9/13.0 headers and at 269-271 from 13.1 on; a driver that
  // numbers them differently answers a power-smoothing field here, which is not a ULL ns counter.
  if (fv.valueType != NVML_VALUE_TYPE_UNSIGNED_LONG_LONG) {
    return NotSupported(TypeMismatch(fv, "3 (unsigned long long ns)"));
  }
  return Value(static_cast<int64_t>(fv.value.ullVal));
}

Result<Value> ConvertMilliwattsToWatts(const nvmlFieldValue_t& fv) {
  Result<Value> mw = ConvertInteger(fv);
  if (!mw.ok()) return mw;
  return Value(static_cast<double>(std::get<int64_t>(*mw)) / 1000.0);
}

// --- ReadFns: system and identity ----------------------------------------------------------------

Result<Value> ReadDriverVersion(ReadContext& ctx) { return AsString(ctx.lib.DriverVersion()); }
Result<Value> ReadNvmlVersion(ReadContext& ctx) { return AsString(ctx.lib.NvmlVersion()); }
Result<Value> ReadName(ReadContext& ctx) { return AsString(ctx.lib.Name(ctx.device)); }

Result<Value> ReadBrand(ReadContext& ctx) {
  Result<int> b = ctx.lib.Brand(ctx.device);
  if (!b.ok()) return b.status();
  return Value(std::string(BrandName(*b)));
}

Result<Value> ReadSerial(ReadContext& ctx) { return AsString(ctx.lib.Serial(ctx.device)); }
Result<Value> ReadUuid(ReadContext& ctx) { return AsString(ctx.lib.Uuid(ctx.device)); }
Result<Value> ReadMinorNumber(ReadContext& ctx) { return AsInt(ctx.lib.MinorNumber(ctx.device)); }

Result<Value> ReadOemInforom(ReadContext& ctx) {
  return AsString(ctx.lib.InforomVersion(ctx.device, NVML_INFOROM_OEM));
}

Result<Value> ReadPciBusId(ReadContext& ctx) {
  Result<nvml::PciInfo> pci = ctx.lib.Pci(ctx.device);
  if (!pci.ok()) return pci.status();
  return Value(pci->bus_id);
}

Result<Value> ReadEccInforom(ReadContext& ctx) {
  return AsString(ctx.lib.InforomVersion(ctx.device, NVML_INFOROM_ECC));
}

Result<Value> ReadPowerInforom(ReadContext& ctx) {
  return AsString(ctx.lib.InforomVersion(ctx.device, NVML_INFOROM_POWER));
}

Result<Value> ReadInforomImage(ReadContext& ctx) {
  return AsString(ctx.lib.InforomImageVersion(ctx.device));
}

Result<Value> ReadVbios(ReadContext& ctx) { return AsString(ctx.lib.VbiosVersion(ctx.device)); }

// --- BAR1 ----------------------------------------------------------------------------------------

Result<Value> ReadBar1Total(ReadContext& ctx) {
  const auto& b = Bar1(ctx);
  if (!b.ok()) return b.status();
  return Value(BytesToMiB(b->bar1Total));
}

Result<Value> ReadBar1Used(ReadContext& ctx) {
  const auto& b = Bar1(ctx);
  if (!b.ok()) return b.status();
  return Value(BytesToMiB(b->bar1Used));
}

Result<Value> ReadBar1Free(ReadContext& ctx) {
  const auto& b = Bar1(ctx);
  if (!b.ok()) return b.status();
  return Value(BytesToMiB(b->bar1Free));
}

// --- Clocks --------------------------------------------------------------------------------------

Result<Value> ReadSmClock(ReadContext& ctx) {
  return AsInt(ctx.lib.ClockMhz(ctx.device, NVML_CLOCK_SM));
}
Result<Value> ReadMemClock(ReadContext& ctx) {
  return AsInt(ctx.lib.ClockMhz(ctx.device, NVML_CLOCK_MEM));
}
Result<Value> ReadVideoClock(ReadContext& ctx) {
  return AsInt(ctx.lib.ClockMhz(ctx.device, NVML_CLOCK_VIDEO));
}
Result<Value> ReadClocksEventReasons(ReadContext& ctx) {
  return AsInt(ctx.lib.ClocksEventReasons(ctx.device));
}
Result<Value> ReadMaxSmClock(ReadContext& ctx) {
  return AsInt(ctx.lib.MaxClockMhz(ctx.device, NVML_CLOCK_SM));
}
Result<Value> ReadMaxMemClock(ReadContext& ctx) {
  return AsInt(ctx.lib.MaxClockMhz(ctx.device, NVML_CLOCK_MEM));
}
Result<Value> ReadMaxVideoClock(ReadContext& ctx) {
  return AsInt(ctx.lib.MaxClockMhz(ctx.device, NVML_CLOCK_VIDEO));
}

// --- Thermal and power ---------------------------------------------------------------------------

Result<Value> ReadGpuTemp(ReadContext& ctx) {
  Result<unsigned> t = ctx.lib.GpuTemperatureC(ctx.device);
  if (!t.ok()) return t.status();
  if (*t > kMaxPlausibleTempC) {
    // DCGM drops such readings (a sensor glitch), so the series is omitted, not exported.
    return Internal("nvmlDeviceGetTemperature: " + std::to_string(*t) +
                    " C is implausible (> 200), dropped");
  }
  return Value(static_cast<int64_t>(*t));
}

Result<Value> ReadPowerUsage(ReadContext& ctx) {
  Result<unsigned> mw = ctx.lib.PowerUsageMw(ctx.device);
  if (!mw.ok()) return mw.status();
  return Value(static_cast<double>(*mw) / 1000.0);
}

Result<Value> ReadPowerMgmtLimit(ReadContext& ctx) {
  return AsWholeWatts(ctx.lib.PowerLimitMw(ctx.device));
}

Result<Value> ReadPowerMgmtLimitMin(ReadContext& ctx) {
  auto r = ctx.lib.PowerLimitConstraintsMw(ctx.device);
  if (!r.ok()) return r.status();
  return Value(MilliwattsToWholeWatts(r->first));
}

Result<Value> ReadPowerMgmtLimitMax(ReadContext& ctx) {
  auto r = ctx.lib.PowerLimitConstraintsMw(ctx.device);
  if (!r.ok()) return r.status();
  return Value(MilliwattsToWholeWatts(r->second));
}

Result<Value> ReadPowerMgmtLimitDef(ReadContext& ctx) {
  return AsWholeWatts(ctx.lib.DefaultPowerLimitMw(ctx.device));
}

Result<Value> ReadEnforcedPowerLimit(ReadContext& ctx) {
  return AsWholeWatts(ctx.lib.EnforcedPowerLimitMw(ctx.device));
}

Result<Value> ReadPstate(ReadContext& ctx) { return AsInt(ctx.lib.PerformanceState(ctx.device)); }
Result<Value> ReadFanSpeed(ReadContext& ctx) { return AsInt(ctx.lib.FanSpeedPercent(ctx.device)); }

// --- PCIe ----------------------------------------------------------------------------------------

Result<Value> ReadPcieTxThroughput(ReadContext& ctx) {
  return AsInt(ctx.lib.PcieThroughputKBs(ctx.device, NVML_PCIE_UTIL_TX_BYTES));
}
Result<Value> ReadPcieRxThroughput(ReadContext& ctx) {
  return AsInt(ctx.lib.PcieThroughputKBs(ctx.device, NVML_PCIE_UTIL_RX_BYTES));
}
Result<Value> ReadPcieReplay(ReadContext& ctx) {
  return AsInt(ctx.lib.PcieReplayCounter(ctx.device));
}
Result<Value> ReadPcieMaxLinkGen(ReadContext& ctx) {
  return AsInt(ctx.lib.MaxPcieLinkGen(ctx.device));
}
Result<Value> ReadPcieMaxLinkWidth(ReadContext& ctx) {
  return AsInt(ctx.lib.MaxPcieLinkWidth(ctx.device));
}
Result<Value> ReadPcieLinkGen(ReadContext& ctx) { return AsInt(ctx.lib.PcieLinkGen(ctx.device)); }
Result<Value> ReadPcieLinkWidth(ReadContext& ctx) {
  return AsInt(ctx.lib.PcieLinkWidth(ctx.device));
}

// --- Utilisation ---------------------------------------------------------------------------------

Result<Value> ReadGpuUtil(ReadContext& ctx) {
  const auto& u = Utilization(ctx);
  if (!u.ok()) return u.status();
  return Value(static_cast<int64_t>(u->gpu));
}

Result<Value> ReadMemCopyUtil(ReadContext& ctx) {
  const auto& u = Utilization(ctx);
  if (!u.ok()) return u.status();
  return Value(static_cast<int64_t>(u->memory));
}

Result<Value> ReadEncUtil(ReadContext& ctx) {
  return AsInt(ctx.lib.EncoderUtilization(ctx.device));
}
Result<Value> ReadDecUtil(ReadContext& ctx) {
  return AsInt(ctx.lib.DecoderUtilization(ctx.device));
}

// --- Frame buffer --------------------------------------------------------------------------------

Result<Value> ReadFbTotal(ReadContext& ctx) {
  const auto& m = Memory(ctx);
  if (!m.ok()) return m.status();
  return Value(BytesToMiB(m->total));
}

Result<Value> ReadFbFree(ReadContext& ctx) {
  const auto& m = Memory(ctx);
  if (!m.ok()) return m.status();
  return Value(BytesToMiB(m->free));
}

Result<Value> ReadFbUsed(ReadContext& ctx) {
  // v2 .used excludes reserved; before R510 only v1 exists and its .used includes it (DCGM too).
  const auto& m = Memory(ctx);
  if (!m.ok()) return m.status();
  return Value(BytesToMiB(m->used));
}

Result<Value> ReadFbReserved(ReadContext& ctx) {
  const auto& m = Memory(ctx);
  if (!m.ok()) return m.status();
  if (!m->has_reserved) {
    return NotSupported("nvmlDeviceGetMemoryInfo_v2: not present (driver < 510), no reserved FB");
  }
  return Value(BytesToMiB(m->reserved));
}

Result<Value> ReadFbUsedPercent(ReadContext& ctx) {
  const auto& m = Memory(ctx);
  if (!m.ok()) return m.status();
  const uint64_t usable = m->total - m->reserved;
  if (m->reserved > m->total || usable == 0) {
    return Internal("nvmlDeviceGetMemoryInfo: total " + std::to_string(m->total) +
                    " B leaves no usable memory after reserved " + std::to_string(m->reserved));
  }
  return Value(static_cast<double>(m->used) / static_cast<double>(usable));
}

// --- Retirement and remapping --------------------------------------------------------------------

Result<Value> ReadRetiredSbe(ReadContext& ctx) {
  return AsInt(ctx.lib.RetiredPageCount(ctx.device,
                                        NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS));
}

Result<Value> ReadRemappedUncorrectable(ReadContext& ctx) {
  const auto& r = Remapped(ctx);
  if (!r.ok()) return r.status();
  return Value(static_cast<int64_t>(r->uncorrectable));
}

Result<Value> ReadRemappedCorrectable(ReadContext& ctx) {
  const auto& r = Remapped(ctx);
  if (!r.ok()) return r.status();
  return Value(static_cast<int64_t>(r->correctable));
}

Result<Value> ReadRemapFailure(ReadContext& ctx) {
  const auto& r = Remapped(ctx);
  if (!r.ok()) return r.status();
  return Value(static_cast<int64_t>(r->failure));
}

Result<Value> ReadRemapPending(ReadContext& ctx) {
  const auto& r = Remapped(ctx);
  if (!r.ok()) return r.status();
  return Value(static_cast<int64_t>(r->pending));
}

Result<Value> ReadVgpuLicenseStatus(ReadContext& ctx) {
  return AsInt(ctx.lib.VgpuLicenseStatus(ctx.device));
}

}  // namespace nvmlx::fields::internal
