// Per-link NVLink entry points: nvmlDeviceGetNvLinkErrorCounter and nvmlDeviceGetNvLinkState.
// A GPU has `nvlink_links` links (default 18, the H200's); 0 makes every link NOT_SUPPORTED, as
// on a GPU without NVLink (the single-GPU H200 VM), and a link at or past the count answers
// INVALID_ARGUMENT. Error counters are the all-links keys split over the links (LinkShare), so the
// per-link counters add up to FI 38/45/52/59; `nvlink_inactive_mask` bit k makes link k inactive.
#include "call.h"

namespace nvmlx::simgpu {

unsigned NvlinkLinks(const Ctx& c) {
  const unsigned n = c.U32(ValueKey::kNvlinkLinks);
  return n < NVMLX_NVLINK_MAX_LINKS ? n : NVMLX_NVLINK_MAX_LINKS;
}

unsigned long long LinkShare(unsigned long long total, unsigned k, unsigned links) {
  if (links == 0 || k >= links) return 0;
  // floor(total * j / links) without overflow: the first j links' share of `total`.
  auto part = [&](unsigned j) { return (total / links) * j + (total % links) * j / links; };
  return part(k + 1) - part(k);
}

namespace {

// NOT_SUPPORTED without NVLink, INVALID_ARGUMENT for a link the GPU does not have.
nvmlReturn_t CheckLink(const Ctx& c, unsigned link) {
  const unsigned links = NvlinkLinks(c);
  if (links == 0) return NVML_ERROR_NOT_SUPPORTED;
  if (link >= links) return NVML_ERROR_INVALID_ARGUMENT;
  return NVML_SUCCESS;
}

}  // namespace
}  // namespace nvmlx::simgpu

using nvmlx::simgpu::Ctx;
using nvmlx::simgpu::OnDevice;
using nvmlx::simgpu::ValueKey;

// Built with -fvisibility=hidden: only these definitions are exported (with exports.map).
#pragma GCC visibility push(default)
extern "C" {

nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t device, unsigned link,
                                             nvmlNvLinkErrorCounter_t counter,
                                             unsigned long long* counterValue) {
  return OnDevice(__func__, device, [&](const Ctx& c) -> nvmlReturn_t {
    if (counterValue == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (nvmlReturn_t rc = nvmlx::simgpu::CheckLink(c, link); rc != NVML_SUCCESS) return rc;
    ValueKey key;
    switch (counter) {
      case NVML_NVLINK_ERROR_DL_REPLAY:
        key = ValueKey::kNvlinkReplayErrors;
        break;
      case NVML_NVLINK_ERROR_DL_RECOVERY:
        key = ValueKey::kNvlinkRecoveryErrors;
        break;
      case NVML_NVLINK_ERROR_DL_CRC_FLIT:
        key = ValueKey::kNvlinkCrcFlitErrors;
        break;
      case NVML_NVLINK_ERROR_DL_CRC_DATA:
        key = ValueKey::kNvlinkCrcDataErrors;
        break;
      default:
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    *counterValue = nvmlx::simgpu::LinkShare(c.U64(key), link, nvmlx::simgpu::NvlinkLinks(c));
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned link,
                                      nvmlEnableState_t* isActive) {
  return OnDevice(__func__, device, [&](const Ctx& c) -> nvmlReturn_t {
    if (isActive == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (nvmlReturn_t rc = nvmlx::simgpu::CheckLink(c, link); rc != NVML_SUCCESS) return rc;
    const unsigned long long inactive = c.U64(ValueKey::kNvlinkInactiveMask);
    *isActive = ((inactive >> link) & 1ULL) != 0 ? NVML_FEATURE_DISABLED : NVML_FEATURE_ENABLED;
    return NVML_SUCCESS;
  });
}

}  // extern "C"
#pragma GCC visibility pop
