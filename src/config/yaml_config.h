// dcgm-exporter's YAML configuration file (--config-file / DCGM_EXPORTER_CONFIG_FILE), both
// schema versions, read with yaml-cpp. docs/upstream/yaml-config.md has the upstream facts this
// follows; docs/running.md shows users the file.
//
//   version 1: metrics.{file | fields[], enableExporterMetrics}, collection.{interval,
//              retention.{maxAge,maxSamples}, watchGroups[] {name, interval, fields[],
//              retention}}, sources.dcgm.detectBindUnbind, server.maxConcurrentScrapes
//   version 2: metrics as in 1, sources.dcgm.{watch.{maxKeepAge,maxKeepSamples},
//              detectBindUnbind.{enabled,pollInterval}}, collections[] {name, every,
//              metrics.include[], sources.dcgm.watch}, server.maxConcurrentScrapes
//
// The file is checked whole, as dcgm-exporter checks it, before any of it is used: one document,
// a mapping with scalar keys, no key twice, no key the version does not know, each value of its
// type. Every error names the file, the line (yaml-cpp's Mark) and the key path, e.g.
// `exporter.yaml:7: collections[1].every: "5x" is not a duration (expected e.g. 500ms, 5s, 1m)`.
//
// Field patterns (collections[].metrics.include, watchGroups[].fields) are Go path.Match globs
// matched against the collectors list's field names, as dcgm-exporter matches them: `*` any run
// of characters but '/', `?` one such character, `[a-z]` / `[^0-9]` classes, `\` escapes.
// A v2 collection whose include is exactly ["*"] is the all-fields collection: its `every` is
// the collection interval (-c), not a watch group.
//
// Pure functions over their inputs (LoadYamlConfig reads one file): thread-safe.
#ifndef NVML_EXPORTER_CONFIG_YAML_CONFIG_H_
#define NVML_EXPORTER_CONFIG_YAML_CONFIG_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/collectors_csv.h"
#include "config/options.h"
#include "util/status.h"

namespace nvmlx::config {

// A field-watch retention policy as the file spells it; an absent key stays nullopt so that it
// inherits (per collection from the global policy, the global policy from the flags' defaults).
struct YamlWatchPolicy {
  std::optional<std::chrono::nanoseconds> max_keep_age;  // >= 0
  std::optional<int64_t> max_keep_samples;               // 0 .. INT32_MAX
  int line = 0;                                          // of the block, for messages
  bool empty() const { return !max_keep_age && !max_keep_samples; }
};

// One per-field cadence: a v1 watch group or a v2 collection other than the all-fields one.
struct YamlCollection {
  std::string name;  // trimmed, unique
  std::chrono::milliseconds every{0};
  std::vector<std::string> patterns;  // trimmed, non-empty, valid globs
  YamlWatchPolicy watch;              // v2 sources.dcgm.watch, v1 retention
  std::string key;                    // "collections[2]" or "collection.watchGroups[0]"
  int line = 0;                       // of the list item
};

// One metrics.fields[] entry, trimmed.
struct YamlMetricField {
  std::string name;
  std::string prometheus_type;
  std::string help;
  int line = 0;  // of the item's `name` value: the row's line in InlineFieldsCsv
};

struct YamlConfig {
  std::string file;  // as given, for messages
  int version = 0;   // 1 or 2

  // metrics: at most one of file and fields.
  std::optional<std::string> metrics_file;
  std::vector<YamlMetricField> metrics_fields;
  std::optional<bool> enable_exporter_metrics;

  // v1 collection.interval, or v2's all-fields collection's every.
  std::optional<std::chrono::milliseconds> collect_interval;
  // The global retention: v2 sources.dcgm.watch, v1 collection.retention.
  YamlWatchPolicy watch;
  // v2's all-fields collection's sources.dcgm.watch: overrides `watch` per key.
  YamlWatchPolicy default_collection_watch;
  std::vector<YamlCollection> collections;

  // sources.dcgm.detectBindUnbind
  std::optional<bool> detect_bind_unbind;
  std::optional<std::chrono::milliseconds> bind_unbind_poll_interval;
  // server.maxConcurrentScrapes, > 0
  std::optional<int> max_concurrent_scrapes;
};

// `file` names the source in messages. Errors are INVALID_ARGUMENT.
Result<YamlConfig> ParseYamlConfig(std::string_view text, std::string_view file);
// Reads and parses `path`; a file that cannot be read is NOT_FOUND naming the path.
Result<YamlConfig> LoadYamlConfig(const std::string& path);

// metrics.fields as collectors CSV text, each row on its entry's YAML line (blank lines between),
// so that ParseCollectorsCsv(text, config.file) gives the rows a CSV file would and its
// "file:line:" messages point into the YAML file. Empty when there are no inline fields.
std::string InlineFieldsCsv(const YamlConfig& config);

// Go's path.Match over bytes. CheckFieldPattern: INVALID_ARGUMENT naming what is wrong for a
// malformed pattern (unclosed '[', a trailing '\', an empty class); MatchFieldPattern: false for
// a malformed pattern.
Status CheckFieldPattern(std::string_view pattern);
bool MatchFieldPattern(std::string_view pattern, std::string_view name);

// dcgm-exporter's start-up check of the watch groups against the fields of the collectors list
// (`rows`, read from `source`): no field may match two groups, and every group must match at
// least one field. The error names the group's file:line.
Status CheckWatchGroups(const std::vector<Options::WatchGroup>& groups,
                        const std::vector<CollectorEntry>& rows, std::string_view source);

}  // namespace nvmlx::config

#endif  // NVML_EXPORTER_CONFIG_YAML_CONFIG_H_
