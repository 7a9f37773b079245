#include "collect/nvlink_health.h"

#include <vector>

namespace nvmlx::collect {

NvlinkHealthReader::NvlinkHealthReader(const nvml::Library& lib) : lib_(lib) {
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

void NvlinkHealthReader::Read(nvml::Device gpu, CounterWindow::Clock::time_point now,
                              HealthReadings* r) {
  r->nvlinks_down = LinksDown(gpu);
  nvmlFieldValue_t fv[4] = {};
  fv[0].fieldId = NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL;
  fv[1].fieldId = NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL;
  fv[2].fieldId = NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL;
  fv[3].fieldId = NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL;
  // A failed call or element is a blank sample: DCGM skips it (the window keeps what it has).
  if (!lib_.FieldValues(gpu, fv, 4).ok()) return;
  std::array<CounterWindow, 4>& windows = errors_[gpu];
  for (size_t k = 0; k < 4; ++k) {
    if (fv[k].nvmlReturn != NVML_SUCCESS) continue;
    uint64_t v = 0;
    switch (fv[k].valueType) {
      case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
        v = fv[k].value.ullVal;
        break;
      case NVML_VALUE_TYPE_UNSIGNED_INT:
        v = fv[k].value.uiVal;
        break;
      case NVML_VALUE_TYPE_UNSIGNED_LONG:
        v = fv[k].value.ulVal;
        break;
      default:
        continue;  // not a counter type: the id means something else on this driver
    }
    windows[k].Add(now, v);
    r->nvlink_errors_last_minute[k] = windows[k].Delta();
  }
}

std::optional<unsigned> NvlinkHealthReader::LinksDown(nvml::Device gpu) const {
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
