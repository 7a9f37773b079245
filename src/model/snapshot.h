// Snapshot: everything one collection saw, as plain data, immutable once published. The collector
// (collect/) builds it, the attribution sources (attribute/) read the device identities and
// processes, the renderers (render/) read all of it; nothing on the scrape path touches NVML.
//
// Thread-safety: built by the collector thread, then published as shared_ptr<const Snapshot>;
// after that it is never mutated, so any number of threads may read it concurrently.
#ifndef NVML_EXPORTER_MODEL_SNAPSHOT_H_
#define NVML_EXPORTER_MODEL_SNAPSHOT_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/attribution.h"
#include "model/sample.h"

// The field plan a snapshot was collected under (plan/field_plan.h). Named here, not included:
// model/ is plain data below every stage; the stages that look inside a plan sit above plan/.
namespace nvmlx::plan {
class FieldPlan;
}  // namespace nvmlx::plan

namespace nvmlx::model {

// Read once at start-up, per selected GPU.
struct DeviceIdentity {
  unsigned index = 0;      // NVML index: the `gpu` label and device="nvidia<index>"
  std::string uuid;        // "GPU-…"
  std::string pci_bus_id;  // "00000000:00:06.0"
  std::string model_name;  // nvmlDeviceGetName, after --replace-blanks-in-model-name
  unsigned minor_number = 0;
  // Values of the CSV's `label` rows for this device (field id -> string), e.g.
  // DCGM_FI_DRIVER_VERSION -> "580.159.04". Missing when the read failed.
  std::vector<std::pair<int, std::string>> label_values;
  // Set only on the identity of a MIG instance (DCGM's FE_GPU_I entity). Its series carry the
  // parent GPU's index, UUID, pci_bus_id, device and modelName above, plus GPU_I_PROFILE and
  // GPU_I_ID from here.
  struct Mig {
    unsigned gpu_instance_id = 0;      // GPU_I_ID
    unsigned compute_instance_id = 0;  // NVML compute instance of the MIG device
    std::string profile;               // GPU_I_PROFILE, DCGM's "<slices>g.<GB>gb", e.g. "1g.18gb"
    std::string uuid;                  // "MIG-…": what the kubelet names the device
  };
  std::optional<Mig> mig;

  // The attribution key of this device (model/attribution.h): MIG UUID or GPU UUID.
  const std::string& DeviceKey() const { return mig ? mig->uuid : uuid; }
};

// How often one Xid was seen on a GPU within the window (DCGM_EXP_XID_ERRORS_COUNT), or since
// the exporter started (DCGM_EXP_XID_ERRORS_TOTAL).
struct XidCount {
  int64_t xid = 0;
  int64_t count = 0;
};

// How many collections within the window saw one clock-event reason (DCGM_EXP_CLOCK_EVENTS_COUNT),
// or how often the reason turned active since counting began (DCGM_EXP_CLOCK_EVENTS_TOTAL;
// collect/clock_events.h has both).
struct ClockEventCount {
  uint64_t reason = 0;  // one nvmlClocksEventReason* bit
  int64_t count = 0;
};

// One health watch of a GPU (DCGM_EXP_GPU_HEALTH_STATUS; collect/health.h says which condition
// gives which result).
struct HealthResult {
  std::string_view watch;       // health_watch label: "PCIE", "NVLINK", …, "ALL"
  std::string_view error_code;  // health_error_code label: "DCGM_FR_OK" when passing
  int value = 0;                // 0 pass, 10 warn, 20 fail (DCGM's dcgmHealthWatchResults_t)
};

// P2P status from one GPU to one peer GPU (DCGM_EXP_P2P_STATUS).
struct P2pStatus {
  unsigned peer_index = 0;  // peer_gpu label: the peer's NVML index
  int value = 0;            // nvmlGpuP2PStatus_t: 0 OK, 1 chipset, 2 GPU, 3 topology, 4 regkey,
                            // 5 not supported, 6 unknown
};

// One process with a context on a device (NVML compute processes, with per-process
// utilization since the previous collection where the GPU reports it).
struct ProcessSample {
  unsigned pid = 0;                // host PID
  uint64_t used_memory_bytes = 0;  // usedGpuMemory
  bool has_utilization = false;    // false: no sample in the window (idle) or unsupported
  unsigned sm_util_percent = 0;    // clamped to 0..100
  unsigned mem_util_percent = 0;
};

struct DeviceSnapshot {
  const DeviceIdentity* identity = nullptr;  // points into Snapshot::identities
  bool up = true;                            // false: GPU lost, stale, or every read failed
  bool lost = false;                         // fallen off the bus (GPU_IS_LOST, Xid 79): for good
  // Its reads did not answer within the collector's read deadline (a call stuck in the driver):
  // no samples this round. docs/faults.md.
  bool stale = false;
  // Stale because its set-up at start (opening it, its readers' priming reads) has not finished:
  // the daemon's start is incomplete (/health fails; docs/faults.md).
  bool setting_up = false;
  // The NVML call a stale entity's read (or set-up) is inside, when it is inside one.
  std::string stuck_call;
  // Its slow reads (energy, PCIe throughput, violations) are stuck: their samples are left out.
  bool slow_stale = false;
  // Its reads finished after the read deadline (slow, not stuck): the samples are those of the
  // previous collection, published one collection late.
  bool late = false;
  std::vector<Sample> samples;  // ascending field id; failed fields are absent
  // DCGM_FI_DEV_XID_ERRORS (the last Xid) is a sample of `samples` like any field. The windowed
  // counts are not a single value: xid_watched says whether they are known at all (false: Xid
  // events could not be registered on this GPU, or the field is not enabled).
  bool xid_watched = false;
  std::vector<XidCount> xid_counts;      // ascending xid; empty: none in the window
  std::vector<ProcessSample> processes;  // ascending pid; empty unless process attribution is on
  // DCGM_EXP_CLOCK_EVENTS_COUNT: watched when the field is enabled and this is a GPU (not a MIG
  // instance: clock events are GPU-wide); sampled when the window holds at least one successful
  // read of the reasons bitmask.
  bool clock_events_watched = false;
  bool clock_events_sampled = false;
  std::vector<ClockEventCount> clock_event_counts;  // ascending reason; only reasons seen
  // The monotonic counters of dcgm-exporter 4.8.3 (docs/upstream/total-counters.md): only values
  // seen at least once, so a series appears with its first event, as upstream's do. Empty when
  // the field is not enabled, the GPU is not watched, or nothing happened yet.
  std::vector<XidCount> xid_totals;                 // ascending xid; Xids since start
  std::vector<ClockEventCount> clock_event_totals;  // ascending reason; activations since start
  // The Xids since start for the node's fault watch (--kubernetes-node-conditions), whatever the
  // collected fields: ascending xid; empty when nothing happened or the watch is off.
  std::vector<XidCount> fault_xids;
  // DCGM_EXP_GPU_HEALTH_STATUS: one result per watch in collect/health.h's order; empty unless
  // the field is enabled and this is a GPU (health is GPU-wide, as DCGM's FE_GPU group). Also
  // set for a lost GPU (up == false), whose only series these are (ALL fails, fell off the bus).
  std::vector<HealthResult> health;
  // DCGM_EXP_P2P_STATUS: one per other GPU, ascending peer index; empty unless enabled.
  std::vector<P2pStatus> p2p;
  // Set when PM sampling serves this GPU's DCGM_FI_PROF_* fields (docs/pm-sampling.md):
  // whether it samples now (false: paused, or lost and retrying) and how often it was lost.
  struct PmSampling {
    bool active = false;
    uint64_t losses = 0;
    size_t configurations = 1;            // alternated when more than one
    std::vector<FieldCoverage> coverage;  // per served field, ascending id
  };
  std::optional<PmSampling> pm_sampling;
};

struct Snapshot {
  // The field plan this collection read under: which families the renderers print and how. Null
  // only in hand-built snapshots of tests that render nothing from fields.
  std::shared_ptr<const plan::FieldPlan> plan;
  std::chrono::system_clock::time_point time;  // when the collection started
  double collect_seconds = 0;                  // how long it took
  std::shared_ptr<const std::vector<DeviceIdentity>> identities;
  std::vector<DeviceSnapshot> devices;  // in identity order
  int64_t xid_window_ms = 0;            // the window of DeviceSnapshot::xid_counts
  int64_t clock_events_window_ms = 0;   // the window of DeviceSnapshot::clock_event_counts
  // The latest attribution of every enabled source when the collection ran (parts null when off).
  Attribution attribution;
};

}  // namespace nvmlx::model

#endif  // NVML_EXPORTER_MODEL_SNAPSHOT_H_
