// The clock-event (throttle) reasons that DCGM and dcgm-exporter name: the bits of
// DCGM_FI_DEV_CLOCKS_EVENT_REASONS that DCGM_EXP_CLOCK_EVENTS_COUNT counts, and the
// `clock_event` label value of each. A DCGM naming fact, so it lives with the catalog: the
// collector counts these bits (collect/clock_events.h), the renderers name them.
//
// Thread-safety: constant data and a pure constexpr function.
#ifndef NVML_EXPORTER_FIELDS_CLOCK_EVENT_NAMES_H_
#define NVML_EXPORTER_FIELDS_CLOCK_EVENT_NAMES_H_

#include <cstdint>
#include <string_view>

namespace nvmlx::fields {

// The nine reasons dcgm-exporter names, by bit (nvmlClocksEventReason*, same values as DCGM's
// DCGM_CLOCKS_EVENT_REASON_*), ascending.
inline constexpr uint64_t kClockEventReasonBits[] = {0x1,  0x2,  0x4,  0x8,  0x10,
                                                     0x20, 0x40, 0x80, 0x100};

// The clock_event label value of one reason bit ("gpu_idle", "power_cap", ...); empty for any
// other value (bits dcgm-exporter does not name are not counted).
constexpr std::string_view ClockEventName(uint64_t reason_bit) {
  // dcgm-exporter's clockEventToString (the names of dcgmi's CommandLineParser).
  switch (reason_bit) {
    case 0x1:
      return "gpu_idle";
    case 0x2:
      return "clocks_setting";
    case 0x4:
      return "power_cap";
    case 0x8:
      return "hw_slowdown";
    case 0x10:
      return "sync_boost";
    case 0x20:
      return "sw_thermal";
    case 0x40:
      return "hw_thermal";
    case 0x80:
      return "hw_power_brake";
    case 0x100:
      return "display_clocks";
    default:
      return "";
  }
}

}  // namespace nvmlx::fields

#endif  // NVML_EXPORTER_FIELDS_CLOCK_EVENT_NAMES_H_
