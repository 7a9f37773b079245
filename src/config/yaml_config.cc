#include "config/yaml_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <climits>
#include <exception>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "config/text_file.h"
#include "config/yaml_documents.h"
#include "util/escape.h"
#include "util/go_duration.h"
#include "util/strings.h"

namespace nvmlx::config {
namespace {

using Node = YAML::Node;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;

int LineOf(const Node& n) { return n.IsDefined() ? n.Mark().line + 1 : 0; }

std::string Quote(std::string_view s) { return util::QuoteForMessage(s); }

// YAML's white space and line breaks (not \f or \v, which YAML counts as content).
std::string Trim(std::string_view s) { return std::string(util::TrimChars(s, " \t\r\n")); }

std::string Join(std::initializer_list<std::string_view> words) {
  std::string out;
  size_t i = 0;
  for (std::string_view w : words) {
    if (i > 0) out += (i + 1 == words.size()) ? " or " : ", ";
    out += w;
    ++i;
  }
  return out;
}

std::string Child(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string Item(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

// A hint for a key the other schema version has: the commonest slip when moving a file from 1
// to 2 or back.
std::string OtherVersionHint(int version, const std::string& path, std::string_view key) {
  if (version == 2 && path.empty() && key == "collection") {
    return "; that is version 1's block: version 2 has collections[]";
  }
  if (version == 1 && path.empty() && key == "collections") {
    return "; that is version 2's list: version 1 has collection.watchGroups[]";
  }
  if (version == 1 && path == "sources.dcgm" && key == "watch") {
    return "; version 1 sets retention in collection.retention";
  }
  return "";
}

// Walks one parsed document, checking it as it goes. Every error is
// "<file>:<line>: <key path>: <what>".
class Reader {
 public:
  Reader(std::string file, int version) : file_(std::move(file)), version_(version) {}

  Status Error(const Node& at, const std::string& path, const std::string& what) const {
    return ErrorAt(LineOf(at), path, what);
  }
  Status ErrorAt(int line, const std::string& path, const std::string& what) const {
    std::string where = file_ + ":" + (line > 0 ? std::to_string(line) : "?") + ": ";
    if (!path.empty()) where += path + ": ";
    return InvalidArgument(where + what);
  }

  // A mapping (or null: nothing) whose keys are plain scalars, each once, each in `known`;
  // `field(key, value, key path)` for each.
  template <typename F>
  Status Map(const Node& node, const std::string& path,
             std::initializer_list<std::string_view> known, F field) const {
    if (!node.IsDefined() || node.IsNull()) return Status::Ok();
    if (!node.IsMap()) return Error(node, path, "expected a mapping (key: value lines)");
    std::map<std::string, int> seen;
    for (const auto& kv : node) {
      if (!kv.first.IsScalar()) return Error(kv.first, path, "a key must be a plain string");
      const std::string key = kv.first.Scalar();
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        return Error(kv.first, "",
                     "unknown key " + Quote(key) + " " +
                         (path.empty() ? std::string("at the top level") : "in " + path) +
                         " (version " + std::to_string(version_) + " knows " + Join(known) + ")" +
                         OtherVersionHint(version_, path, key));
      }
      const int line = LineOf(kv.first);
      if (auto [it, fresh] = seen.emplace(key, line); !fresh) {
        return ErrorAt(line, Child(path, key),
                       "repeated key (first at line " + std::to_string(it->second) + ")");
      }
      NVMLX_RETURN_IF_ERROR(field(key, kv.second, Child(path, key)));
    }
    return Status::Ok();
  }

  // A list (or null: empty); `item(value, path[i])` for each.
  template <typename F>
  Status List(const Node& node, const std::string& path, F item) const {
    if (!node.IsDefined() || node.IsNull()) return Status::Ok();
    if (!node.IsSequence()) return Error(node, path, "expected a list (- item lines or [a, b])");
    size_t i = 0;
    for (const auto& e : node) {
      NVMLX_RETURN_IF_ERROR(item(e, Item(path, i)));
      ++i;
    }
    return Status::Ok();
  }

  // A scalar as text; null reads as "" (Go decodes it so).
  Status String(const Node& n, const std::string& path, std::string* out) const {
    if (!n.IsDefined() || n.IsNull()) {
      out->clear();
      return Status::Ok();
    }
    if (!n.IsScalar()) return Error(n, path, "expected a single value, not a list or mapping");
    *out = n.Scalar();
    return Status::Ok();
  }

  Status Bool(const Node& n, const std::string& path, std::optional<bool>* out) const {
    if (n.IsNull()) return Status::Ok();
    std::string v;
    NVMLX_RETURN_IF_ERROR(String(n, path, &v));
    // yaml.v3 decodes these into a Go bool (YAML 1.1's words included).
    static const std::set<std::string, std::less<>> kTrue = {"true", "True", "TRUE", "yes", "Yes",
                                                             "YES",  "on",   "On",   "ON"};
    static const std::set<std::string, std::less<>> kFalse = {"false", "False", "FALSE", "no", "No",
                                                              "NO",    "off",   "Off",   "OFF"};
    if (kTrue.count(v)) {
      *out = true;
    } else if (kFalse.count(v)) {
      *out = false;
    } else {
      return Error(n, path, Quote(v) + " is not a boolean (expected true or false)");
    }
    return Status::Ok();
  }

  Status Int(const Node& n, const std::string& path, long long* out) const {
    std::string v;
    NVMLX_RETURN_IF_ERROR(String(n, path, &v));
    const std::string_view all = v;  // a view of v, so that substr does not make a temporary
    const std::string_view digits =
        all.empty() || (all[0] != '-' && all[0] != '+') ? all : all.substr(1);
    if (digits.empty() || digits.size() > 18 ||
        digits.find_first_not_of("0123456789") != std::string_view::npos) {
      return Error(n, path, Quote(v) + " is not a whole number");
    }
    *out = std::stoll(std::string(digits)) * (v[0] == '-' ? -1 : 1);
    return Status::Ok();
  }

  Result<nanoseconds> Duration(const Node& n, const std::string& path) const {
    std::string v;
    NVMLX_RETURN_IF_ERROR(String(n, path, &v));
    Result<nanoseconds> d = ParseGoDuration(Trim(v));
    if (!d.ok()) {
      return Error(n, path, Quote(v) + " is not a duration (expected e.g. 500ms, 5s, 1m)");
    }
    return d;
  }

  // A collection cadence: positive whole milliseconds, as dcgm-exporter requires, and at least
  // -c's floor of 100ms (NVML's own sampling is not faster).
  Result<milliseconds> Cadence(const Node& n, const std::string& path) const {
    Result<nanoseconds> d = Duration(n, path);
    if (!d.ok()) return d.status();
    const std::string v = Trim(n.IsScalar() ? n.Scalar() : "");
    if (d->count() <= 0) return Error(n, path, Quote(v) + " must be greater than 0");
    if (d->count() % 1000000 != 0) {
      return Error(n, path, Quote(v) + " is not a whole number of milliseconds");
    }
    if (*d < milliseconds(100)) {
      return Error(n, path, Quote(v) + " is below the minimum of 100ms (as -c/--collect-interval)");
    }
    if (*d > milliseconds(INT_MAX)) {
      return Error(n, path, Quote(v) + " is too long (at most " + std::to_string(INT_MAX) + "ms)");
    }
    return std::chrono::duration_cast<milliseconds>(*d);
  }

  // A retention block: `age_key` a duration >= 0, `samples_key` 0 .. INT32_MAX.
  Status Watch(const Node& node, const std::string& path, std::string_view age_key,
               std::string_view samples_key, YamlWatchPolicy* out) const {
    out->line = LineOf(node);
    return Map(node, path, {age_key, samples_key},
               [&](const std::string& k, const Node& v, const std::string& p) -> Status {
                 if (k == age_key) {
                   Result<nanoseconds> d = Duration(v, p);
                   if (!d.ok()) return d.status();
                   if (d->count() < 0) return Error(v, p, "must not be negative");
                   out->max_keep_age = *d;
                   return Status::Ok();
                 }
                 long long s = 0;
                 NVMLX_RETURN_IF_ERROR(Int(v, p, &s));
                 if (s < 0) return Error(v, p, "must not be negative");
                 if (s > INT32_MAX) {
                   return Error(v, p, "must not exceed " + std::to_string(INT32_MAX));
                 }
                 out->max_keep_samples = s;
                 return Status::Ok();
               });
  }

  // A per-group retention may not keep nothing at all.
  Status NotBothZero(const YamlWatchPolicy& w, const std::string& path, std::string_view age_key,
                     std::string_view samples_key) const {
    if (w.max_keep_age && w.max_keep_samples && w.max_keep_age->count() == 0 &&
        *w.max_keep_samples == 0) {
      return ErrorAt(w.line, path,
                     std::string(age_key) + " and " + std::string(samples_key) +
                         " cannot both be zero (that keeps no value)");
    }
    return Status::Ok();
  }

  Status Patterns(const Node& node, const std::string& path, std::vector<std::string>* out) const {
    NVMLX_RETURN_IF_ERROR(List(node, path, [&](const Node& e, const std::string& p) -> Status {
      std::string v;
      NVMLX_RETURN_IF_ERROR(String(e, p, &v));
      v = Trim(v);
      if (v.empty()) return Error(e, p, "an empty pattern (expected a field name or glob)");
      if (Status st = CheckFieldPattern(v); !st.ok()) return Error(e, p, st.message());
      out->push_back(std::move(v));
      return Status::Ok();
    }));
    if (out->empty()) {
      return Error(node, path, "must list at least one field name or pattern");
    }
    return Status::Ok();
  }

  Status Metrics(const Node& node, YamlConfig* c) const;
  Status MetricFields(const Node& node, const std::string& path, YamlConfig* c) const;
  Status Sources(const Node& node, YamlConfig* c) const;
  Status Server(const Node& node, YamlConfig* c) const;
  Status CollectionV1(const Node& node, YamlConfig* c) const;
  Status CollectionsV2(const Node& node, YamlConfig* c) const;
  Status OneCollectionV2(const Node& item, const std::string& path, YamlCollection* out) const;
  // Names seen so far: name -> "collections[1] (line 9)".
  using Names = std::map<std::string, std::string>;
  Status UniqueName(const YamlCollection& col, const std::string& name_path, Names* names) const;

 private:
  std::string file_;
  int version_;
};

Status Reader::Metrics(const Node& node, YamlConfig* c) const {
  const std::string path = "metrics";
  bool has_file = false;
  NVMLX_RETURN_IF_ERROR(Map(node, path, {"file", "fields", "enableExporterMetrics"},
                            [&](const std::string& k, const Node& v, const std::string& p) {
                              if (k == "enableExporterMetrics") {
                                return Bool(v, p, &c->enable_exporter_metrics);
                              }
                              if (k == "fields") return MetricFields(v, p, c);
                              std::string file;
                              NVMLX_RETURN_IF_ERROR(String(v, p, &file));
                              file = Trim(file);
                              if (!file.empty()) c->metrics_file = file;
                              has_file = !file.empty();
                              return Status::Ok();
                            }));
  if (!node.IsDefined() || node.IsNull()) return Status::Ok();
  if (has_file && !c->metrics_fields.empty()) {
    return Error(node, path, "file and fields exclude each other (give one: a CSV or the list)");
  }
  if (!has_file && c->metrics_fields.empty() && !c->enable_exporter_metrics) {
    return Error(node, path, "expected file, fields or enableExporterMetrics");
  }
  return Status::Ok();
}

Status Reader::MetricFields(const Node& node, const std::string& path, YamlConfig* c) const {
  std::map<std::string, std::pair<std::string, int>> names;  // name -> (its path, its line)
  return List(node, path, [&](const Node& item, const std::string& p) -> Status {
    YamlMetricField f;
    f.line = LineOf(item);
    NVMLX_RETURN_IF_ERROR(Map(item, p, {"name", "prometheusType", "help"},
                              [&](const std::string& k, const Node& v, const std::string& kp) {
                                std::string s;
                                NVMLX_RETURN_IF_ERROR(String(v, kp, &s));
                                s = Trim(s);
                                if (k == "name") {
                                  f.name = s;
                                  if (LineOf(v) > 0) f.line = LineOf(v);
                                } else if (k == "prometheusType") {
                                  f.prometheus_type = s;
                                } else {
                                  f.help = s;
                                }
                                return Status::Ok();
                              }));
    if (!item.IsMap()) return Error(item, p, "expected a mapping with name, prometheusType, help");
    if (f.name.empty()) return Error(item, p + ".name", "is required");
    if (auto it = names.find(f.name); it != names.end()) {
      return ErrorAt(f.line, p + ".name",
                     Quote(f.name) + " repeats " + it->second.first + " (line " +
                         std::to_string(it->second.second) + ")");
    }
    names.emplace(f.name, std::make_pair(p, f.line));
    if (f.prometheus_type.empty()) return Error(item, p + ".prometheusType", "is required");
    if (f.help.empty()) return Error(item, p + ".help", "is required");
    c->metrics_fields.push_back(std::move(f));
    return Status::Ok();
  });
}

Status Reader::Sources(const Node& node, YamlConfig* c) const {
  return Map(node, "sources", {"dcgm"},
             [&](const std::string&, const Node& dcgm, const std::string& dp) -> Status {
               auto detect = [&](const Node& v, const std::string& p) {
                 return Map(
                     v, p, {"enabled", "pollInterval"},
                     [&](const std::string& k, const Node& x, const std::string& kp) -> Status {
                       if (k == "enabled") return Bool(x, kp, &c->detect_bind_unbind);
                       std::string text;
                       NVMLX_RETURN_IF_ERROR(String(x, kp, &text));
                       if (Trim(text).empty()) return Status::Ok();  // omitted: the default
                       Result<nanoseconds> d = Duration(x, kp);
                       if (!d.ok()) return d.status();
                       if (d->count() <= 0) return Error(x, kp, "must be greater than 0");
                       if (*d < milliseconds(1)) return Error(x, kp, "must be at least 1ms");
                       c->bind_unbind_poll_interval = std::chrono::duration_cast<milliseconds>(*d);
                       return Status::Ok();
                     });
               };
               if (version_ == 1) {
                 return Map(dcgm, dp, {"detectBindUnbind"},
                            [&](const std::string&, const Node& v, const std::string& p) {
                              return detect(v, p);
                            });
               }
               return Map(dcgm, dp, {"watch", "detectBindUnbind"},
                          [&](const std::string& k, const Node& v, const std::string& p) {
                            if (k == "watch")
                              return Watch(v, p, "maxKeepAge", "maxKeepSamples", &c->watch);
                            return detect(v, p);
                          });
             });
}

Status Reader::Server(const Node& node, YamlConfig* c) const {
  return Map(node, "server", {"maxConcurrentScrapes"},
             [&](const std::string&, const Node& v, const std::string& p) -> Status {
               long long n = 0;
               NVMLX_RETURN_IF_ERROR(Int(v, p, &n));
               if (n <= 0) return Error(v, p, "must be greater than 0");
               if (n > INT_MAX) return Error(v, p, "is too large");
               c->max_concurrent_scrapes = static_cast<int>(n);
               return Status::Ok();
             });
}

Status Reader::UniqueName(const YamlCollection& col, const std::string& name_path,
                          Names* names) const {
  auto [it, fresh] = names->emplace(col.name, col.key + " (line " + std::to_string(col.line) + ")");
  if (fresh) return Status::Ok();
  return ErrorAt(col.line, name_path,
                 Quote(col.name) + " repeats " + it->second + "; names must be unique");
}

Status Reader::CollectionV1(const Node& node, YamlConfig* c) const {
  const std::string path = "collection";
  Names names;
  return Map(node, path, {"interval", "retention", "watchGroups"},
             [&](const std::string& k, const Node& v, const std::string& p) -> Status {
               if (k == "interval") {
                 std::string text;
                 NVMLX_RETURN_IF_ERROR(String(v, p, &text));
                 if (Trim(text).empty()) return Status::Ok();  // omitted: -c's value
                 Result<milliseconds> every = Cadence(v, p);
                 if (!every.ok()) return every.status();
                 c->collect_interval = *every;
                 return Status::Ok();
               }
               if (k == "retention") return Watch(v, p, "maxAge", "maxSamples", &c->watch);
               return List(v, p, [&](const Node& item, const std::string& ip) -> Status {
                 YamlCollection col;
                 col.key = ip;
                 col.line = LineOf(item);
                 NVMLX_RETURN_IF_ERROR(Map(
                     item, ip, {"name", "interval", "fields", "retention"},
                     [&](const std::string& gk, const Node& gv, const std::string& gp) -> Status {
                       if (gk == "name") {
                         NVMLX_RETURN_IF_ERROR(String(gv, gp, &col.name));
                         col.name = Trim(col.name);
                         return Status::Ok();
                       }
                       if (gk == "interval") {
                         Result<milliseconds> every = Cadence(gv, gp);
                         if (!every.ok()) return every.status();
                         col.every = *every;
                         return Status::Ok();
                       }
                       if (gk == "fields") return Patterns(gv, gp, &col.patterns);
                       NVMLX_RETURN_IF_ERROR(Watch(gv, gp, "maxAge", "maxSamples", &col.watch));
                       return NotBothZero(col.watch, gp, "maxAge", "maxSamples");
                     }));
                 if (!item.IsMap())
                   return Error(item, ip, "expected a mapping with name, interval, fields");
                 if (col.name.empty()) return Error(item, ip + ".name", "is required");
                 if (col.every.count() == 0) return Error(item, ip + ".interval", "is required");
                 if (col.patterns.empty()) return Error(item, ip + ".fields", "is required");
                 NVMLX_RETURN_IF_ERROR(UniqueName(col, ip + ".name", &names));
                 c->collections.push_back(std::move(col));
                 return Status::Ok();
               });
             });
}

Status Reader::OneCollectionV2(const Node& item, const std::string& path,
                               YamlCollection* col) const {
  col->key = path;
  col->line = LineOf(item);
  bool have_every = false;
  NVMLX_RETURN_IF_ERROR(Map(
      item, path, {"name", "every", "metrics", "sources"},
      [&](const std::string& k, const Node& v, const std::string& p) -> Status {
        if (k == "name") {
          NVMLX_RETURN_IF_ERROR(String(v, p, &col->name));
          col->name = Trim(col->name);
          return Status::Ok();
        }
        if (k == "every") {
          Result<milliseconds> every = Cadence(v, p);
          if (!every.ok()) return every.status();
          col->every = *every;
          have_every = true;
          return Status::Ok();
        }
        if (k == "metrics") {
          bool have_include = false;
          NVMLX_RETURN_IF_ERROR(Map(v, p, {"include"},
                                    [&](const std::string&, const Node& iv, const std::string& ip) {
                                      have_include = true;
                                      return Patterns(iv, ip, &col->patterns);
                                    }));
          if (!have_include) return Error(v, p + ".include", "is required");
          return Status::Ok();
        }
        return Map(v, p, {"dcgm"}, [&](const std::string&, const Node& dv, const std::string& dp) {
          return Map(
              dv, dp, {"watch"},
              [&](const std::string&, const Node& wv, const std::string& wp) -> Status {
                NVMLX_RETURN_IF_ERROR(Watch(wv, wp, "maxKeepAge", "maxKeepSamples", &col->watch));
                return NotBothZero(col->watch, wp, "maxKeepAge", "maxKeepSamples");
              });
        });
      }));
  if (!item.IsMap()) return Error(item, path, "expected a mapping with name, every, metrics");
  if (col->name.empty()) return Error(item, path + ".name", "is required");
  if (!have_every) return Error(item, path + ".every", "is required");
  if (col->patterns.empty()) return Error(item, path + ".metrics.include", "is required");
  return Status::Ok();
}

Status Reader::CollectionsV2(const Node& node, YamlConfig* c) const {
  const std::string path = "collections";
  if (!node.IsDefined() || node.IsNull()) return Status::Ok();
  if (node.IsSequence() && node.size() == 0) {
    return Error(node, path, "must list at least one collection");
  }
  std::string all_fields;  // the all-fields collection's key, once seen
  Names names;
  return List(node, path, [&](const Node& item, const std::string& ip) -> Status {
    YamlCollection col;
    NVMLX_RETURN_IF_ERROR(OneCollectionV2(item, ip, &col));
    NVMLX_RETURN_IF_ERROR(UniqueName(col, ip + ".name", &names));
    if (col.patterns.size() == 1 && col.patterns[0] == "*") {
      // dcgm-exporter: the all-fields collection is the default cadence and retention, not a
      // group (a group would claim every field and clash with every other group).
      if (!all_fields.empty()) {
        return ErrorAt(
            col.line, ip + ".metrics.include",
            "a second all-fields collection ([\"*\"]); " + all_fields + " is one already");
      }
      all_fields = ip + " " + Quote(col.name);
      c->collect_interval = col.every;
      c->default_collection_watch = col.watch;
      return Status::Ok();
    }
    c->collections.push_back(std::move(col));
    return Status::Ok();
  });
}

// The version, read before the rest so that the rest is checked against its schema.
Result<int> ReadVersion(const Node& root, const std::string& file) {
  Node version;
  int count = 0;
  for (const auto& kv : root) {
    if (kv.first.IsScalar() && kv.first.Scalar() == "version") {
      version = kv.second;
      ++count;
    }
  }
  auto fail = [&](int line, const std::string& what) -> Status {
    return InvalidArgument(file + ":" + std::to_string(line > 0 ? line : 1) + ": version: " + what);
  };
  // A repeated version is reported by the walk, with both lines.
  if (count == 0) return fail(LineOf(root), "missing (expected version: 1 or version: 2)");
  const std::string v = version.IsScalar() ? version.Scalar() : "";
  if (v == "1") return 1;
  if (v == "2") return 2;
  return fail(LineOf(version), Quote(v) + " is not a supported version (expected 1 or 2)");
}

Status Walk(const Node& root, YamlConfig* c) {
  const Reader r(c->file, c->version);
  if (c->version == 1) {
    NVMLX_RETURN_IF_ERROR(r.Map(root, "", {"version", "metrics", "collection", "sources", "server"},
                                [&](const std::string& k, const Node& v, const std::string&) {
                                  if (k == "metrics") return r.Metrics(v, c);
                                  if (k == "collection") return r.CollectionV1(v, c);
                                  if (k == "sources") return r.Sources(v, c);
                                  if (k == "server") return r.Server(v, c);
                                  return Status::Ok();
                                }));
  } else {
    NVMLX_RETURN_IF_ERROR(r.Map(root, "",
                                {"version", "metrics", "collections", "sources", "server"},
                                [&](const std::string& k, const Node& v, const std::string&) {
                                  if (k == "metrics") return r.Metrics(v, c);
                                  if (k == "collections") return r.CollectionsV2(v, c);
                                  if (k == "sources") return r.Sources(v, c);
                                  if (k == "server") return r.Server(v, c);
                                  return Status::Ok();
                                }));
  }
  return Status::Ok();
}

// One piece of a pattern between stars, and whether stars came before it (Go's scanChunk).
struct Chunk {
  bool star = false;
  std::string_view text;
};

Chunk NextChunk(std::string_view* pattern) {
  Chunk c;
  while (!pattern->empty() && pattern->front() == '*') {
    pattern->remove_prefix(1);
    c.star = true;
  }
  bool in_class = false;
  size_t i = 0;
  for (; i < pattern->size(); ++i) {
    const char ch = (*pattern)[i];
    if (ch == '\\') {
      if (i + 1 < pattern->size()) ++i;
    } else if (ch == '[') {
      in_class = true;
    } else if (ch == ']') {
      in_class = false;
    } else if (ch == '*' && !in_class) {
      break;
    }
  }
  c.text = pattern->substr(0, i);
  pattern->remove_prefix(i);
  return c;
}

// A class member at chunk[*i], '\'-escaped or not; false when malformed (Go's getEsc: no
// member may be '-' or ']' unescaped, and the class must still go on after it).
bool ClassMember(std::string_view chunk, size_t* i, unsigned char* out) {
  if (*i >= chunk.size() || chunk[*i] == '-' || chunk[*i] == ']') return false;
  if (chunk[*i] == '\\' && ++*i >= chunk.size()) return false;
  *out = static_cast<unsigned char>(chunk[(*i)++]);
  return *i < chunk.size();
}

enum class ChunkMatch { kYes, kNo, kBadPattern };

// Matches `chunk` (no unescaped '*') against the start of `name`; on kYes, *rest is what is
// left of the name. The whole chunk is parsed even after a mismatch, so that a malformed one is
// always reported (Go's matchChunk).
ChunkMatch MatchChunk(std::string_view chunk, std::string_view name, std::string_view* rest) {
  bool failed = false;
  size_t n = 0;
  size_t i = 0;
  while (i < chunk.size()) {
    if (!failed && n >= name.size()) failed = true;
    const char ch = chunk[i];
    if (ch == '[') {
      unsigned char c = 0;
      if (!failed) c = static_cast<unsigned char>(name[n++]);
      ++i;
      const bool negated = i < chunk.size() && chunk[i] == '^';
      if (negated) ++i;
      bool match = false;
      for (int ranges = 0;; ++ranges) {
        if (i < chunk.size() && chunk[i] == ']' && ranges > 0) {
          ++i;
          break;
        }
        unsigned char lo = 0;
        if (!ClassMember(chunk, &i, &lo)) return ChunkMatch::kBadPattern;
        unsigned char hi = lo;
        if (chunk[i] == '-') {
          ++i;
          if (!ClassMember(chunk, &i, &hi)) return ChunkMatch::kBadPattern;
        }
        if (lo <= c && c <= hi) match = true;
      }
      if (match == negated) failed = true;
      continue;
    }
    if (ch == '?') {
      if (!failed) failed = name[n++] == '/';
      ++i;
      continue;
    }
    if (ch == '\\' && ++i >= chunk.size()) return ChunkMatch::kBadPattern;
    if (!failed) failed = chunk[i] != name[n++];
    ++i;
  }
  if (failed) return ChunkMatch::kNo;
  *rest = name.substr(n);
  return ChunkMatch::kYes;
}

// Go's path.Match: nullopt for a malformed pattern.
std::optional<bool> GoPathMatch(std::string_view pattern, std::string_view name) {
  while (!pattern.empty()) {
    const Chunk chunk = NextChunk(&pattern);
    // A trailing star takes the rest of the name unless it crosses a '/'.
    if (chunk.star && chunk.text.empty()) return name.find('/') == std::string_view::npos;
    std::string_view rest;
    ChunkMatch m = MatchChunk(chunk.text, name, &rest);
    if (m == ChunkMatch::kBadPattern) return std::nullopt;
    // The last chunk must take the whole name.
    if (m == ChunkMatch::kYes && (rest.empty() || !pattern.empty())) {
      name = rest;
      continue;
    }
    bool advanced = false;
    if (chunk.star) {
      // The star takes 1, 2, ... more bytes, never a '/'.
      for (size_t skip = 0; skip < name.size() && name[skip] != '/'; ++skip) {
        m = MatchChunk(chunk.text, name.substr(skip + 1), &rest);
        if (m == ChunkMatch::kBadPattern) return std::nullopt;
        if (m == ChunkMatch::kYes && (!pattern.empty() || rest.empty())) {
          name = rest;
          advanced = true;
          break;
        }
      }
    }
    if (advanced) continue;
    // No match; the rest of the pattern must still be well formed.
    while (!pattern.empty()) {
      const Chunk later = NextChunk(&pattern);
      if (MatchChunk(later.text, "", &rest) == ChunkMatch::kBadPattern) return std::nullopt;
    }
    return false;
  }
  return name.empty();
}

}  // namespace

Result<YamlConfig> ParseYamlConfig(std::string_view text, std::string_view file) {
  YamlConfig c;
  c.file = std::string(file);
  // LoadYamlConfig refuses such a file from its size; text from elsewhere is held to the same cap
  // (yaml-cpp takes seconds over tens of MB).
  if (text.size() > kMaxConfigFileBytes) {
    return InvalidArgument(c.file + ": the configuration is larger than the " +
                           SizeText(kMaxConfigFileBytes) + " limit (" +
                           std::to_string(text.size()) + " bytes)");
  }
  Node root;
  try {
    // Counted first, with a bound: yaml-cpp's LoadAll can loop forever (config/yaml_documents.h).
    const YamlDocuments docs = CountYamlDocuments(text, 2);
    if (docs.count > 1) {
      return InvalidArgument(c.file + ":" + std::to_string(std::max(docs.second_line, 1)) +
                             ": content after the first YAML document (a second document after "
                             "---, or a stray ',' at the top level); the file must hold one");
    }
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return InvalidArgument(c.file + ":" + std::to_string(e.mark.line + 1) +
                           ": not valid YAML: " + e.msg);
  } catch (const std::exception& e) {
    return InvalidArgument(c.file + ": not valid YAML: " + e.what());
  }
  if (root.IsNull()) {
    return InvalidArgument(c.file + ": the file is empty (expected at least `version: 2`)");
  }
  if (!root.IsMap()) {
    return InvalidArgument(c.file + ":" + std::to_string(std::max(LineOf(root), 1)) +
                           ": expected a mapping (version: 2, metrics: ..., ...) at the top");
  }
  try {
    Result<int> version = ReadVersion(root, c.file);
    if (!version.ok()) return version.status();
    c.version = *version;
    NVMLX_RETURN_IF_ERROR(Walk(root, &c));
  } catch (const std::exception& e) {
    // yaml-cpp throws only for misuse (a scalar read from a mapping, ...); the walk checks the
    // node kinds first, so this is a fault of ours, still reported rather than crashing.
    return InvalidArgument(c.file + ": cannot read the configuration: " + e.what());
  }
  return c;
}

Result<YamlConfig> LoadYamlConfig(const std::string& path) {
  Result<std::string> text = ReadTextFile(path, "configuration file");
  if (!text.ok()) return text.status();
  return ParseYamlConfig(*text, path);
}

std::string InlineFieldsCsv(const YamlConfig& config) {
  auto quoted = [](std::string_view s) {
    std::string out = "\"";
    for (char ch : s) {
      out += ch;
      if (ch == '"') out += '"';
    }
    return out + "\"";
  };
  std::string csv;
  int line = 1;
  for (const YamlMetricField& f : config.metrics_fields) {
    for (; line < f.line; ++line) csv += '\n';
    const std::string row =
        quoted(f.name) + "," + quoted(f.prometheus_type) + "," + quoted(f.help) + "\n";
    line += static_cast<int>(std::count(row.begin(), row.end(), '\n'));
    csv += row;
  }
  return csv;
}

Status CheckFieldPattern(std::string_view pattern) {
  if (GoPathMatch(pattern, "").has_value()) return Status::Ok();
  return InvalidArgument(Quote(pattern) +
                         " is not a valid pattern (Go path.Match: an unclosed or empty [class], "
                         "a '-' or ']' where a class member belongs, or a trailing '\\')");
}

bool MatchFieldPattern(std::string_view pattern, std::string_view name) {
  return GoPathMatch(pattern, name).value_or(false);
}

Status CheckWatchGroups(const std::vector<Options::WatchGroup>& groups,
                        const std::vector<CollectorEntry>& rows, std::string_view source) {
  if (groups.empty()) return Status::Ok();
  auto matches = [](const Options::WatchGroup& g, std::string_view name) {
    return std::any_of(g.patterns.begin(), g.patterns.end(),
                       [&](const std::string& p) { return MatchFieldPattern(p, name); });
  };
  std::vector<int> hits(groups.size(), 0);
  for (const CollectorEntry& row : rows) {
    const Options::WatchGroup* first = nullptr;
    for (size_t g = 0; g < groups.size(); ++g) {
      if (!matches(groups[g], row.name)) continue;
      ++hits[g];
      if (first == nullptr) {
        first = &groups[g];
        continue;
      }
      return InvalidArgument(groups[g].where + ": collection " + Quote(groups[g].name) +
                             " matches " + row.name + " (" + std::string(source) + ":" +
                             std::to_string(row.line) + "), which collection " +
                             Quote(first->name) + " (" + first->where +
                             ") matches too; a field belongs to one collection at most");
    }
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    if (hits[g] > 0) continue;
    std::string patterns;
    for (const std::string& p : groups[g].patterns) patterns += (patterns.empty() ? "" : ", ") + p;
    return InvalidArgument(groups[g].where + ": collection " + Quote(groups[g].name) +
                           " matches none of the fields of " + std::string(source) +
                           " (patterns: " + patterns + ")");
  }
  return Status::Ok();
}

}  // namespace nvmlx::config
