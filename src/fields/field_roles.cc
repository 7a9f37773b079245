#include "fields/field_roles.h"

#include <algorithm>
#include <iterator>

#include "fields/field_ids.h"

namespace nvmlx::fields {
namespace {

// The special fields: each role's DCGM id, in Role order (kSample has none).
struct RoleRow {
  Role role;
  int id;
};
constexpr RoleRow kRoles[] = {
    {Role::kLastXid, ids::kXidErrors},
    {Role::kXidCounts, ids::kXidErrorsCount},
    {Role::kClockEventCounts, ids::kClockEventsCount},
    {Role::kHealthStatus, ids::kGpuHealthStatus},
    {Role::kP2pStatus, ids::kP2pStatus},
    {Role::kXidTotals, ids::kXidErrorsTotal},
    {Role::kClockEventTotals, ids::kClockEventsTotal},
};
// One row per role but kSample's (field_roles.h ties kRoleCount to the enum).
static_assert(std::size(kRoles) + 1 == kRoleCount, "a Role without its row in kRoles");

int IdOf(Quantity q) {
  switch (q) {
    case Quantity::kGpuUtilPercent:
      return ids::kGpuUtil;
    case Quantity::kGrEngineActive:
      return ids::kGrEngineActive;
    case Quantity::kTensorActive:
      return ids::kTensorActive;
    case Quantity::kDramActive:
      return ids::kDramActive;
    case Quantity::kFbUsedMib:
      return ids::kFbUsed;
    case Quantity::kFbFreeMib:
      return ids::kFbFree;
    case Quantity::kFbTotalMib:
      return ids::kFbTotal;
    case Quantity::kFbReservedMib:
      return ids::kFbReserved;
    case Quantity::kPowerWatts:
      return ids::kPowerUsage;
    case Quantity::kGpuTempC:
      return ids::kGpuTemp;
    case Quantity::kClockEventReasons:
      return ids::kClocksEventReasons;
    case Quantity::kLastXid:
      return ids::kXidErrors;
    case Quantity::kEnergyMillijoules:
      return ids::kTotalEnergy;
  }
  return 0;
}

}  // namespace

Role RoleOf(const FieldDef& field) {
  for (const RoleRow& r : kRoles) {
    if (r.id == field.id) return r.role;
  }
  return Role::kSample;
}

const FieldDef* FieldFor(Role role) {
  for (const RoleRow& r : kRoles) {
    if (r.role == role) return FindById(r.id);
  }
  return nullptr;
}

bool NeedsXidWatcher(Role role) {
  // Health evaluates the window's Xids too (collect/health.h).
  return role == Role::kLastXid || role == Role::kXidCounts || role == Role::kXidTotals ||
         role == Role::kHealthStatus;
}

bool IsGpuStatus(Role role) { return role == Role::kHealthStatus || role == Role::kP2pStatus; }

MigScope MigScopeOf(const FieldDef& field) {
  switch (field.id) {
    case ids::kBar1Total:
    case ids::kBar1Used:
    case ids::kBar1Free:
    case ids::kFbTotal:
    case ids::kFbFree:
    case ids::kFbUsed:
    case ids::kFbReserved:
    case ids::kFbUsedPercent:
    // Their DCGM 4.7 twins in bytes read the same call on the same (MIG device) handle.
    case ids::kBar1CapacityBytes:
    case ids::kBar1UsedBytes:
    case ids::kBar1FreeBytes:
    case ids::kFbCapacityBytes:
    case ids::kFbFreeBytes:
    case ids::kFbUsedBytes:
    case ids::kFbReservedBytes:
      return MigScope::kInstance;
    default:
      break;
  }
  // GPM ratios exist per GPU instance; the byte rates (PCIe, NVLink, C2C) are link counters of
  // the whole GPU.
  if (field.source == Source::kProfiling && field.gpm_metric_id > 0 &&
      field.kind == ValueKind::kDouble) {
    return MigScope::kInstance;
  }
  return MigScope::kGpu;
}

PodShare PodShareOf(const FieldDef& field) {
  if (field.id == ids::kGpuUtil) return PodShare::kSmPercent;
  if (field.id == ids::kFbUsed) return PodShare::kMemoryMib;
  return PodShare::kNone;
}

std::string_view UncollectedReason(const FieldDef& field, bool label_row) {
  switch (field.source) {
    case Source::kProfiling:
      // GPM-backed rows are kept; the collector warns per GPU where no profiling source serves
      // them (collect/profiling_source.h).
      return field.gpm_metric_id == 0 ? "no NVML GPM metric for this profiling field" : "";
    case Source::kExporter:
      // The DCGM_EXP_* families the collector computes have a role; the others have no source.
      return RoleOf(field) == Role::kSample ? "no exporter source for this DCGM_EXP_* field" : "";
    case Source::kEvent:
      // DCGM_FI_DEV_XID_ERRORS comes from the Xid watcher; other event fields have no source.
      return RoleOf(field) == Role::kSample ? "no NVML event source for this field" : "";
    case Source::kDevice:
    case Source::kSystem:
      break;
  }
  // A field DCGM knows and we do not read (NvSwitch, Grace CPU, ConnectX, ...): its reason.
  if (!field.skip_reason.empty()) return field.skip_reason;
  if (!label_row && field.read == nullptr && field.nvml_field_id == 0) {
    return "no NVML source for this field";
  }
  return "";
}

const model::Sample* FindQuantity(const std::vector<model::Sample>& samples, Quantity quantity) {
  return model::FindSample(samples, IdOf(quantity));
}

}  // namespace nvmlx::fields
