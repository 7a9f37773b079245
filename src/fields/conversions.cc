#include "fields/conversions.h"

#include <string>
#include <utility>

namespace nvmlx::fields::internal {
namespace {

constexpr uint64_t kMiB = 1024ULL * 1024ULL;
// DCGM treats temperatures above this as garbage: GPU_TEMP drops them, MEMORY_TEMP errors.
constexpr unsigned kMaxPlausibleTempC = 200;

template <typename T>
Result<model::Value> AsInt(const Result<T>& r) {
  if (!r.ok()) return r.status();
  return model::Value(static_cast<int64_t>(*r));
}

Result<model::Value> AsString(const Result<std::string>& r) {
  if (!r.ok()) return r.status();
  return model::Value(*r);
}

Result<model::Value> AsWholeWatts(const Result<unsigned>& r) {
  if (!r.ok()) return r.status();
  return model::Value(MilliwattsToWholeWatts(*r));
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

const Result<nvml::FabricHealth>& Fabric(ReadContext& ctx) {
  if (!ctx.fabric) ctx.fabric.emplace(ctx.lib.GpuFabricHealth(ctx.device));
  return *ctx.fabric;
}

Result<model::Value> AsHz(const Result<unsigned>& mhz) {
  if (!mhz.ok()) return mhz.status();
  return model::Value(MhzToHz(*mhz));
}

Result<model::Value> AsRatio(const Result<unsigned>& percent) {
  if (!percent.ok()) return percent.status();
  return model::Value(PercentToRatio(*percent));
}

// Bytes as DCGM's int64; a count beyond it is not a memory size.
Result<model::Value> AsBytes(uint64_t bytes, std::string_view what) {
  if (bytes > static_cast<uint64_t>(INT64_MAX)) {
    return Internal(std::string(what) + ": " + std::to_string(bytes) + " B overflows int64");
  }
  return model::Value(static_cast<int64_t>(bytes));
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

int64_t MhzToHz(unsigned mhz) { return static_cast<int64_t>(mhz) * 1000000; }

double PercentToRatio(unsigned percent) { return static_cast<double>(percent) / 100.0; }

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

Result<model::Value> ConvertInteger(const nvmlFieldValue_t& fv) {
  switch (fv.valueType) {
    case NVML_VALUE_TYPE_DOUBLE:
      return model::Value(static_cast<int64_t>(fv.value.dVal));
    case NVML_VALUE_TYPE_UNSIGNED_INT:
      return model::Value(static_cast<int64_t>(fv.value.uiVal));
    case NVML_VALUE_TYPE_UNSIGNED_LONG:
      return model::Value(static_cast<int64_t>(fv.value.ulVal));
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
      return model::Value(static_cast<int64_t>(fv.value.ullVal));
    case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
      return model::Value(static_cast<int64_t>(fv.value.sllVal));
    case NVML_VALUE_TYPE_SIGNED_INT:
      return model::Value(static_cast<int64_t>(fv.value.siVal));
    case NVML_VALUE_TYPE_UNSIGNED_SHORT:
      return model::Value(static_cast<int64_t>(fv.value.usVal));
  }
  return Internal(TypeMismatch(fv, "an integer type"));
}

Result<model::Value> ConvertEccUll(const nvmlFieldValue_t& fv) {
  // An old NVML reported the ECC counters with a wrong valueType; DCGM ignores it and reads ull.
  return model::Value(static_cast<int64_t>(fv.value.ullVal));
}

Result<model::Value> ConvertMemoryTemp(const nvmlFieldValue_t& fv) {
  // r545 drivers said DOUBLE while writing an unsigned int; DCGM reads uiVal unconditionally.
  const unsigned c = fv.value.uiVal;
  if (c > kMaxPlausibleTempC) {
    return Internal("nvmlDeviceGetFieldValues: memory temperature " + std::to_string(c) +
                    " C is implausible (> 200)");
  }
  return model::Value(static_cast<int64_t>(c));
}

Result<model::Value> ConvertClockEventNs(const nvmlFieldValue_t& fv) {
  // These ids sat at 251-253 in the 12.9/13.0 headers and at 269-271 from 13.1 on; a driver that
  // numbers them differently answers a power-smoothing field here, which is not a ULL ns counter.
  if (fv.valueType != NVML_VALUE_TYPE_UNSIGNED_LONG_LONG) {
    return NotSupported(TypeMismatch(fv, "3 (unsigned long long ns)"));
  }
  return model::Value(static_cast<int64_t>(fv.value.ullVal));
}

Result<model::Value> ConvertMilliwattsToWatts(const nvmlFieldValue_t& fv) {
  Result<model::Value> mw = ConvertInteger(fv);
  if (!mw.ok()) return mw;
  return model::Value(static_cast<double>(std::get<int64_t>(*mw)) / 1000.0);
}

Result<model::Value> ConvertMillijoulesToJoules(const nvmlFieldValue_t& fv) {
  Result<model::Value> mj = ConvertInteger(fv);
  if (!mj.ok()) return mj;
  return model::Value(static_cast<double>(std::get<int64_t>(*mj)) / 1000.0);
}

Result<model::Value> ConvertNanosecondsToSeconds(const nvmlFieldValue_t& fv) {
  Result<model::Value> ns = ConvertInteger(fv);
  if (!ns.ok()) return ns;
  return model::Value(static_cast<double>(std::get<int64_t>(*ns)) / 1e9);
}

// --- ReadFns: system and identity ----------------------------------------------------------------

Result<model::Value> ReadDriverVersion(ReadContext& ctx) {
  return AsString(ctx.lib.DriverVersion());
}
Result<model::Value> ReadNvmlVersion(ReadContext& ctx) { return AsString(ctx.lib.NvmlVersion()); }
Result<model::Value> ReadName(ReadContext& ctx) { return AsString(ctx.lib.Name(ctx.device)); }

Result<model::Value> ReadBrand(ReadContext& ctx) {
  Result<int> b = ctx.lib.Brand(ctx.device);
  if (!b.ok()) return b.status();
  return model::Value(std::string(BrandName(*b)));
}

Result<model::Value> ReadSerial(ReadContext& ctx) { return AsString(ctx.lib.Serial(ctx.device)); }
Result<model::Value> ReadUuid(ReadContext& ctx) { return AsString(ctx.lib.Uuid(ctx.device)); }
Result<model::Value> ReadMinorNumber(ReadContext& ctx) {
  return AsInt(ctx.lib.MinorNumber(ctx.device));
}

Result<model::Value> ReadOemInforom(ReadContext& ctx) {
  return AsString(ctx.lib.InforomVersion(ctx.device, NVML_INFOROM_OEM));
}

Result<model::Value> ReadPciBusId(ReadContext& ctx) {
  Result<nvml::PciInfo> pci = ctx.lib.Pci(ctx.device);
  if (!pci.ok()) return pci.status();
  return model::Value(pci->bus_id);
}

Result<model::Value> ReadEccInforom(ReadContext& ctx) {
  return AsString(ctx.lib.InforomVersion(ctx.device, NVML_INFOROM_ECC));
}

Result<model::Value> ReadPowerInforom(ReadContext& ctx) {
  return AsString(ctx.lib.InforomVersion(ctx.device, NVML_INFOROM_POWER));
}

Result<model::Value> ReadInforomImage(ReadContext& ctx) {
  return AsString(ctx.lib.InforomImageVersion(ctx.device));
}

Result<model::Value> ReadVbios(ReadContext& ctx) {
  return AsString(ctx.lib.VbiosVersion(ctx.device));
}

// --- BAR1 ----------------------------------------------------------------------------------------

Result<model::Value> ReadBar1Total(ReadContext& ctx) {
  const auto& b = Bar1(ctx);
  if (!b.ok()) return b.status();
  return model::Value(BytesToMiB(b->bar1Total));
}

Result<model::Value> ReadBar1Used(ReadContext& ctx) {
  const auto& b = Bar1(ctx);
  if (!b.ok()) return b.status();
  return model::Value(BytesToMiB(b->bar1Used));
}

Result<model::Value> ReadBar1Free(ReadContext& ctx) {
  const auto& b = Bar1(ctx);
  if (!b.ok()) return b.status();
  return model::Value(BytesToMiB(b->bar1Free));
}

// --- Clocks --------------------------------------------------------------------------------------

Result<model::Value> ReadSmClock(ReadContext& ctx) {
  return AsInt(ctx.lib.ClockMhz(ctx.device, NVML_CLOCK_SM));
}
Result<model::Value> ReadMemClock(ReadContext& ctx) {
  return AsInt(ctx.lib.ClockMhz(ctx.device, NVML_CLOCK_MEM));
}
Result<model::Value> ReadVideoClock(ReadContext& ctx) {
  return AsInt(ctx.lib.ClockMhz(ctx.device, NVML_CLOCK_VIDEO));
}
Result<model::Value> ReadClocksEventReasons(ReadContext& ctx) {
  return AsInt(ctx.lib.ClocksEventReasons(ctx.device));
}
Result<model::Value> ReadMaxSmClock(ReadContext& ctx) {
  return AsInt(ctx.lib.MaxClockMhz(ctx.device, NVML_CLOCK_SM));
}
Result<model::Value> ReadMaxMemClock(ReadContext& ctx) {
  return AsInt(ctx.lib.MaxClockMhz(ctx.device, NVML_CLOCK_MEM));
}
Result<model::Value> ReadMaxVideoClock(ReadContext& ctx) {
  return AsInt(ctx.lib.MaxClockMhz(ctx.device, NVML_CLOCK_VIDEO));
}

// --- Thermal and power ---------------------------------------------------------------------------

Result<model::Value> ReadGpuTemp(ReadContext& ctx) {
  Result<unsigned> t = ctx.lib.GpuTemperatureC(ctx.device);
  if (!t.ok()) return t.status();
  if (*t > kMaxPlausibleTempC) {
    // DCGM drops such readings (a sensor glitch), so the series is omitted, not exported.
    return Internal("nvmlDeviceGetTemperature: " + std::to_string(*t) +
                    " C is implausible (> 200), dropped");
  }
  return model::Value(static_cast<int64_t>(*t));
}

Result<model::Value> ReadPowerUsage(ReadContext& ctx) {
  Result<unsigned> mw = ctx.lib.PowerUsageMw(ctx.device);
  if (!mw.ok()) return mw.status();
  return model::Value(static_cast<double>(*mw) / 1000.0);
}

Result<model::Value> ReadPowerMgmtLimit(ReadContext& ctx) {
  return AsWholeWatts(ctx.lib.PowerLimitMw(ctx.device));
}

Result<model::Value> ReadPowerMgmtLimitMin(ReadContext& ctx) {
  auto r = ctx.lib.PowerLimitConstraintsMw(ctx.device);
  if (!r.ok()) return r.status();
  return model::Value(MilliwattsToWholeWatts(r->first));
}

Result<model::Value> ReadPowerMgmtLimitMax(ReadContext& ctx) {
  auto r = ctx.lib.PowerLimitConstraintsMw(ctx.device);
  if (!r.ok()) return r.status();
  return model::Value(MilliwattsToWholeWatts(r->second));
}

Result<model::Value> ReadPowerMgmtLimitDef(ReadContext& ctx) {
  return AsWholeWatts(ctx.lib.DefaultPowerLimitMw(ctx.device));
}

Result<model::Value> ReadEnforcedPowerLimit(ReadContext& ctx) {
  return AsWholeWatts(ctx.lib.EnforcedPowerLimitMw(ctx.device));
}

Result<model::Value> ReadPstate(ReadContext& ctx) {
  return AsInt(ctx.lib.PerformanceState(ctx.device));
}
Result<model::Value> ReadFanSpeed(ReadContext& ctx) {
  return AsInt(ctx.lib.FanSpeedPercent(ctx.device));
}

// --- PCIe ----------------------------------------------------------------------------------------

Result<model::Value> ReadPcieTxThroughput(ReadContext& ctx) {
  return AsInt(ctx.lib.PcieThroughputKBs(ctx.device, NVML_PCIE_UTIL_TX_BYTES));
}
Result<model::Value> ReadPcieRxThroughput(ReadContext& ctx) {
  return AsInt(ctx.lib.PcieThroughputKBs(ctx.device, NVML_PCIE_UTIL_RX_BYTES));
}
Result<model::Value> ReadPcieReplay(ReadContext& ctx) {
  return AsInt(ctx.lib.PcieReplayCounter(ctx.device));
}
Result<model::Value> ReadPcieMaxLinkGen(ReadContext& ctx) {
  return AsInt(ctx.lib.MaxPcieLinkGen(ctx.device));
}
Result<model::Value> ReadPcieMaxLinkWidth(ReadContext& ctx) {
  return AsInt(ctx.lib.MaxPcieLinkWidth(ctx.device));
}
Result<model::Value> ReadPcieLinkGen(ReadContext& ctx) {
  return AsInt(ctx.lib.PcieLinkGen(ctx.device));
}
Result<model::Value> ReadPcieLinkWidth(ReadContext& ctx) {
  return AsInt(ctx.lib.PcieLinkWidth(ctx.device));
}

// --- Utilisation ---------------------------------------------------------------------------------

Result<model::Value> ReadGpuUtil(ReadContext& ctx) {
  const auto& u = Utilization(ctx);
  if (!u.ok()) return u.status();
  return model::Value(static_cast<int64_t>(u->gpu));
}

Result<model::Value> ReadMemCopyUtil(ReadContext& ctx) {
  const auto& u = Utilization(ctx);
  if (!u.ok()) return u.status();
  return model::Value(static_cast<int64_t>(u->memory));
}

Result<model::Value> ReadEncUtil(ReadContext& ctx) {
  return AsInt(ctx.lib.EncoderUtilization(ctx.device));
}
Result<model::Value> ReadDecUtil(ReadContext& ctx) {
  return AsInt(ctx.lib.DecoderUtilization(ctx.device));
}

// --- Frame buffer --------------------------------------------------------------------------------

Result<model::Value> ReadFbTotal(ReadContext& ctx) {
  const auto& m = Memory(ctx);
  if (!m.ok()) return m.status();
  return model::Value(BytesToMiB(m->total));
}

Result<model::Value> ReadFbFree(ReadContext& ctx) {
  const auto& m = Memory(ctx);
  if (!m.ok()) return m.status();
  return model::Value(BytesToMiB(m->free));
}

Result<model::Value> ReadFbUsed(ReadContext& ctx) {
  // v2 .used excludes reserved; before R510 only v1 exists and its .used includes it (DCGM too).
  const auto& m = Memory(ctx);
  if (!m.ok()) return m.status();
  return model::Value(BytesToMiB(m->used));
}

Result<model::Value> ReadFbReserved(ReadContext& ctx) {
  const auto& m = Memory(ctx);
  if (!m.ok()) return m.status();
  if (!m->has_reserved) {
    return NotSupported("nvmlDeviceGetMemoryInfo_v2: not present (driver < 510), no reserved FB");
  }
  return model::Value(BytesToMiB(m->reserved));
}

Result<model::Value> ReadFbUsedPercent(ReadContext& ctx) {
  const auto& m = Memory(ctx);
  if (!m.ok()) return m.status();
  const uint64_t usable = m->total - m->reserved;
  if (m->reserved > m->total || usable == 0) {
    return Internal("nvmlDeviceGetMemoryInfo: total " + std::to_string(m->total) +
                    " B leaves no usable memory after reserved " + std::to_string(m->reserved));
  }
  return model::Value(static_cast<double>(m->used) / static_cast<double>(usable));
}

// --- Retirement and remapping --------------------------------------------------------------------

Result<model::Value> ReadRetiredSbe(ReadContext& ctx) {
  return AsInt(ctx.lib.RetiredPageCount(ctx.device,
                                        NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS));
}

Result<model::Value> ReadRemappedUncorrectable(ReadContext& ctx) {
  const auto& r = Remapped(ctx);
  if (!r.ok()) return r.status();
  return model::Value(static_cast<int64_t>(r->uncorrectable));
}

Result<model::Value> ReadRemappedCorrectable(ReadContext& ctx) {
  const auto& r = Remapped(ctx);
  if (!r.ok()) return r.status();
  return model::Value(static_cast<int64_t>(r->correctable));
}

Result<model::Value> ReadRemapFailure(ReadContext& ctx) {
  const auto& r = Remapped(ctx);
  if (!r.ok()) return r.status();
  return model::Value(static_cast<int64_t>(r->failure));
}

Result<model::Value> ReadRemapPending(ReadContext& ctx) {
  const auto& r = Remapped(ctx);
  if (!r.ok()) return r.status();
  return model::Value(static_cast<int64_t>(r->pending));
}

Result<model::Value> ReadVgpuLicenseStatus(ReadContext& ctx) {
  return AsInt(ctx.lib.VgpuLicenseStatus(ctx.device));
}

Result<model::Value> ReadNvlinkErrorCounter(ReadContext& ctx, unsigned link,
                                            nvmlNvLinkErrorCounter_t counter) {
  Result<uint64_t> v = ctx.lib.NvlinkErrorCounter(ctx.device, link, counter);
  if (!v.ok()) return v.status();
  // DCGM stores the unsigned counter in an int64; a counter that large is not a count.
  if (*v > static_cast<uint64_t>(INT64_MAX)) return Internal("NVLink error counter overflows");
  return model::Value(static_cast<int64_t>(*v));
}

// --- DCGM 4.7 base units -------------------------------------------------------------------------

Result<model::Value> ReadBar1CapacityBytes(ReadContext& ctx) {
  const auto& b = Bar1(ctx);
  if (!b.ok()) return b.status();
  return AsBytes(b->bar1Total, "nvmlDeviceGetBAR1MemoryInfo total");
}
Result<model::Value> ReadBar1UsedBytes(ReadContext& ctx) {
  const auto& b = Bar1(ctx);
  if (!b.ok()) return b.status();
  return AsBytes(b->bar1Used, "nvmlDeviceGetBAR1MemoryInfo used");
}
Result<model::Value> ReadBar1FreeBytes(ReadContext& ctx) {
  const auto& b = Bar1(ctx);
  if (!b.ok()) return b.status();
  return AsBytes(b->bar1Free, "nvmlDeviceGetBAR1MemoryInfo free");
}

Result<model::Value> ReadSmClockHz(ReadContext& ctx) {
  return AsHz(ctx.lib.ClockMhz(ctx.device, NVML_CLOCK_SM));
}
Result<model::Value> ReadMemClockHz(ReadContext& ctx) {
  return AsHz(ctx.lib.ClockMhz(ctx.device, NVML_CLOCK_MEM));
}
Result<model::Value> ReadVideoClockHz(ReadContext& ctx) {
  return AsHz(ctx.lib.ClockMhz(ctx.device, NVML_CLOCK_VIDEO));
}
Result<model::Value> ReadMaxSmClockHz(ReadContext& ctx) {
  return AsHz(ctx.lib.MaxClockMhz(ctx.device, NVML_CLOCK_SM));
}
Result<model::Value> ReadMaxMemClockHz(ReadContext& ctx) {
  return AsHz(ctx.lib.MaxClockMhz(ctx.device, NVML_CLOCK_MEM));
}
Result<model::Value> ReadMaxVideoClockHz(ReadContext& ctx) {
  return AsHz(ctx.lib.MaxClockMhz(ctx.device, NVML_CLOCK_VIDEO));
}

Result<model::Value> ReadFanSpeedRatio(ReadContext& ctx) {
  return AsRatio(ctx.lib.FanSpeedPercent(ctx.device));
}
Result<model::Value> ReadGpuUtilRatio(ReadContext& ctx) {
  const auto& u = Utilization(ctx);
  if (!u.ok()) return u.status();
  return model::Value(PercentToRatio(u->gpu));
}
Result<model::Value> ReadMemoryUtilRatio(ReadContext& ctx) {
  const auto& u = Utilization(ctx);
  if (!u.ok()) return u.status();
  return model::Value(PercentToRatio(u->memory));
}
Result<model::Value> ReadEncUtilRatio(ReadContext& ctx) {
  return AsRatio(ctx.lib.EncoderUtilization(ctx.device));
}
Result<model::Value> ReadDecUtilRatio(ReadContext& ctx) {
  return AsRatio(ctx.lib.DecoderUtilization(ctx.device));
}

Result<model::Value> ReadFbCapacityBytes(ReadContext& ctx) {
  const auto& m = Memory(ctx);
  if (!m.ok()) return m.status();
  return AsBytes(m->total, "nvmlDeviceGetMemoryInfo total");
}
Result<model::Value> ReadFbFreeBytes(ReadContext& ctx) {
  const auto& m = Memory(ctx);
  if (!m.ok()) return m.status();
  return AsBytes(m->free, "nvmlDeviceGetMemoryInfo free");
}
Result<model::Value> ReadFbUsedBytes(ReadContext& ctx) {
  // As FB_USED: v2 .used excludes reserved, v1 (driver < 510) includes it.
  const auto& m = Memory(ctx);
  if (!m.ok()) return m.status();
  return AsBytes(m->used, "nvmlDeviceGetMemoryInfo used");
}
Result<model::Value> ReadFbReservedBytes(ReadContext& ctx) {
  const auto& m = Memory(ctx);
  if (!m.ok()) return m.status();
  if (!m->has_reserved) {
    return NotSupported("nvmlDeviceGetMemoryInfo_v2: not present (driver < 510), no reserved FB");
  }
  return AsBytes(m->reserved, "nvmlDeviceGetMemoryInfo_v2 reserved");
}

// --- Fabric --------------------------------------------------------------------------------------

Result<model::Value> ReadFabricHealthMask(ReadContext& ctx) {
  const auto& f = Fabric(ctx);
  if (!f.ok()) return f.status();
  return model::Value(static_cast<int64_t>(f->mask));
}

Result<model::Value> ReadFabricHealthSummary(ReadContext& ctx) {
  const auto& f = Fabric(ctx);
  if (!f.ok()) return f.status();
  if (!f->summary) {
    return NotSupported(
        "nvmlDeviceGetGpuFabricInfoV: the driver has only the v2 struct, no "
        "health summary");
  }
  return model::Value(static_cast<int64_t>(*f->summary));
}

}  // namespace nvmlx::fields::internal
