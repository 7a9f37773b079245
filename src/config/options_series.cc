// The series-shape and probe flag group (config/option_flags.h): nvml-exporter's own flags that
// choose between dcgm-exporter versions' spellings and shapes, the liveness probe's limit and the
// live page's history.
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

#include "config/option_flags.h"
#include "util/go_duration.h"

namespace nvmlx::config::flags {
namespace {

// The dcgm-exporter releases whose output differs in spelling, oldest first;
// docs/upstream/generations.md and docs/upstream/dcgm-exporter-4.9-4.10.md have each difference
// with its source. 4.8.3 renamed the host label (dcgm-exporter d5e5f51, "Rename Hostname label
// to hostname"); 4.8.4 changed only collectors rows (types and help), which the shipped CSVs
// carry; 4.9.0 moved its CSVs to DCGM 4.7's names and units and renamed the driver label
// (DCGM_FI_SYSTEM_DRIVER_VERSION, a label row of its CSV), 4.10.0 renamed four profiling rates:
// all of it collectors rows, so each has its own default file. The labels are spelt as the rows
// name them, so the file carries the label spelling too.
struct Generation {
  std::string_view version;
  std::string_view also;  // another spelling of the version ("4.9.0" for "4.9"), or empty
  std::string_view hostname_label;
  // The collectors file when -f / DCGM_EXPORTER_COLLECTORS is not given; empty: -f's own default
  // (4.8.4's rows, etc/default-counters.csv in the image's /etc/dcgm-exporter/).
  std::string_view default_collectors;
};
constexpr Generation kGenerations[] = {
    {"4.8.2", "", "Hostname", "/etc/dcgm-exporter/4.8.2/default-counters.csv"},
    {"4.8.3", "", "hostname", ""},
    {"4.8.4", "", "hostname", ""},
    {"4.9", "4.9.0", "hostname", "/etc/dcgm-exporter/4.9/default-counters.csv"},
    {"4.10", "4.10.0", "hostname", "/etc/dcgm-exporter/4.10/default-counters.csv"},
};
// The default is not the newest: the GPU Operator, which most swaps go through, deploys 4.8.x,
// and 4.9's renamed metrics and driver label would break their dashboards on the swap
// (docs/compatibility.md §3).
constexpr std::string_view kDefaultGeneration = "4.8.4";

const Generation& DefaultGeneration() {
  for (const Generation& g : kGenerations) {
    if (g.version == kDefaultGeneration) return g;
  }
  return kGenerations[0];  // unreachable: the default is a row of the table
}

// Applies --dcgm-exporter-compat (and -f's generation default), then --hostname-label over it.
Status ConvertGeneration(const RawFlags& raw, Options* o) {
  const Generation* gen = &DefaultGeneration();
  if (const Raw& r = raw.Get("dcgm-exporter-compat"); r.set) {
    gen = nullptr;
    std::string known;
    for (const Generation& g : kGenerations) {
      if (r.last() == g.version || (!g.also.empty() && r.last() == g.also)) gen = &g;
      known += (known.empty() ? "" : ", ") + std::string(g.version);
    }
    if (gen == nullptr) {
      const std::string what = " is not a dcgm-exporter release this daemon mirrors";
      return InvalidArgument(r.origin + ": " + Quote(r.last()) + what + " (expected one of " +
                             known + ")");
    }
  }
  o->dcgm_exporter_compat = std::string(gen->version);
  o->hostname_label = std::string(gen->hostname_label);
  if (!gen->default_collectors.empty() && !raw.Get("collectors").set) {
    o->collectors = std::string(gen->default_collectors);
  }
  if (const Raw& r = raw.Get("hostname-label"); r.set) {
    if (r.last() != "Hostname" && r.last() != "hostname") {
      return InvalidArgument(r.origin + ": " + Quote(r.last()) +
                             " is not a host label spelling (expected Hostname or hostname)");
    }
    o->hostname_label = r.last();
  }
  return Status::Ok();
}

Status ConvertUnknownFields(const RawFlags& raw, Options* o) {
  if (const Raw& r = raw.Get("collectors-unknown-fields"); r.set) {
    if (r.last() == "skip") {
      o->collectors_unknown_fields = UnknownFields::kSkip;
    } else if (r.last() == "fatal") {
      o->collectors_unknown_fields = UnknownFields::kFatal;
    } else {
      return InvalidArgument(r.origin + ": " + Quote(r.last()) +
                             " is not what to do with an unknown field (expected skip or fatal)");
    }
  }
  return Status::Ok();
}

// clang-format off
constexpr FlagSpec kSeries[] = {
  {"dcgm-exporter-compat", "", "NVML_EXPORTER_DCGM_EXPORTER_COMPAT", Kind::kString, "4.8.4", true,
   "VERSION", "dcgm-exporter release to mirror where releases differ: 4.8.2 (host label Hostname, "
   "default -f /etc/dcgm-exporter/4.8.2/default-counters.csv), 4.8.3 or 4.8.4 (hostname), 4.9 or "
   "4.10 (DCGM 4.7 names and units, label DCGM_FI_SYSTEM_DRIVER_VERSION: default -f "
   "/etc/dcgm-exporter/4.9/ or 4.10/default-counters.csv; docs/compatibility.md §3)."},
  {"hostname-label", "", "NVML_EXPORTER_HOSTNAME_LABEL", Kind::kString, "", true, "NAME",
   "Spelling of the host label, Hostname or hostname, over --dcgm-exporter-compat's (4.8.2: "
   "Hostname; 4.8.3 and later: hostname)."},
  {"collectors-unknown-fields", "", "NVML_EXPORTER_COLLECTORS_UNKNOWN_FIELDS", Kind::kString,
   "skip", true, "skip|fatal",
   "A collectors row naming a field nvml-exporter does not know (a newer release's): skip it "
   "with one warning naming file:line and list it in nvml_exporter_collectors_skipped, or refuse "
   "the file (fatal: exit 2 at start, as dcgm-exporter; a reload is rejected)."},
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
  NVMLX_RETURN_IF_ERROR(ConvertGeneration(raw, o));
  NVMLX_RETURN_IF_ERROR(ConvertUnknownFields(raw, o));
  NVMLX_RETURN_IF_ERROR(ToBool(raw.Get("mig-gpu-fields-on-parent"), &o->mig_gpu_fields_on_parent));
  if (const Raw& r = raw.Get("health-max-age"); r.set) {
    Result<std::chrono::nanoseconds> d = ParseGoDuration(r.last());
    if (!d.ok() || d->count() < 0) {
      return InvalidArgument(r.origin + ": " + Quote(r.last()) +
                             " is not a duration >= 0 (e.g. 90s, 2m; 0 for the default)");
    }
    o->health_max_age = std::chrono::duration_cast<std::chrono::milliseconds>(*d);
  }
  return ToIntInRange(raw.Get("live-history-minutes"), 0, 1440,
                      "a number of minutes from 0 to 1440", &o->live_history_minutes);
}

}  // namespace

FlagGroup SeriesFlags() { return {kSeries, &ConvertSeries}; }

}  // namespace nvmlx::config::flags
