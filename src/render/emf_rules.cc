#include "render/emf_rules.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <initializer_list>
#include <optional>
#include <utility>

#include "util/escape.h"

namespace nvmlx::render {
namespace {

// The EMF schema's unit list (docs/emf.md §3).
constexpr std::array<std::string_view, 27> kUnits = {
    "Seconds",
    "Microseconds",
    "Milliseconds",
    "Bytes",
    "Kilobytes",
    "Megabytes",
    "Gigabytes",
    "Terabytes",
    "Bits",
    "Kilobits",
    "Megabits",
    "Gigabits",
    "Terabits",
    "Percent",
    "Count",
    "Bytes/Second",
    "Kilobytes/Second",
    "Megabytes/Second",
    "Gigabytes/Second",
    "Terabytes/Second",
    "Bits/Second",
    "Kilobits/Second",
    "Megabits/Second",
    "Gigabits/Second",
    "Terabits/Second",
    "Count/Second",
    "None",
};

constexpr size_t kMaxDimensionKeys = 30;

std::shared_ptr<const RE2> Compile(std::string_view pattern, std::string* error) {
  RE2::Options opts;
  opts.set_log_errors(false);
  auto re = std::make_shared<const RE2>(pattern, opts);
  if (!re->ok()) {
    *error = re->error();
    return nullptr;
  }
  return re;
}

// Sorts and deduplicates each set's keys, drops duplicate sets; empty sets are kept out (the
// agent skips them when extracting).
std::vector<std::vector<std::string>> NormaliseDimensions(
    std::vector<std::vector<std::string>> sets) {
  std::vector<std::vector<std::string>> out;
  for (auto& set : sets) {
    std::sort(set.begin(), set.end());
    set.erase(std::unique(set.begin(), set.end()), set.end());
    if (set.empty()) continue;
    if (std::find(out.begin(), out.end(), set) == out.end()) out.push_back(std::move(set));
  }
  return out;
}

class Parser {
 public:
  Parser(std::string_view source, std::vector<std::string>* warnings)
      : source_(source), warnings_(warnings) {}

  Result<EmfRules> Parse(std::string_view text) {
    YAML::Node root;
    try {
      root.reset(YAML::Load(std::string(text)));
    } catch (const YAML::Exception& e) {
      return Error(e.mark.line + 1, "not valid YAML or JSON: " + e.msg);
    } catch (const std::exception& e) {
      return Error(1, std::string("cannot parse: ") + e.what());
    }
    try {
      return ParseRoot(root);
    } catch (const YAML::Exception& e) {  // conversions inside yaml-cpp; should not happen
      return Error(e.mark.line + 1, e.msg);
    }
  }

 private:
  // Messages echo what the file holds (keys, values, yaml-cpp's own text): control bytes are
  // escaped, so that a NUL does not cut the message short (util/escape.h).
  Status Error(int line, const std::string& msg) const {
    return InvalidArgument(source_ + ":" + std::to_string(line) + ": " +
                           util::EscapeControlBytes(msg));
  }
  Status Error(const YAML::Node& node, const std::string& msg) const {
    return Error(node.Mark().line + 1, msg);
  }
  static int Line(const YAML::Node& node) { return node.Mark().line + 1; }

  Status CheckKeys(const YAML::Node& map, std::string_view what,
                   std::initializer_list<std::string_view> allowed) const {
    for (auto it = map.begin(); it != map.end(); ++it) {
      const std::string key = it->first.IsScalar() ? it->first.Scalar() : "";
      if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
      std::string list;
      for (std::string_view a : allowed) {
        if (!list.empty()) list += ", ";
        list += a;
      }
      return Error(it->first, "unknown key \"" + key + "\" in " + std::string(what) +
                                  " (expected one of " + list + ")");
    }
    return Status::Ok();
  }

  Result<std::string> String(const YAML::Node& node, std::string_view what) const {
    if (!node.IsScalar()) return Error(node, std::string(what) + " must be a string");
    return node.Scalar();
  }

  Result<std::vector<std::string>> Strings(const YAML::Node& node, std::string_view what) const {
    if (!node.IsSequence()) {
      return Error(node, std::string(what) + " must be an array of strings, e.g. [\"a\", \"b\"]");
    }
    std::vector<std::string> out;
    for (const YAML::Node& item : node) {
      if (!item.IsScalar()) return Error(item, std::string(what) + " entries must be strings");
      out.push_back(item.Scalar());
    }
    return out;
  }

  Result<EmfRules> ParseRoot(const YAML::Node& root) {
    if (!root.IsMap()) {
      return Error(root.IsDefined() && !root.IsNull() ? Line(root) : 1,
                   "expected a mapping: the emf_processor object (metric_declaration, ...), "
                   "{\"emf_processor\": {...}}, or a CloudWatch agent config");
    }
    // yaml-cpp's Node::operator= writes through to the node it refers to; reset() rebinds.
    const YAML::Node* proc = &root;
    YAML::Node walked;
    if (root["logs"]) {
      walked.reset(root);
      for (const char* step : {"logs", "metrics_collected", "prometheus", "emf_processor"}) {
        const YAML::Node next = std::as_const(walked)[step];
        if (!next || !next.IsMap()) {
          return Error(walked, std::string("expected a mapping \"") + step +
                                   "\" here (CloudWatch agent config: "
                                   "logs.metrics_collected.prometheus.emf_processor)");
        }
        walked.reset(next);
      }
      proc = &walked;
    } else if (root["emf_processor"]) {
      NVMLX_RETURN_IF_ERROR(CheckKeys(root, "the top level", {"emf_processor"}));
      walked.reset(root["emf_processor"]);
      if (!walked.IsMap()) return Error(walked, "emf_processor must be a mapping");
      proc = &walked;
    }
    return ParseProcessor(*proc);
  }

  Result<EmfRules> ParseProcessor(const YAML::Node& proc) {
    NVMLX_RETURN_IF_ERROR(CheckKeys(
        proc, "emf_processor",
        {"metric_namespace", "metric_declaration", "metric_unit", "metric_declaration_dedup"}));
    EmfRules rules;
    rules.source = source_;
    if (const YAML::Node ns = proc["metric_namespace"]) {
      Result<std::string> s = String(ns, "metric_namespace");
      if (!s.ok()) return s.status();
      if (Status st = ValidateEmfNamespace(*s); !st.ok()) return Error(ns, st.message());
      rules.metric_namespace = *s;
    }
    if (const YAML::Node dedup = proc["metric_declaration_dedup"]) {
      if (!dedup.IsScalar() || (dedup.Scalar() != "true" && dedup.Scalar() != "false")) {
        return Error(dedup, "metric_declaration_dedup must be true or false");
      }
    }
    if (const YAML::Node units = proc["metric_unit"]) {
      if (!units.IsMap()) {
        return Error(units, "metric_unit must be a mapping of metric name to unit");
      }
      for (auto it = units.begin(); it != units.end(); ++it) {
        Result<std::string> unit = String(it->second, "a metric_unit value");
        if (!unit.ok()) return unit.status();
        if (!IsCloudWatchUnit(*unit)) {
          return Error(it->second, "\"" + *unit +
                                       "\" is not a CloudWatch unit (expected one of Seconds, "
                                       "Milliseconds, Bytes, Percent, Count, Bytes/Second, None, "
                                       "...)");
        }
        rules.metric_unit.emplace_back(it->first.Scalar(), *unit);
      }
    }
    const YAML::Node decls = proc["metric_declaration"];
    if (!decls) return Error(proc, "emf_processor has no metric_declaration list");
    if (!decls.IsSequence()) return Error(decls, "metric_declaration must be an array");
    for (const YAML::Node& d : decls) {
      Result<std::optional<MetricDeclaration>> decl = ParseDeclaration(d);
      if (!decl.ok()) return decl.status();
      if (*decl) rules.declarations.push_back(std::move(**decl));
    }
    return rules;
  }

  Result<std::optional<MetricDeclaration>> ParseDeclaration(const YAML::Node& d) {
    if (!d.IsMap()) return Error(d, "a metric_declaration entry must be a mapping");
    NVMLX_RETURN_IF_ERROR(CheckKeys(
        d, "a metric_declaration",
        {"source_labels", "label_matcher", "label_separator", "metric_selectors", "dimensions"}));
    MetricDeclaration m;
    m.line = Line(d);
    if (const YAML::Node n = d["source_labels"]) {
      Result<std::vector<std::string>> v = Strings(n, "source_labels");
      if (!v.ok()) return v.status();
      m.source_labels = std::move(*v);
    }
    std::string matcher = ".*";
    if (const YAML::Node n = d["label_matcher"]) {
      Result<std::string> s = String(n, "label_matcher");
      if (!s.ok()) return s.status();
      matcher = *s;
    }
    std::string error;
    m.label_matcher = Compile(matcher, &error);
    if (m.label_matcher == nullptr) {
      const YAML::Node n = d["label_matcher"];
      return Error(n, "label_matcher \"" + matcher + "\" is not a valid RE2 regular expression (" +
                          error + "); for \"anything\" write \".*\"");
    }
    if (const YAML::Node n = d["label_separator"]) {
      Result<std::string> s = String(n, "label_separator");
      if (!s.ok()) return s.status();
      m.label_separator = *s;
    }
    if (const YAML::Node n = d["metric_selectors"]) {
      Result<std::vector<std::string>> v = Strings(n, "metric_selectors");
      if (!v.ok()) return v.status();
      size_t i = 0;
      for (const std::string& sel : *v) {
        auto re = Compile(sel, &error);
        if (re == nullptr) {
          return Error(n[i], "metric_selectors entry \"" + sel +
                                 "\" is not a valid RE2 regular expression (" + error + ")");
        }
        m.metric_selectors.push_back(std::move(re));
        ++i;
      }
    }
    if (const YAML::Node n = d["dimensions"]) {
      if (!n.IsSequence()) {
        return Error(n,
                     "dimensions must be an array of arrays of label names, e.g. "
                     "[[\"ClusterName\", \"pod\"]]");
      }
      std::vector<std::vector<std::string>> sets;
      for (const YAML::Node& set : n) {
        if (!set.IsSequence()) {
          return Error(set,
                       "dimensions must be an array of arrays of label names, e.g. "
                       "[[\"ClusterName\", \"pod\"]] (this entry is not an array)");
        }
        Result<std::vector<std::string>> keys = Strings(set, "a dimension set");
        if (!keys.ok()) return keys.status();
        if (keys->size() > kMaxDimensionKeys) {
          return Error(set, "a dimension set has " + std::to_string(keys->size()) +
                                " keys; EMF allows at most 30");
        }
        if (keys->empty()) Warn(set, "an empty dimension set is ignored (as by the agent)");
        sets.push_back(std::move(*keys));
      }
      m.dimensions = NormaliseDimensions(std::move(sets));
    }
    if (m.source_labels.empty() || m.metric_selectors.empty()) {
      Warn(d, std::string("declaration without ") +
                  (m.source_labels.empty() ? "source_labels" : "metric_selectors") +
                  " is skipped (the CloudWatch agent skips it silently)");
      return std::optional<MetricDeclaration>();
    }
    if (m.dimensions.empty()) {
      Warn(d, "declaration without a non-empty dimension set selects no CloudWatch metric");
    }
    return std::optional<MetricDeclaration>(std::move(m));
  }

  void Warn(const YAML::Node& node, const std::string& msg) {
    if (warnings_ != nullptr) {
      warnings_->push_back(source_ + ":" + std::to_string(Line(node)) + ": " +
                           util::EscapeControlBytes(msg));
    }
  }

  std::string source_;
  std::vector<std::string>* warnings_;
};

std::vector<std::string> MakeSet(std::initializer_list<const char*> keys) {
  std::vector<std::string> s(keys.begin(), keys.end());
  std::sort(s.begin(), s.end());
  return s;
}

}  // namespace

Status ValidateEmfNamespace(std::string_view ns) {
  if (ns.empty() || ns.size() > 256) {
    return InvalidArgument("metric_namespace must be 1 to 256 characters");
  }
  for (char c : ns) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '#' || c == ':' || c == '/' || c == '-';
    if (!ok) {
      return InvalidArgument("metric_namespace \"" + std::string(ns) +
                             "\" has a character outside [a-zA-Z0-9._#:/-]");
    }
  }
  if (ns.rfind("AWS/", 0) == 0) {
    return InvalidArgument("metric_namespace must not start with AWS/ (reserved)");
  }
  return Status::Ok();
}

bool IsCloudWatchUnit(std::string_view unit) {
  return std::find(kUnits.begin(), kUnits.end(), unit) != kUnits.end();
}

bool MetricDeclaration::MatchesLabels(const Labels& labels) const {
  std::string joined;
  for (size_t i = 0; i < source_labels.size(); ++i) {
    if (i > 0) joined += label_separator;
    if (const std::string* v = FindLabel(labels, source_labels[i])) joined += *v;
  }
  return RE2::PartialMatch(joined, *label_matcher);
}

bool MetricDeclaration::MatchesName(std::string_view metric_name) const {
  for (const auto& re : metric_selectors) {
    if (RE2::PartialMatch(metric_name, *re)) return true;
  }
  return false;
}

const std::string* EmfRules::UnitFor(std::string_view metric_name) const {
  for (const auto& [name, unit] : metric_unit) {
    if (name == metric_name) return &unit;
  }
  return nullptr;
}

bool RulesReferenceDimension(const EmfRules& rules, std::string_view key) {
  for (const MetricDeclaration& d : rules.declarations) {
    for (const auto& set : d.dimensions) {
      if (std::find(set.begin(), set.end(), key) != set.end()) return true;
    }
  }
  return false;
}

bool NameMatchCache::Matches(const EmfRules& rules, size_t declaration, std::string_view name) {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) {
    std::vector<char> m(rules.declarations.size());
    for (size_t d = 0; d < m.size(); ++d) m[d] = rules.declarations[d].MatchesName(name) ? 1 : 0;
    it = by_name_.emplace(std::string(name), std::move(m)).first;
  }
  return it->second[declaration] != 0;
}

std::vector<EmfDirective> MatchRules(const EmfRules& rules, const Labels& labels,
                                     const std::vector<std::string_view>& metric_names,
                                     bool (*usable_dimension)(const Labels&, std::string_view),
                                     NameMatchCache* cache) {
  std::vector<const MetricDeclaration*> matched;
  std::vector<size_t> matched_index;  // into rules.declarations
  for (size_t i = 0; i < rules.declarations.size(); ++i) {
    if (rules.declarations[i].MatchesLabels(labels)) {
      matched.push_back(&rules.declarations[i]);
      matched_index.push_back(i);
    }
  }
  std::vector<EmfDirective> out;
  if (matched.empty()) return out;

  // Group metrics by the exact list of declarations their name matches (the agent's key).
  std::vector<std::vector<size_t>> keys;
  std::vector<std::vector<size_t>> members;
  for (size_t m = 0; m < metric_names.size(); ++m) {
    std::vector<size_t> key;
    for (size_t i = 0; i < matched.size(); ++i) {
      const bool hit = cache != nullptr ? cache->Matches(rules, matched_index[i], metric_names[m])
                                        : matched[i]->MatchesName(metric_names[m]);
      if (hit) key.push_back(i);
    }
    if (key.empty()) continue;
    auto it = std::find(keys.begin(), keys.end(), key);
    if (it == keys.end()) {
      keys.push_back(std::move(key));
      members.push_back({m});
    } else {
      members[static_cast<size_t>(it - keys.begin())].push_back(m);
    }
  }
  for (size_t g = 0; g < keys.size(); ++g) {
    EmfDirective d;
    for (size_t decl : keys[g]) {
      for (const auto& set : matched[decl]->dimensions) {
        bool complete = true;
        for (const std::string& k : set) {
          if (FindLabel(labels, k) == nullptr ||
              (usable_dimension != nullptr && !usable_dimension(labels, k))) {
            complete = false;
            break;
          }
        }
        if (complete &&
            std::find(d.dimensions.begin(), d.dimensions.end(), set) == d.dimensions.end()) {
          d.dimensions.push_back(set);
        }
      }
    }
    if (d.dimensions.empty()) continue;  // in the log only, no CloudWatch metric (as the agent)
    d.metrics = std::move(members[g]);
    out.push_back(std::move(d));
  }
  return out;
}

Result<EmfRules> ParseEmfRules(std::string_view text, std::string_view source,
                               std::vector<std::string>* warnings) {
  Parser p(source, warnings);
  return p.Parse(text);
}

EmfRules DefaultEmfRules(bool with_cluster_name) {
  EmfRules rules;
  MetricDeclaration d;
  d.source_labels = {"gpu"};
  std::string unused;
  d.label_matcher = Compile(".*", &unused);
  for (const char* sel :
       {"^DCGM_FI_DEV_GPU_UTIL$", "^DCGM_FI_DEV_DEC_UTIL$", "^DCGM_FI_DEV_ENC_UTIL$",
        "^DCGM_FI_DEV_MEM_CLOCK$", "^DCGM_FI_DEV_MEM_COPY_UTIL$", "^DCGM_FI_DEV_POWER_USAGE$",
        "^DCGM_FI_DEV_ROW_REMAP_FAILURE$", "^DCGM_FI_DEV_SM_CLOCK$", "^DCGM_FI_DEV_XID_ERRORS$",
        "^DCGM_FI_PROF_DRAM_ACTIVE$", "^DCGM_FI_PROF_GR_ENGINE_ACTIVE$",
        "^DCGM_FI_PROF_PCIE_RX_BYTES$", "^DCGM_FI_PROF_PCIE_TX_BYTES$",
        // dcgm-exporter 4.10's names of the same two (docs/upstream/dcgm-exporter-4.9-4.10.md):
        // a 4.10 collectors file keeps its PCIe metrics in CloudWatch.
        "^DCGM_FI_PROF_PCIE_RX_BYTES_PER_SECOND$", "^DCGM_FI_PROF_PCIE_TX_BYTES_PER_SECOND$",
        "^DCGM_FI_PROF_PIPE_TENSOR_ACTIVE$", "^DCGM_FI_DEV_GPU_TEMP$",
        "^DCGM_FI_DEV_MEMORY_TEMP$"}) {
    d.metric_selectors.push_back(Compile(sel, &unused));
  }
  if (with_cluster_name) {
    d.dimensions = {MakeSet({"ClusterName", "Namespace", "pod", "container"}),
                    MakeSet({"ClusterName", "NodeName", "gpu"})};
  } else {
    d.dimensions = {MakeSet({"Namespace", "pod", "container"}), MakeSet({"NodeName", "gpu"})};
  }
  rules.declarations.push_back(std::move(d));
  // Energy per pod (sent as each window's joules): per pod container, per namespace (chargeback:
  // CloudWatch sums the pods), and per GPU, where the series add up to the GPU's own energy. The
  // unattributed rest has an empty namespace, so only the GPU set takes it.
  MetricDeclaration energy;
  energy.source_labels = {"gpu"};
  energy.label_matcher = Compile(".*", &unused);
  energy.metric_selectors.push_back(
      Compile("^nvml_exporter_pod_gpu_energy_joules_total$", &unused));
  std::vector<std::vector<std::string>> sets = {
      {"Namespace", "pod", "container"}, {"Namespace"}, {"NodeName", "gpu"}};
  for (std::vector<std::string>& set : sets) {
    if (with_cluster_name) set.push_back("ClusterName");
    std::sort(set.begin(), set.end());  // as MakeSet: dimension sets are kept sorted
    energy.dimensions.push_back(std::move(set));
  }
  rules.declarations.push_back(std::move(energy));
  return rules;
}

}  // namespace nvmlx::render
