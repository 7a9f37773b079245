// The GPU faults a node shows (--kubernetes-node-conditions, docs/faults.md §5): which Xids are
// critical, what each is called on the Node and in its Event, and the action NVIDIA's Xid catalog
// gives for it; and the Node condition types the daemon owns. One table, so that the conditions,
// the Events and the documentation cannot disagree.
//
// Source: NVIDIA's Xid catalog for Ampere and newer GPUs (docs.nvidia.com/deploy/xid-errors,
// "Analyzing Xid Errors with the Xid Catalog", column "Resolution Bucket (Immediate Action)"),
// recorded in docs/upstream/xid-catalog.md. An Xid whose immediate action is a GPU reset or a
// reboot (the GPU cannot be trusted until then) is critical: it raises GpuXidCritical. One whose
// action is to restart the application, or none, is reported as an Event only.
//
// Thread-safety: pure functions over constant data.
#ifndef NVML_EXPORTER_FIELDS_GPU_FAULTS_H_
#define NVML_EXPORTER_FIELDS_GPU_FAULTS_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace nvmlx::fields {

// The Node conditions the daemon owns. Their polarity follows the name: GpuHealthy is True when
// all is well; GpuXidCritical and GpuLost are True when there is a problem (as node-problem-
// detector's problem conditions are).
inline constexpr std::string_view kConditionGpuHealthy = "GpuHealthy";
inline constexpr std::string_view kConditionGpuXidCritical = "GpuXidCritical";
inline constexpr std::string_view kConditionGpuLost = "GpuLost";

struct XidFault {
  int64_t xid;
  // The Event's reason, and the condition's while this Xid is the latest critical one (CamelCase,
  // as Kubernetes reasons are).
  std::string_view reason;
  // The catalog's immediate action (RESET_GPU, RESTART_BM, RESTART_APP, ...), and what it asks
  // of the operator, for the Event and condition messages.
  std::string_view action;
  std::string_view advice;
  bool critical;  // raises GpuXidCritical (else an Event only)
};

// The fault of `xid`, if it is one the node shows (an Event at least); nullopt for the others
// (application faults such as 13 and 31, which only the metrics report).
std::optional<XidFault> FaultOfXid(int64_t xid);
// Every such Xid, ascending (documentation, tests).
std::span<const XidFault> XidFaults();

}  // namespace nvmlx::fields

#endif  // NVML_EXPORTER_FIELDS_GPU_FAULTS_H_
