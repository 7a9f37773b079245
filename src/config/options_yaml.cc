// --config-file: applies dcgm-exporter's YAML configuration (config/yaml_config.h) to Options
// after every flag group has converted its flags. dcgm-exporter's order: defaults, then the
// YAML, then each flag or env var that was set explicitly. So a YAML setting fills its field only
// when the flag that says the same thing was set neither on the command line nor by its env var.
#include <string>
#include <utility>

#include "config/option_flags.h"
#include "config/yaml_config.h"

namespace nvmlx::config::flags {
namespace {

using std::chrono::milliseconds;

// Whether flag `name` was set by flag or env var. A flag that this build does not have counts as
// unset: the YAML key then always applies. (--max-concurrent-scrapes, --enable-exporter-metrics
// and --watch-max-keep-* come with the flags that serve them.)
bool Explicit(const RawFlags& raw, std::string_view name) {
  const Raw* r = raw.Find(name);
  return r != nullptr && r->set;
}

std::string Where(const YamlConfig& y, int line) { return y.file + ":" + std::to_string(line); }

// metrics.file and metrics.fields stand in for -f; metrics.enableExporterMetrics for its flag.
Status ApplyMetrics(const YamlConfig& y, const RawFlags& raw, Options* o) {
  if (y.enable_exporter_metrics && !Explicit(raw, "enable-exporter-metrics")) {
    o->enable_exporter_metrics = *y.enable_exporter_metrics;
  }
  // -f given explicitly wins over both (dcgm-exporter's applyExplicitConfigOverrides); -m then
  // wins over whichever is left, in app/collectors_source.cc.
  if (Explicit(raw, "collectors")) return Status::Ok();
  if (y.metrics_file) o->collectors = *y.metrics_file;
  if (y.metrics_fields.empty()) return Status::Ok();
  o->inline_collectors_csv = InlineFieldsCsv(y);
  o->inline_collectors_source = y.file;
  // Checked now, as a CSV file is at start: unknown types (and, with
  // --collectors-unknown-fields=fatal, unknown field names) are usage errors naming the YAML line
  // of the entry.
  Result<std::vector<CollectorEntry>> rows = ParseCollectorsCsv(
      o->inline_collectors_csv, o->inline_collectors_source, nullptr, o->collectors_unknown_fields);
  if (!rows.ok()) return InvalidArgument(rows.status().message());
  return Status::Ok();
}

// The global retention, then the all-fields collection's, key by key; a per-collection policy
// must still keep something once it inherits the global one (dcgm-exporter's validateConfig).
Status ApplyWatch(const YamlConfig& y, const RawFlags& raw, Options* o) {
  const bool age_flag = Explicit(raw, "watch-max-keep-age");
  const bool samples_flag = Explicit(raw, "watch-max-keep-samples");
  for (const YamlWatchPolicy* w : {&y.watch, &y.default_collection_watch}) {
    if (w->max_keep_age && !age_flag) {
      o->watch_max_keep_age = std::chrono::duration_cast<milliseconds>(*w->max_keep_age);
    }
    if (w->max_keep_samples && !samples_flag) {
      o->watch_max_keep_samples = static_cast<int>(*w->max_keep_samples);
    }
  }
  const bool from_yaml = !y.watch.empty() || !y.default_collection_watch.empty();
  if (from_yaml && o->watch_max_keep_age.count() == 0 && o->watch_max_keep_samples == 0) {
    const int line =
        !y.default_collection_watch.empty() ? y.default_collection_watch.line : y.watch.line;
    return InvalidArgument(Where(y, line) +
                           ": the field-watch retention keeps no value: its age and sample "
                           "limits cannot both be zero");
  }
  for (const YamlCollection& c : y.collections) {
    const bool keeps_no_age = c.watch.max_keep_age ? c.watch.max_keep_age->count() == 0
                                                   : o->watch_max_keep_age.count() == 0;
    const bool keeps_no_samples =
        c.watch.max_keep_samples ? *c.watch.max_keep_samples == 0 : o->watch_max_keep_samples == 0;
    if (!c.watch.empty() && keeps_no_age && keeps_no_samples) {
      return InvalidArgument(Where(y, c.watch.line) + ": " + c.key +
                             ": with the global retention this keeps no value (its age and "
                             "sample limits both zero)");
    }
  }
  return Status::Ok();
}

void ApplyCadence(const YamlConfig& y, const RawFlags& raw, Options* o) {
  if (y.collect_interval && !Explicit(raw, "collect-interval")) {
    o->collect_interval_ms = static_cast<int>(y.collect_interval->count());
  }
  // No flag says this: the groups always come from the file.
  o->watch_groups.clear();
  for (const YamlCollection& c : y.collections) {
    o->watch_groups.push_back({c.name, c.every, c.patterns, Where(y, c.line)});
  }
}

void ApplyServerAndSources(const YamlConfig& y, const RawFlags& raw, Options* o) {
  if (y.max_concurrent_scrapes && !Explicit(raw, "max-concurrent-scrapes")) {
    o->max_concurrent_scrapes = *y.max_concurrent_scrapes;
  }
  if (y.detect_bind_unbind && !Explicit(raw, "enable-gpu-bind-unbind-watch")) {
    o->enable_gpu_bind_unbind_watch = *y.detect_bind_unbind;
  }
  if (y.bind_unbind_poll_interval && !Explicit(raw, "gpu-bind-unbind-poll-interval")) {
    o->gpu_bind_unbind_poll_interval = *y.bind_unbind_poll_interval;
  }
}

}  // namespace

Status ApplyConfigFile(const RawFlags& raw, Options* o) {
  if (o->config_file.empty()) return Status::Ok();
  Result<YamlConfig> y = LoadYamlConfig(o->config_file);
  if (!y.ok()) {
    // Parse errors start with file:line already; a file that cannot be read says which flag
    // named it.
    if (y.status().code() == StatusCode::kInvalidArgument) return y.status();
    return InvalidArgument(raw.Get("config-file").origin + ": " + y.status().message());
  }
  NVMLX_RETURN_IF_ERROR(ApplyMetrics(*y, raw, o));
  ApplyCadence(*y, raw, o);
  NVMLX_RETURN_IF_ERROR(ApplyWatch(*y, raw, o));
  ApplyServerAndSources(*y, raw, o);
  return Status::Ok();
}

}  // namespace nvmlx::config::flags
