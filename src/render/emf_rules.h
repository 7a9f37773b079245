// EMF selection rules: the CloudWatch agent's `emf_processor` (metric_namespace, metric_unit,
// metric_declaration), with the agent's semantics, so a block pasted from a cwagent config works
// unchanged (docs/emf.md §4; the agent's awsemfexporter metric_declaration.go):
//   - a declaration applies to a label set when the values of its source_labels, joined with
//     label_separator (";"), missing labels read as "", match label_matcher (default ".*");
//   - it selects the metrics whose name matches any metric_selectors entry;
//   - both are RE2 searches, UNANCHORED (Go regexp.MatchString), unlike Prometheus relabeling;
//   - of its dimension sets, only those whose every key exists on the label set are used; an
//     empty set is ignored; a metric left with no set gets no CloudWatch metric;
//   - metrics that match the same declarations share one directive whose dimension sets are the
//     union (deduplicated) of those declarations' sets;
//   - a declaration without source_labels or without metric_selectors is skipped (the agent does
//     this silently; we warn at load).
// Dimension keys within a set are deduplicated and sorted, sets deduplicated (as the agent).
// Sets of more than 30 keys (the EMF limit; the agent version read drops sets over 10) are an
// error. label_separator is honoured (the legacy agent did; the OTel-based agent always uses
// ";"). metric_declaration_dedup is accepted and has no effect (sets are always deduplicated).
//
// The file (--emf-config) is YAML or JSON (parsed by yaml-cpp, JSON being YAML flow syntax).
// Its root is one of: the emf_processor object itself; {emf_processor: {...}}; or a whole agent
// config ({"logs":{"metrics_collected":{"prometheus":{"emf_processor":{...}}}}}), whose other
// keys are ignored. Unknown keys inside emf_processor and declarations are errors (the agent's
// schema has additionalProperties:false).
//
// Immutable once built; matching is const and thread-safe (RE2 is).
#ifndef NVML_EXPORTER_RENDER_EMF_RULES_H_
#define NVML_EXPORTER_RENDER_EMF_RULES_H_

#include <re2/re2.h>

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "render/series.h"
#include "util/status.h"

namespace nvmlx::render {

inline constexpr std::string_view kDefaultEmfNamespace = "ContainerInsights/Prometheus";

struct MetricDeclaration {
  std::vector<std::string> source_labels;
  std::string label_separator = ";";
  std::shared_ptr<const RE2> label_matcher;  // never null
  std::vector<std::shared_ptr<const RE2>> metric_selectors;
  std::vector<std::vector<std::string>> dimensions;  // non-empty sets, keys sorted, deduplicated
  int line = 0;                                      // where it starts in the file (0: built-in)

  bool MatchesLabels(const Labels& labels) const;
  bool MatchesName(std::string_view metric_name) const;
};

struct EmfRules {
  std::string source = "built-in";  // file name, for messages
  std::string metric_namespace = std::string(kDefaultEmfNamespace);
  std::vector<MetricDeclaration> declarations;
  std::vector<std::pair<std::string, std::string>> metric_unit;  // metric name -> CloudWatch unit

  // The unit override for a metric name, or null.
  const std::string* UnitFor(std::string_view metric_name) const;
};

// Memo of MetricDeclaration::MatchesName per (metric name, declaration index): the names repeat
// every collection, and the selectors are most of the matching cost. Bound to one EmfRules.
// Not thread-safe (owned by one renderer).
class NameMatchCache {
 public:
  bool Matches(const EmfRules& rules, size_t declaration, std::string_view name);

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  std::unordered_map<std::string, std::vector<char>, Hash, std::equal_to<>> by_name_;
};

// One EMF directive for a label set: its dimension sets and the metrics (indices into the
// caller's list) it covers.
struct EmfDirective {
  std::vector<std::vector<std::string>> dimensions;
  std::vector<size_t> metrics;
};

// Applies `rules` to one label set with the given metric names, as the agent does. A dimension
// set is also dropped when `usable_dimension(key)` is false for one of its keys (a value that
// CloudWatch would reject: blank, non-ASCII, too long). Directives in first-metric order.
std::vector<EmfDirective> MatchRules(const EmfRules& rules, const Labels& labels,
                                     const std::vector<std::string_view>& metric_names,
                                     bool (*usable_dimension)(const Labels&, std::string_view),
                                     NameMatchCache* cache = nullptr);

// Parses the text of a rules file; `source` (the file's path) names it in messages. The caller
// reads the file (config::ReadTextFile): render does no I/O.
// Errors: INVALID_ARGUMENT "<source>:<line>: <what was expected>".
// `warnings` (may be null) receives "<source>:<line>: ..." for skipped declarations.
Result<EmfRules> ParseEmfRules(std::string_view text, std::string_view source,
                               std::vector<std::string>* warnings);

// The built-in rules: the article's 14 selectors plus temperatures (GPU util, mem copy util,
// enc/dec util, power, SM/mem clocks, GPU/memory temperature, XID, row remap failure, GR engine,
// tensor, DRAM, PCIe rx/tx), per pod [ClusterName, Namespace, pod, container] and per GPU
// [ClusterName, NodeName, gpu]; without ClusterName in the sets when `with_cluster_name` is
// false (no --emf-cluster-name: the sets would never be complete).
EmfRules DefaultEmfRules(bool with_cluster_name);

// A CloudWatch namespace: 1..256 of [a-zA-Z0-9._#:/-], not starting with AWS/ (reserved).
Status ValidateEmfNamespace(std::string_view ns);

// CloudWatch's unit names (the EMF schema's list).
bool IsCloudWatchUnit(std::string_view unit);

// True when any declaration's dimension set names `key` (for a startup warning).
bool RulesReferenceDimension(const EmfRules& rules, std::string_view key);

}  // namespace nvmlx::render

#endif  // NVML_EXPORTER_RENDER_EMF_RULES_H_
