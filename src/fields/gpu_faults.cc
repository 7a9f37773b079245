#include "fields/gpu_faults.h"

#include <algorithm>
#include <array>

namespace nvmlx::fields {
namespace {

constexpr std::string_view kResetGpu = "reset the GPU (drain its workloads first)";
constexpr std::string_view kReboot = "reboot the node (the GPU is gone from the bus)";
constexpr std::string_view kRestartApp = "restart the affected application";
constexpr std::string_view kNone = "none needed at once; watch for repeats";

// Ascending Xid. The action column is the catalog's immediate action; 48's workflow resets the
// GPU when the Xid is alone and drains and resets it when 63/64 come with it: a reset either way.
// 74's workflow decodes the NVLink registers; every outcome of it takes the link (and so the GPU)
// out of service until a reset. 63 (a row remapped) and 92 (many corrected errors) are the
// catalog's IGNORE, and 94 (an error contained to one application) its RESTART_APP: Events only.
constexpr std::array kFaults = {
    XidFault{48, "XidDoubleBitEccError", "WORKFLOW_XID_48", kResetGpu, true},
    XidFault{62, "XidMicrocontrollerHalt", "RESET_GPU", kResetGpu, true},
    XidFault{63, "XidRowRemapEvent", "IGNORE", kNone, false},
    XidFault{64, "XidRowRemapFailure", "RESET_GPU", kResetGpu, true},
    XidFault{74, "XidNvlinkError", "WORKFLOW_NVLINK_ERR", kResetGpu, true},
    XidFault{79, "XidFallenOffTheBus", "RESTART_BM", kReboot, true},
    XidFault{92, "XidHighSingleBitEccRate", "IGNORE", kNone, false},
    XidFault{94, "XidContainedEccError", "RESTART_APP", kRestartApp, false},
    XidFault{95, "XidUncontainedEccError", "RESET_GPU", kResetGpu, true},
    XidFault{109, "XidContextSwitchTimeout", "RESET_GPU", kResetGpu, true},
    XidFault{119, "XidGspRpcTimeout", "RESET_GPU", kResetGpu, true},
    XidFault{120, "XidGspError", "RESET_GPU", kResetGpu, true},
    XidFault{140, "XidUnrecoveredEccError", "RESET_GPU", kResetGpu, true},
    XidFault{143, "XidGpuInitError", "RESET_GPU", kResetGpu, true},
    XidFault{154, "XidRecoveryActionChanged", "XID_154",
             "follow the recovery action the driver "
             "reports (nvidia-smi -q)",
             false},
};

}  // namespace

std::optional<XidFault> FaultOfXid(int64_t xid) {
  auto it = std::lower_bound(kFaults.begin(), kFaults.end(), xid,
                             [](const XidFault& f, int64_t x) { return f.xid < x; });
  if (it == kFaults.end() || it->xid != xid) return std::nullopt;
  return *it;
}

std::span<const XidFault> XidFaults() { return kFaults; }

}  // namespace nvmlx::fields
