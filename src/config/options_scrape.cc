// The scrape, probe and self-metrics flag group (config/option_flags.h): the flags dcgm-exporter
// 4.8.4 added (pkg/cmd/app.go, docs/upstream/flags-4.8.4.md), with its names, env vars, defaults
// and checks.
//
//   --max-concurrent-scrapes: /metrics responses in flight at most; one more gets 503. Upstream
//     bounds the gathers and renders its scrapes start; our page is rendered once per collection,
//     so here the limit bounds the responses being written: the sockets, send buffers and page
//     references that slow or stuck readers hold (serve/http_server.h).
//   --enable-exporter-metrics: the process_* self-metrics on the page (app/process_metrics.h).
//   --health-require-gpus: /health fails while no GPU is collected (app/page_store.h).
//   --watch-max-keep-age, --watch-max-keep-samples: DCGM's field-watch retention; checked as
//     dcgm-exporter checks them, then one start-up warning each (NVML keeps no watch cache).
#include <chrono>
#include <climits>
#include <optional>
#include <string>

#include "config/option_flags.h"
#include "util/go_duration.h"

namespace nvmlx::config::flags {
namespace {

// clang-format off
constexpr FlagSpec kScrape[] = {
  {"max-concurrent-scrapes", "", "DCGM_EXPORTER_MAX_CONCURRENT_SCRAPES", Kind::kInt, "16", true,
   "N", "/metrics responses being written at once, at most; one more gets 503. The page is "
   "rendered once per collection, so this bounds what slow or stuck readers hold (sockets, send "
   "buffers, references to old pages), not rendering work."},
  {"enable-exporter-metrics", "", "DCGM_EXPORTER_ENABLE_EXPORTER_METRICS", Kind::kBool, "false",
   true, "", "Add the process's own metrics (process_cpu_seconds_total, "
   "process_resident_memory_bytes, process_open_fds, ...) to /metrics, read from /proc/self once "
   "per collection."},
  {"health-require-gpus", "", "DCGM_EXPORTER_HEALTH_REQUIRE_GPUS", Kind::kBool, "false", true, "",
   "/health answers 503 while no GPU is collected, so that a liveness probe restarts an exporter "
   "that came up seeing no GPU."},
  {"watch-max-keep-age", "", "DCGM_EXPORTER_WATCH_MAX_KEEP_AGE", Kind::kDuration, "10m0s", false,
   "DUR", "Age of the samples DCGM's field watches keep (no effect: NVML keeps no watch cache)."},
  {"watch-max-keep-samples", "", "DCGM_EXPORTER_WATCH_MAX_KEEP_SAMPLES", Kind::kInt, "0", false,
   "N", "Samples DCGM's field watches keep (no effect: NVML keeps no watch cache)."},
};
// clang-format on

constexpr std::string_view kNoWatchCache =
    "nvml-exporter reads NVML each collection and keeps no DCGM field-watch cache to bound";

void WarnWatch(const Raw& r, std::string_view name, Options* o) {
  o->startup_warnings.push_back(
      {std::string(name), "--" + std::string(name) + " (" + r.origin + "=" + r.last() +
                              ") ignored: " + std::string(kNoWatchCache)});
}

// The retention pair, checked as dcgm-exporter checks it (appconfig.WatchRetention.Validate):
// neither negative, the sample count within int32, and not both zero (an unbounded watch).
Status ConvertWatchRetention(const RawFlags& raw, Options* o) {
  std::chrono::nanoseconds age = std::chrono::minutes(10);
  long long samples = 0;
  const Raw& a = raw.Get("watch-max-keep-age");
  if (a.set) {
    Result<std::chrono::nanoseconds> d = ParseGoDuration(a.last());
    if (!d.ok()) return InvalidArgument(a.origin + ": " + d.status().message());
    if (d->count() < 0) {
      return InvalidArgument(a.origin + ": " + Quote(a.last()) + " must not be negative");
    }
    age = *d;
  }
  const Raw& s = raw.Get("watch-max-keep-samples");
  if (s.set) {
    std::optional<long long> v = ParseDecimal(s.last());
    if (!v) return InvalidArgument(s.origin + ": " + Quote(s.last()) + " is not a whole number");
    if (*v < 0 || *v > INT32_MAX) {
      return InvalidArgument(s.origin + ": " + s.last() + " is out of range (0 to " +
                             std::to_string(INT32_MAX) + ")");
    }
    samples = *v;
  }
  if (age.count() == 0 && samples == 0) {
    const Raw& which = a.set ? a : s;
    return InvalidArgument(which.origin +
                           ": --watch-max-keep-age and --watch-max-keep-samples cannot both be "
                           "zero (an unbounded watch)");
  }
  // Kept for the YAML's retention checks (options_yaml.cc), which the flags override key by key.
  if (a.set) o->watch_max_keep_age = std::chrono::duration_cast<std::chrono::milliseconds>(age);
  if (s.set) o->watch_max_keep_samples = static_cast<int>(samples);
  if (a.set) WarnWatch(a, "watch-max-keep-age", o);
  if (s.set) WarnWatch(s, "watch-max-keep-samples", o);
  return Status::Ok();
}

Status ConvertScrape(const RawFlags& raw, Options* o) {
  if (const Raw& r = raw.Get("max-concurrent-scrapes"); r.set) {
    std::optional<long long> v = ParseDecimal(r.last());
    if (!v) return InvalidArgument(r.origin + ": " + Quote(r.last()) + " is not a whole number");
    // dcgm-exporter refuses 0 and below ("must be greater than 0"); the upper bound only keeps
    // the value an int (the connection limit bounds concurrency anyway).
    if (*v <= 0 || *v > 1000000) {
      return InvalidArgument(r.origin + ": " + r.last() +
                             " is out of range (at least 1, at most 1000000)");
    }
    o->max_concurrent_scrapes = static_cast<int>(*v);
  }
  NVMLX_RETURN_IF_ERROR(ToBool(raw.Get("enable-exporter-metrics"), &o->enable_exporter_metrics));
  NVMLX_RETURN_IF_ERROR(ToBool(raw.Get("health-require-gpus"), &o->health_require_gpus));
  return ConvertWatchRetention(raw, o);
}

}  // namespace

FlagGroup ScrapeFlags() { return {kScrape, &ConvertScrape}; }

}  // namespace nvmlx::config::flags
