// NvlinkStateReader: the NVLink link states of a GPU for the health watch
// (DCGM_EXP_GPU_HEALTH_STATUS, NVLINK watch), read with nvmlDeviceGetNvLinkState on links 0..17
// each time the health fields are collected (18 calls; a GPU without NVLink answers NOT_SUPPORTED
// at once).
//
// DCGM counts an inactive link as down except when MIG is enabled on any GPU of the host (NVML
// then reports NVLinks inactive); the reader asks every GPU's MIG mode once, at construction,
// which matches the collector's own rule that the MIG layout is read at start-up only.
//
// Thread-safety: immutable after construction; LinksDown may be called from any thread.
#ifndef NVML_EXPORTER_COLLECT_NVLINK_STATE_H_
#define NVML_EXPORTER_COLLECT_NVLINK_STATE_H_

#include <optional>

#include "nvml/nvml.h"

namespace nvmlx::collect {

class NvlinkStateReader {
 public:
  // `lib` must outlive the reader.
  explicit NvlinkStateReader(const nvml::Library& lib);

  // Links of `gpu` that count as down (CountNvlinksDown in health.h); nullopt when no link
  // answered (no NVLink: the NVLINK watch passes).
  std::optional<unsigned> LinksDown(nvml::Device gpu) const;

  bool mig_enabled_anywhere() const { return mig_enabled_anywhere_; }

 private:
  const nvml::Library& lib_;
  bool mig_enabled_anywhere_ = false;
};

}  // namespace nvmlx::collect

#endif  // NVML_EXPORTER_COLLECT_NVLINK_STATE_H_
