// The series-shape and probe flag group (config/option_flags.h): nvml-exporter's own flags that
// choose between dcgm-exporter versions' spellings and shapes, and the liveness probe's limit.
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
  return Status::Ok();
}

}  // namespace

FlagGroup SeriesFlags() { return {kSeries, &ConvertSeries}; }

}  // namespace nvmlx::config::flags
