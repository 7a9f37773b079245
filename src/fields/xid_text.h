// Short descriptions of NVIDIA Xid error codes, for the err_msg label of DCGM_FI_DEV_XID_ERRORS.
//
// The texts are NVIDIA's published Xid descriptions (docs.nvidia.com/deploy/xid-errors), spelled
// as dcgm-exporter prints them (its collector/xid_errors.go) so that dashboards and alerts
// matching on err_msg keep working. Every code 0..172 has a text (gaps in the catalog read
// "Unused" or "Reserved"); any other code is "Unknown Error".
//
// Thread-safety: a pure function over constant data.
#ifndef NVML_EXPORTER_FIELDS_XID_TEXT_H_
#define NVML_EXPORTER_FIELDS_XID_TEXT_H_

#include <cstdint>
#include <string_view>

namespace nvmlx::fields {

// "No Error" for 0, the description for a known Xid, else "Unknown Error".
std::string_view XidDescription(int64_t xid);

}  // namespace nvmlx::fields

#endif  // NVML_EXPORTER_FIELDS_XID_TEXT_H_
