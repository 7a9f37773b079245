#include "collect/nvlink_state.h"

#include <vector>

#include "collect/health.h"

namespace nvmlx::collect {

NvlinkStateReader::NvlinkStateReader(const nvml::Library& lib) : lib_(lib) {
  // Every GPU of the host, not only the collected ones (DCGM's migIsEnabledForAnyGpu). A GPU
  // whose mode cannot be read counts as MIG off, as MigEnabled answers for GPUs without MIG.
  Result<unsigned> count = lib_.DeviceCount();
  for (unsigned i = 0; count.ok() && i < *count && !mig_enabled_anywhere_; ++i) {
    Result<nvml::Device> d = lib_.DeviceByIndex(i);
    if (!d.ok()) continue;
    Result<bool> mig = lib_.MigEnabled(*d);
    mig_enabled_anywhere_ = mig.ok() && *mig;
  }
}

std::optional<unsigned> NvlinkStateReader::LinksDown(nvml::Device gpu) const {
  std::vector<NvlinkState> links;
  links.reserve(NVMLX_NVLINK_MAX_LINKS);
  for (unsigned k = 0; k < NVMLX_NVLINK_MAX_LINKS; ++k) {
    Result<bool> active = lib_.NvlinkActive(gpu, k);
    links.push_back(!active.ok() ? NvlinkState::kError
                    : *active    ? NvlinkState::kActive
                                 : NvlinkState::kInactive);
  }
  return CountNvlinksDown(links, mig_enabled_anywhere_);
}

}  // namespace nvmlx::collect
