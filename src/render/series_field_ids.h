// The DCGM field ids the series builder treats specially (render/series.cc and
// render/pod_families.cc), kept here once so that they can follow the field catalog's named ids.
#ifndef NVML_EXPORTER_RENDER_SERIES_FIELD_IDS_H_
#define NVML_EXPORTER_RENDER_SERIES_FIELD_IDS_H_

namespace nvmlx::render::series_field {

inline constexpr int kGpuUtil = 203;            // DCGM_FI_DEV_GPU_UTIL
inline constexpr int kXidErrors = 230;          // DCGM_FI_DEV_XID_ERRORS
inline constexpr int kFbUsed = 252;             // DCGM_FI_DEV_FB_USED
inline constexpr int kXidErrorsCount = 9001;    // DCGM_EXP_XID_ERRORS_COUNT
inline constexpr int kClockEventsCount = 9002;  // DCGM_EXP_CLOCK_EVENTS_COUNT

}  // namespace nvmlx::render::series_field

#endif  // NVML_EXPORTER_RENDER_SERIES_FIELD_IDS_H_
