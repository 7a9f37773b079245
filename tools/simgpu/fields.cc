// nvmlDeviceGetFieldValues, one element at a time: the value, its valueType and its per-element
// nvmlReturn exactly as R580 answers them on an H200 (docs/nvml.md §2, §1).
#include <cmath>
#include <optional>

#include "call.h"

namespace nvmlx::simgpu {
namespace {

// The highest field id of the 13.3 header; above it the driver answers INVALID_ARGUMENT.
constexpr unsigned kFieldIdMax = 303;
// NVML_FI_DEV_RETIRED_SBE and the power/energy ids not named in nvml_api.h.
constexpr unsigned kFiRetiredSbe = 29;
constexpr unsigned kFiPowerAverage = 185;
constexpr unsigned kFiPowerCurrentLimit = 190;
constexpr unsigned kFiEnergy = 191;

void SetUint(nvmlFieldValue_t* v, unsigned x) {
  v->valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
  v->value.ullVal = 0;  // clear the upper bytes of the union
  v->value.uiVal = x;
}

void SetUll(nvmlFieldValue_t* v, unsigned long long x) {
  v->valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
  v->value.ullVal = x;
}

// The counter behind a ULL field, or nullopt when the id is not one we simulate as ULL.
std::optional<unsigned long long> UllField(const Ctx& c, unsigned fi) {
  auto key = [&](ValueKey k) -> std::optional<unsigned long long> { return c.U64(k); };
  switch (fi) {
    case NVML_FI_DEV_ECC_SBE_VOL_TOTAL:
      return key(ValueKey::kEccSbeVol);
    case NVML_FI_DEV_ECC_DBE_VOL_TOTAL:
      return key(ValueKey::kEccDbeVol);
    case NVML_FI_DEV_ECC_SBE_AGG_TOTAL:
      return key(ValueKey::kEccSbeAgg);
    case NVML_FI_DEV_ECC_DBE_AGG_TOTAL:
      return key(ValueKey::kEccDbeAgg);
    case kFiRetiredSbe:
      return key(ValueKey::kRetiredSbe);
    case NVML_FI_DEV_RETIRED_DBE:
      return key(ValueKey::kRetiredDbe);
    case NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL:
      return key(ValueKey::kNvlinkCrcFlitErrors);
    case NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL:
      return key(ValueKey::kNvlinkCrcDataErrors);
    case NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL:
      return key(ValueKey::kNvlinkReplayErrors);
    case NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL:
      return key(ValueKey::kNvlinkRecoveryErrors);
    case NVML_FI_DEV_PERF_POLICY_POWER:
      return key(ValueKey::kViolationPowerNs);
    case NVML_FI_DEV_PERF_POLICY_THERMAL:
      return key(ValueKey::kViolationThermalNs);
    case NVML_FI_DEV_PERF_POLICY_SYNC_BOOST:
      return key(ValueKey::kViolationSyncBoostNs);
    case NVML_FI_DEV_PERF_POLICY_BOARD_LIMIT:
      return key(ValueKey::kViolationBoardLimitNs);
    case NVML_FI_DEV_PERF_POLICY_LOW_UTILIZATION:
      return key(ValueKey::kViolationLowUtilNs);
    case NVML_FI_DEV_PERF_POLICY_RELIABILITY:
      return key(ValueKey::kViolationReliabilityNs);
    case NVML_FI_DEV_PERF_POLICY_TOTAL_APP_CLOCKS:
      return key(ValueKey::kViolationAppClocksNs);
    case NVML_FI_DEV_PERF_POLICY_TOTAL_BASE_CLOCKS:
      return key(ValueKey::kViolationBaseClocksNs);
    case NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN:
      return key(ValueKey::kViolationSwThermalNs);
    case NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN:
      return key(ValueKey::kViolationHwThermalNs);
    case NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN:
      return key(ValueKey::kViolationHwPowerBrakeNs);
    case NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION:
    case kFiEnergy:
      return ToU64(EnergyMj(c));
    case NVML_FI_DEV_PCIE_COUNT_CORRECTABLE_ERRORS:
      return key(ValueKey::kPcieCorrectableErrors);
    default:
      return std::nullopt;
  }
}

// The value behind a 32-bit unsigned field, or nullopt.
std::optional<unsigned> UintField(const Ctx& c, unsigned fi) {
  switch (fi) {
    case NVML_FI_DEV_ECC_CURRENT:
    case NVML_FI_DEV_ECC_PENDING:
      return 1u;  // ECC on, as on every H200
    case NVML_FI_DEV_RETIRED_PENDING:
      return c.U32(ValueKey::kRetiredPending);
    case NVML_FI_DEV_GET_GPU_RECOVERY_ACTION:
      return c.U32(ValueKey::kRecoveryAction);
    case NVML_FI_DEV_MEMORY_TEMP:
      return c.U32(ValueKey::kMemTemp);
    case NVML_FI_DEV_PCIE_REPLAY_COUNTER:
      return c.U32(ValueKey::kPcieReplay);
    case NVML_FI_DEV_REMAPPED_COR:
      return c.U32(ValueKey::kRemappedCor);
    case NVML_FI_DEV_REMAPPED_UNC:
      return c.U32(ValueKey::kRemappedUnc);
    case NVML_FI_DEV_REMAPPED_PENDING:
      return c.U32(ValueKey::kRemappedPending);
    case NVML_FI_DEV_REMAPPED_FAILURE:
      return c.U32(ValueKey::kRemappedFailure);
    case NVML_FI_DEV_POWER_INSTANT:
    case kFiPowerAverage:
      return ToU32(c.V(ValueKey::kPowerW) * 1000.0);
    case kFiPowerCurrentLimit:
      return ToU32(c.V(ValueKey::kPowerLimitW) * 1000.0);
    default:
      return std::nullopt;
  }
}

}  // namespace

double EnergyMj(const Ctx& c) {
  // W·s = J; the counter is in mJ. The start value is a constant by its nature.
  // The driver's counter runs from the driver's load, not from the exporter's start, so it never
  // goes back when the exporter restarts (energy per pod's restore relies on it). Simulation
  // time t starts with each World (each process), so the counter carries max(power) for every
  // second from boot to the World's origin: a later World's origin is later by at least the
  // earlier one's whole life, in which the earlier counter grew by at most max(power) a second,
  // so the counter is monotonic across processes even for a square wave or a sine. Within one
  // World it still grows by exactly ∫power dt (the power gauge's own integral). Frozen: no carry.
  const ValueFn& power = c.spec().value(ValueKey::kPowerW);
  const double carry_mj = std::fmax(power.Max(), 0.0) * c.world->EnergyCarryS() * 1000.0;
  return c.spec().value(ValueKey::kEnergyMjAtStart).At(0) + carry_mj + power.Integral(c.t) * 1000.0;
}

void FillFieldValue(const Ctx& c, nvmlFieldValue_t* v) {
  const unsigned fi = v->fieldId;
  CountCall("field:" + std::to_string(fi));
  v->timestamp = c.world->EpochMicros(c.t);
  v->latencyUsec = 0;
  v->value.ullVal = 0;
  v->valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
  v->nvmlReturn = NVML_SUCCESS;
  if (fi == 0 || fi > kFieldIdMax) {
    v->nvmlReturn = NVML_ERROR_INVALID_ARGUMENT;
    return;
  }
  const unsigned links = NvlinkLinks(c);
  const bool nvlink_error_total = fi == NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL ||
                                  fi == NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL ||
                                  fi == NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL ||
                                  fi == NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL;
  if (nvlink_error_total && links == 0) {
    v->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;  // no NVLink (nvlink_links: 0)
    return;
  }
  if (fi == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX || fi == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX) {
    if (links == 0) {
      v->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
      return;
    }
    const unsigned long long total =
        c.U64(fi == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX ? ValueKey::kNvlinkTxKib
                                                          : ValueKey::kNvlinkRxKib);
    if (v->scopeId == NVMLX_SCOPE_ALL_LINKS) {
      SetUll(v, total);
      return;
    }
    // scopeId = one link: the scenario's all-links counter split evenly over the GPU's links
    // (nvlink_links), so that the links add up to the total exactly (and each stays monotonic).
    if (v->scopeId >= links) {
      v->nvmlReturn = NVML_ERROR_INVALID_ARGUMENT;
      return;
    }
    SetUll(v, LinkShare(total, v->scopeId, links));
    return;
  }
  if (std::optional<unsigned> u = UintField(c, fi)) {
    SetUint(v, *u);
    return;
  }
  if (std::optional<unsigned long long> u = UllField(c, fi)) {
    SetUll(v, *u);
    return;
  }
  // Every other id of the header: not supported on this GPU (includes 251-253, see nvml_api.h).
  v->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
}

}  // namespace nvmlx::simgpu
