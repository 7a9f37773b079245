#include "fields/xid_text.h"

#include <algorithm>
#include <iterator>

namespace nvmlx::fields {
namespace {

struct XidText {
  int64_t xid;
  std::string_view text;
};

// Ascending by xid (checked below), looked up by binary search.
constexpr XidText kXidTexts[] = {
    {0, "No Error"},
    {8, "GPU stopped processing"},
    {12, "Driver error handling GPU exception"},
    {13, "Graphics Engine Exception"},
    {31, "GPU memory page fault"},
    {32, "Invalid or corrupted push buffer stream"},
    {38, "Driver firmware error"},
    {43, "GPU stopped processing"},
    {44, "Graphics Engine fault during context switch"},
    {45,
     "Preemptive cleanup, due to previous errors -- Most likely to see when running multiple "
     "cuda"},
    {48, "Double Bit ECC Error"},
    {54, "Auxiliary power is not connected to the GPU board"},
    {61, "Internal micro-controller breakpoint/warning"},
    {62, "Internal micro-controller halt"},
    {63, "ECC page retirement or row remapping recording event"},
    {64, "ECC page retirement or row remapper recording failure"},
    {68, "NVDEC0 Exception"},
    {69, "Graphics Engine class error"},
    {74, "NVLINK Error"},
    {79, "GPU has fallen off the bus"},
    {92, "High single-bit ECC error rate"},
    {94, "Contained ECC error"},
    {95, "Uncontained ECC error"},
    {109, "Context Switch Timeout Error"},
    {119, "GSP RPC Timeout"},
    {120, "GSP Error"},
    {121, "C2C Link Error"},
    {136, "ALI Training Fail"},
    {137, "NVLink Privilege Error"},
    {140, "Unrecovered ECC Error"},
    {143, "GPU Initialization Failure"},
    {154, "GPU Recovery Action Changed"},
    {155, "NVLINK: SW Defined Error"},
    {156, "Resource Retirement Event"},
    {157, "Resource Retirement Failure"},
    {158, "GPU Fatal Timeout"},
};

constexpr bool Ascending() {
  for (size_t i = 1; i < std::size(kXidTexts); ++i) {
    if (kXidTexts[i - 1].xid >= kXidTexts[i].xid) return false;
  }
  return true;
}
static_assert(Ascending(), "kXidTexts must be sorted by xid");

}  // namespace

std::string_view XidDescription(int64_t xid) {
  const auto* it = std::lower_bound(std::begin(kXidTexts), std::end(kXidTexts), xid,
                                    [](const XidText& t, int64_t x) { return t.xid < x; });
  if (it == std::end(kXidTexts) || it->xid != xid) return "Unknown Error";
  return it->text;
}

}  // namespace nvmlx::fields
