// The flag tables behind ParseOptions (config/options.h), one group per file, and the converters
// they share. Internal to config: nothing outside options*.cc includes it, but for flags_doc.cc,
// which prints docs/flags.md's tables from them.
//
// A group is a table of FlagSpec (names, env var, default, help: what --help prints and what the
// command line may say) and a function that converts and checks the group's values into
// Options. ParseOptions registers every group's flags on its CLI11 app, collects each flag's
// value (flag, else env var), then runs the groups' converters (options.cc lists the groups in
// --help order and in the order their converters run).
//
// To add a flag: add its FlagSpec to its group's table (the table's order is --help's order)
// and its conversion to that group's converter; Options gets the field.
//
// Thread-safety: constant tables and pure functions.
#ifndef NVML_EXPORTER_CONFIG_OPTION_FLAGS_H_
#define NVML_EXPORTER_CONFIG_OPTION_FLAGS_H_

#include <chrono>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/options.h"
#include "util/status.h"

namespace nvmlx::config::flags {

enum class Kind { kString, kInt, kDuration, kBool, kList };

// One dcgm-exporter (or nvml-exporter) flag. The tables drive the argv pre-pass, the CLI11
// registration, env lookup and the -h text.
struct FlagSpec {
  std::string_view name;   // long name, no dashes
  std::string_view alias;  // the other name (urfave alias: "f", "rbmn"), or empty
  std::string_view env;    // or empty
  Kind kind;
  std::string_view def;  // the default as dcgm-exporter spells it
  // False for a dcgm-exporter flag that has no effect here (accepted with a warning): --help
  // lists those apart.
  bool supported;
  std::string_view metavar;
  std::string_view help;
};

// Where a value came from, for messages: "--collect-interval" or "DCGM_EXPORTER_INTERVAL".
struct Raw {
  bool set = false;  // by flag or env
  bool from_flag = false;
  std::string origin;
  std::vector<std::string> values;  // kList: every occurrence; otherwise one value
  const std::string& last() const { return values.back(); }
};

// The value of every flag, looked up by long name.
class RawFlags {
 public:
  // `values[i]` is the value of `*specs[i]`.
  RawFlags(std::vector<const FlagSpec*> specs, std::vector<Raw> values)
      : specs_(std::move(specs)), values_(std::move(values)) {}
  // `name` must be the long name of a flag of some group.
  const Raw& Get(std::string_view name) const;
  // The flag named `name`, or null when no group has it.
  const Raw* Find(std::string_view name) const;

 private:
  std::vector<const FlagSpec*> specs_;
  std::vector<Raw> values_;
};

struct FlagGroup {
  std::span<const FlagSpec> flags;
  // Converts and checks the group's values into `out`; null for a group with nothing to convert.
  // Errors are INVALID_ARGUMENT naming where the value came from.
  Status (*convert)(const RawFlags& raw, Options* out);
};

// The groups, in --help order.
// Core: what to collect, how often, and where to serve it (dcgm-exporter's).
FlagGroup CoreFlags();
// Selection and naming: which GPUs, and how their labels are spelled (dcgm-exporter's).
FlagGroup SelectionFlags();
// Runtime: logging, which NVML to load, --once.
FlagGroup RuntimeFlags();
// Web: the HTTP server's timeouts.
FlagGroup WebFlags();
// Scrapes, the liveness probe and self-metrics (dcgm-exporter 4.8.4's; options_scrape.cc).
FlagGroup ScrapeFlags();
// CloudWatch EMF (nvml-exporter's own).
FlagGroup EmfFlags();
// Kubernetes, HPC and runtime container attribution.
FlagGroup KubernetesFlags();
// The windows of the exporter-computed DCGM_EXP_* counters.
FlagGroup CounterWindowFlags();
// Series shape (host label spelling, MIG layout) and the liveness probe (nvml-exporter's own).
FlagGroup SeriesFlags();
// dcgm-exporter's flags about DCGM itself, and the ones not done yet (options_compat.cc): each
// accepted and checked as dcgm-exporter checks it; one start-up warning for each that asks for
// something without effect here; --web-config-file refused.
FlagGroup CompatFlags();

// After every group's converter: reads Options::config_file, when set, and applies each of its
// settings whose flag (or env var) was not set (options_yaml.cc). Errors name the file and line.
Status ApplyConfigFile(const RawFlags& raw, Options* out);

// Shared converters: each leaves `*out` alone when the flag is not set.
inline constexpr std::string_view kBoolValues =
    "1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False";
std::optional<long long> ParseDecimal(std::string_view s);
// s in double quotes for a message: at most its first 64 bytes, control bytes escaped
// (util::QuoteForMessage), as a flag or environment value can be megabytes long.
std::string Quote(std::string_view s);
Status ToBool(const Raw& raw, bool* out);
Status ToNonEmpty(const Raw& raw, std::string* out);
// A decimal integer from `min` to `max`; otherwise the error "<origin>: "<value>" is not <what>".
Status ToIntInRange(const Raw& raw, long long min, long long max, std::string_view what, int* out);
// The last value as is, empty included.
void ToText(const Raw& raw, std::string* out);
// urfave's StringSliceFlag: every occurrence, each split at commas; blanks trimmed, empty
// items dropped.
void ToList(const Raw& raw, std::vector<std::string>* out);
// A Go duration, at least 1ms.
Status ToTimeout(const Raw& raw, std::chrono::milliseconds* out);

}  // namespace nvmlx::config::flags

#endif  // NVML_EXPORTER_CONFIG_OPTION_FLAGS_H_
