// The series-shape and probe flag group (config/option_flags.h): nvml-exporter's own flags that
// choose between dcgm-exporter versions' spellings and shapes, the liveness probe's limit and the
// live page's history.
#include <optional>
#include <string>

#include "config/option_flags.h"
#include "util/go_duration.h"

namespace nvmlx::config::flags {
namespace {

// clang-format off
constexpr FlagSpec kSeries[] = {
  {"hostname-label", "", "NVML_EXPORTER_HOSTNAME_LABEL", Kind::kString, "Hostname", true, "NAME",
   "Spelling of the host label: Hostname (dcgm-exporter 4.8.2 and before) or hostname "
   "(upstream main after the rename)."},
  {"mig-gpu-fields-on-parent", "", "NVML_EXPORTER_MIG_GPU_FIELDS_ON_PARENT", Kind::kBool, "false",
   true, "", "MIG: GPU-wide fields (power, temperature, clocks, ECC, Xid) once on the parent GPU's "
   "series instead of repeated on every instance (docs/dcgm-compat.md)."},
  {"health-max-age", "", "NVML_EXPORTER_HEALTH_MAX_AGE", Kind::kDuration, "0s", true, "DUR",
   "/health fails when no collection was published for this long (0: 3 intervals, at least "
   "30s)."},
  {"live-history-minutes", "", "NVML_EXPORTER_LIVE_HISTORY_MINUTES", Kind::kInt, "15", true, "MIN",
   "Minutes of per-GPU history the live page (/) and /api/v1/history keep in memory (0: none; "
   "at most 1440; docs/live-page.md gives the bytes per GPU)."},
};
// clang-format on

Status ConvertSeries(const RawFlags& raw, Options* o) {
  if (const Raw& r = raw.Get("hostname-label"); r.set) {
    if (r.last() != "Hostname" && r.last() != "hostname") {
      return InvalidArgument(r.origin + ": " + Quote(r.last()) +
                             " is not a host label spelling (expected Hostname or hostname)");
    }
    o->hostname_label = r.last();
  }
  NVMLX_RETURN_IF_ERROR(ToBool(raw.Get("mig-gpu-fields-on-parent"), &o->mig_gpu_fields_on_parent));
  if (const Raw& r = raw.Get("health-max-age"); r.set) {
    Result<std::chrono::nanoseconds> d = ParseGoDuration(r.last());
    if (!d.ok() || d->count() < 0) {
      return InvalidArgument(r.origin + ": " + Quote(r.last()) +
                             " is not a duration >= 0 (e.g. 90s, 2m; 0 for the default)");
    }
    o->health_max_age = std::chrono::duration_cast<std::chrono::milliseconds>(*d);
  }
  if (const Raw& r = raw.Get("live-history-minutes"); r.set) {
    std::optional<long long> v = ParseDecimal(r.last());
    if (!v || *v < 0 || *v > 1440) {
      return InvalidArgument(r.origin + ": " + Quote(r.last()) +
                             " is not a number of minutes from 0 to 1440");
    }
    o->live_history_minutes = static_cast<int>(*v);
  }
  return Status::Ok();
}

}  // namespace

FlagGroup SeriesFlags() { return {kSeries, &ConvertSeries}; }

}  // namespace nvmlx::config::flags
