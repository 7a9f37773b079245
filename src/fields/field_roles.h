// What the stages above fields/ do with a field besides reading it: the one table of special
// fields. Every other stage asks these functions (or the FieldPlan built from them,
// plan/field_plan.h) instead of comparing field ids, so that what a DCGM id means lives here
// only:
//   - Role: how a family's series are made (a plain sample, or one of the exporter's computed
//     families: the last Xid with its text, the windowed Xid and clock-event counts and their
//     totals since start, the health watches, the P2P status per peer) and what the collector
//     must run for it;
//   - MigScope: on a MIG-enabled GPU, whether a field is read per GPU instance or once per GPU;
//   - PodShare: the two fields dcgm-exporter splits per pod on a shared GPU;
//   - UncollectedReason: why a collectors row gets "metric not enabled" instead of a family;
//   - Quantity: the few values the live page shows, named by meaning.
//
// Thread-safety: pure functions over the constant catalog.
#ifndef NVML_EXPORTER_FIELDS_FIELD_ROLES_H_
#define NVML_EXPORTER_FIELDS_FIELD_ROLES_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "fields/catalog.h"
#include "model/sample.h"

namespace nvmlx::fields {

// How the series of a field's family come about.
enum class Role : uint8_t {
  kSample,            // a sample of DeviceSnapshot::samples: one series per attribute set
  kLastXid,           // DCGM_FI_DEV_XID_ERRORS: the Xid watcher's last Xid, with err_code/err_msg
  kXidCounts,         // DCGM_EXP_XID_ERRORS_COUNT: one series per Xid seen in the window
  kClockEventCounts,  // DCGM_EXP_CLOCK_EVENTS_COUNT: one series per clock-event reason seen
  kHealthStatus,      // DCGM_EXP_GPU_HEALTH_STATUS: one series per health watch
  kP2pStatus,         // DCGM_EXP_P2P_STATUS: one series per peer GPU
  kXidTotals,         // DCGM_EXP_XID_ERRORS_TOTAL: one counter per Xid seen since start
  kClockEventTotals,  // DCGM_EXP_CLOCK_EVENTS_TOTAL: one counter per reason that turned active
};
inline constexpr int kRoleCount = 8;

// kRoleCount sizes the arrays indexed by Role (plan::FieldPlan::has_), so it must move with the
// enum. IsLastRole's switch has no default: a new enumerator is a -Wswitch error (-Werror) until
// it has a case there, and once it is the last one the static_assert wants kRoleCount to count
// it too. Update all three together.
constexpr bool IsLastRole(Role role) {
  switch (role) {
    case Role::kSample:
    case Role::kLastXid:
    case Role::kXidCounts:
    case Role::kClockEventCounts:
    case Role::kHealthStatus:
    case Role::kP2pStatus:
    case Role::kXidTotals:
      return false;
    case Role::kClockEventTotals:
      return true;
  }
  return false;
}
static_assert(static_cast<int>(Role::kSample) == 0 && IsLastRole(static_cast<Role>(kRoleCount - 1)),
              "kRoleCount must be the last Role + 1: update it with the enum and IsLastRole");

Role RoleOf(const FieldDef& field);
// The catalog entry that plays `role` (the last Xid's, the health status's, ...); null for
// kSample.
const FieldDef* FieldFor(Role role);
// Whether the collector needs the Xid watcher (NVML events) for a field of this role.
bool NeedsXidWatcher(Role role);
// Health and P2P status are GPU-wide statuses that upstream reports per GPU only: the only
// series of a MIG-enabled GPU itself (in dcgm-exporter's shape) and, for health, of a lost GPU.
bool IsGpuStatus(Role role);

// Where a field is emitted on a MIG-enabled GPU (collect/mig.h has the whole story): per GPU
// instance (framebuffer, BAR1, the GPM ratios) or once for the GPU (everything else).
enum class MigScope { kGpu, kInstance };
MigScope MigScopeOf(const FieldDef& field);

// dcgm-exporter 4.8's per-pod split of a shared GPU's series (render/pod_families.h): which
// per-pod quantity stands in a field's per-pod series.
enum class PodShare : uint8_t { kNone, kSmPercent, kMemoryMib };
PodShare PodShareOf(const FieldDef& field);

// Why a collectors row naming `field` yields no family ("metric not enabled"); empty when it is
// collected. `label_row`: the row's type is `label` (read once at start, needs a reader only).
std::string_view UncollectedReason(const FieldDef& field, bool label_row);

// The values the live page shows, by meaning (live/live_json.h).
enum class Quantity : uint8_t {
  kGpuUtilPercent,
  kGrEngineActive,
  kTensorActive,
  kDramActive,
  kFbUsedMib,
  kFbFreeMib,
  kFbTotalMib,
  kFbReservedMib,
  kPowerWatts,
  kGpuTempC,
  kClockEventReasons,  // the reasons bitmask
  kLastXid,
  kEnergyMillijoules,  // the GPU's energy counter since the driver loaded
};
// The sample that holds `quantity` among `samples` (ascending field id); null when absent.
const model::Sample* FindQuantity(const std::vector<model::Sample>& samples, Quantity quantity);

}  // namespace nvmlx::fields

#endif  // NVML_EXPORTER_FIELDS_FIELD_ROLES_H_
