// NvlinkHealthReader: what the NVLINK health watch (DCGM_EXP_GPU_HEALTH_STATUS) reads from NVML,
// once per collection of the health fields, as DCGM's MonitorNVLink looks at it:
//  - the four NVLink error totals (CRC flit, CRC data, replay, recovery: FI 38/45/52/59, one
//    nvmlDeviceGetFieldValues call) over the last minute, as DCGM compares the oldest and newest
//    sample of its last 60 s (MonitorNVLink4Fields);
//  - the link states, nvmlDeviceGetNvLinkState on links 0..17 (18 calls; a GPU without NVLink
//    answers NOT_SUPPORTED at once), counted as DCGM's UpdateNvLinkLinkStateFromNvml does.
//
// DCGM counts an inactive link as down except when MIG is enabled on any GPU of the host (NVML
// then reports NVLinks inactive); the reader asks every GPU's MIG mode once, at construction,
// which matches the collector's own rule that the MIG layout is read at start-up only.
//
// Thread-safety: not thread-safe (Read keeps each GPU's one-minute window); the collector's fast
// loop owns it. LinksDown and mig_enabled_anywhere are const and read only immutable state.
#ifndef NVML_EXPORTER_COLLECT_NVLINK_HEALTH_H_
#define NVML_EXPORTER_COLLECT_NVLINK_HEALTH_H_

#include <array>
#include <map>
#include <optional>

#include "collect/counter_window.h"
#include "collect/health.h"
#include "nvml/nvml.h"

namespace nvmlx::collect {

class NvlinkHealthReader {
 public:
  // `lib` must outlive the reader.
  explicit NvlinkHealthReader(const nvml::Library& lib);

  // Fills r->nvlinks_down and r->nvlink_errors_last_minute for `gpu` at time `now`.
  void Read(nvml::Device gpu, CounterWindow::Clock::time_point now, HealthReadings* r);

  // Links of `gpu` that count as down (CountNvlinksDown in health.h); nullopt when no link
  // answered (no NVLink: the NVLINK watch passes).
  std::optional<unsigned> LinksDown(nvml::Device gpu) const;

  bool mig_enabled_anywhere() const { return mig_enabled_anywhere_; }

 private:
  const nvml::Library& lib_;
  bool mig_enabled_anywhere_ = false;
  // Per GPU: CRC flit, CRC data, replay, recovery (HealthReadings' order).
  std::map<nvml::Device, std::array<CounterWindow, 4>> errors_;
};

}  // namespace nvmlx::collect

#endif  // NVML_EXPORTER_COLLECT_NVLINK_HEALTH_H_
