#include "render/emf.h"

#include <cmath>
#include <utility>

#include "render/number_text.h"
#include "util/json_string.h"

namespace nvmlx::render {
namespace {

constexpr auto kCounterTtl = std::chrono::minutes(5);  // the agent's delta cache TTL

std::string IntText(int64_t v) {
  std::string out;
  AppendInt(v, &out);
  return out;
}

std::string DoubleText(double v) {
  std::string out;
  AppendShortest(v, &out);
  return out;
}

// CloudWatch dimension constraints: name 1..250 and not starting with ':', value 1..1024 ASCII
// characters with at least one non-blank.
bool UsableDimension(const Labels& labels, std::string_view key) {
  if (key.empty() || key.size() > 250 || key.front() == ':') return false;
  const std::string* v = FindLabel(labels, key);
  return v != nullptr && UsableDimensionValue(*v);
}

}  // namespace

bool UsableDimensionValue(std::string_view v) {
  if (v.empty() || v.size() > 1024) return false;
  bool non_blank = false;
  for (unsigned char c : v) {
    if (c >= 0x80 || c < 0x20) return false;
    if (c != ' ') non_blank = true;
  }
  return non_blank;
}

std::string_view EmfUnitFor(std::string_view u) {
  if (u == "%") return "Percent";
  if (u == "B") return "Bytes";
  if (u == "B/s") return "Bytes/Second";
  if (u == "KB/s") return "Kilobytes/Second";
  if (u == "MB/s") return "Megabytes/Second";
  if (u == "MiB") return "Megabytes";
  if (u == "count") return "Count";
  if (u == "s") return "Seconds";
  if (u == "ms") return "Milliseconds";
  if (u == "us") return "Microseconds";
  return "None";  // ratio, MHz, C, W, mJ, ns (CloudWatch has no nanoseconds), bitmask, none
}

EmfRenderer::EmfRenderer(EmfRules rules, EmfOptions options)
    : rules_(std::move(rules)), options_(std::move(options)) {
  if (options_.max_metrics_per_document == 0 || options_.max_metrics_per_document > 100) {
    options_.max_metrics_per_document = 100;
  }
}

void EmfRenderer::AddValue(const std::string& series_key, const SeriesFamily& family,
                           const SeriesPoint& v, std::chrono::system_clock::time_point time,
                           std::vector<Metric>* metrics) {
  const config::CollectorEntry* entry = family.entry;
  const std::string_view name = entry != nullptr ? std::string_view(entry->name) : family.name;
  std::string_view unit = entry != nullptr ? EmfUnitFor(entry->field->unit) : family.emf_unit;
  if (const std::string* u = rules_.UnitFor(name)) unit = *u;
  const bool counter =
      entry != nullptr ? entry->type == config::MetricType::kCounter : family.type == "counter";
  const bool is_integer = v.is_integer();
  const int64_t int_value = is_integer ? v.int_value : 0;
  const double value = v.AsDouble();
  if (!options_.counters_as_delta || !counter) {
    if (!is_integer && !Sendable(value)) return;
    metrics->push_back({name, unit, is_integer ? IntText(int_value) : DoubleText(value)});
    return;
  }
  std::string key = series_key;
  key.push_back('\x1f');
  key.append(name);
  if (!is_integer && !std::isfinite(value)) {
    counters_.erase(key);  // as the agent: a non-finite sample clears the previous value
    return;
  }
  auto [it, inserted] = counters_.try_emplace(std::move(key));
  CounterState prev = it->second;
  it->second = {value, int_value, time};
  if (inserted || time - prev.seen > kCounterTtl) return;  // first sample: held back
  if (is_integer) {
    const int64_t delta = int_value < prev.int_value ? int_value : int_value - prev.int_value;
    metrics->push_back({name, unit, IntText(delta)});
  } else {
    const double delta = value < prev.value ? value : value - prev.value;
    if (Sendable(delta)) metrics->push_back({name, unit, DoubleText(delta)});
  }
}

void EmfRenderer::Render(const SeriesModel& model, std::chrono::system_clock::time_point time,
                         std::vector<std::string>* docs) {
  const int64_t ts =
      std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch()).count();
  // Each label set's EMF points in family order: a counting sort of the families' points.
  // DCGM families (with a collectors row) go out, and our own families marked for CloudWatch
  // (emf_unit: energy per pod); the others stay on /metrics.
  const size_t sets = model.label_set_count();
  set_begin_.assign(sets + 1, 0);
  for (const SeriesFamily& f : model.families) {
    if (f.entry == nullptr && f.emf_unit.empty()) continue;
    for (const SeriesPoint& p : f.points) {
      if (p.writers & kToEmf) ++set_begin_[p.label_set + 1];
    }
  }
  for (size_t i = 0; i < sets; ++i) set_begin_[i + 1] += set_begin_[i];
  set_points_.resize(set_begin_[sets]);
  {
    std::vector<uint32_t> fill(set_begin_.begin(), set_begin_.end() - 1);
    for (const SeriesFamily& f : model.families) {
      if (f.entry == nullptr && f.emf_unit.empty()) continue;
      for (const SeriesPoint& p : f.points) {
        if (p.writers & kToEmf) set_points_[fill[p.label_set]++] = {&f, &p};
      }
    }
  }

  std::vector<Metric> metrics;
  std::vector<std::string_view> names;
  for (size_t s = 0; s < sets; ++s) {
    if (set_begin_[s] == set_begin_[s + 1]) continue;
    const std::span<const LabelView> set = model.label_set(s);
    Labels labels;
    labels.reserve(set.size() + options_.extra_labels.size() + 1);
    for (const auto& [k, v] : set) {
      if (k != "_aws") labels.emplace_back(k, v);
    }
    for (const auto& extra : options_.extra_labels) {
      if (FindLabel(labels, extra.first) == nullptr) labels.push_back(extra);
    }
    // The agent path's relabel gives "Namespace"; ours is the workload's namespace.
    if (const std::string* ns = FindLabel(labels, "namespace");
        ns != nullptr && FindLabel(labels, "Namespace") == nullptr) {
      labels.emplace_back("Namespace", *ns);
    }

    std::string series_key;
    if (options_.counters_as_delta) {
      for (const auto& [k, v] : set) {
        series_key.append(k);
        series_key.push_back('=');
        series_key.append(v);
        series_key.push_back('\x1e');
      }
    }
    metrics.clear();
    for (uint32_t i = set_begin_[s]; i < set_begin_[s + 1]; ++i) {
      const auto& [family, point] = set_points_[i];
      const std::string_view name =
          family->entry != nullptr ? std::string_view(family->entry->name) : family->name;
      if (FindLabel(labels, name) != nullptr) continue;  // would shadow a label member
      AddValue(series_key, *family, *point, time, &metrics);
    }
    if (metrics.empty()) continue;
    names.clear();
    for (const Metric& m : metrics) names.push_back(m.name);
    std::vector<EmfDirective> directives =
        MatchRules(rules_, labels, names, &UsableDimension, &name_matches_);
    if (directives.empty()) continue;
    EmitLabelSet(labels, metrics, directives, ts, docs);
  }
  if (time - last_prune_ > std::chrono::minutes(1)) {
    last_prune_ = time;
    std::erase_if(counters_, [&](const auto& kv) { return time - kv.second.seen > kCounterTtl; });
  }
}

void EmfRenderer::EmitLabelSet(const Labels& labels, const std::vector<Metric>& metrics,
                               const std::vector<EmfDirective>& directives, int64_t timestamp_ms,
                               std::vector<std::string>* docs) {
  std::vector<char> selected(metrics.size(), 0);
  for (const EmfDirective& d : directives) {
    for (size_t m : d.metrics) selected[m] = 1;
  }
  std::vector<size_t> chunk;
  for (size_t m = 0; m < metrics.size(); ++m) {
    if (!selected[m]) continue;
    chunk.push_back(m);
    if (chunk.size() == options_.max_metrics_per_document) {
      Split(labels, metrics, directives, std::move(chunk), timestamp_ms, docs);
      chunk.clear();
    }
  }
  if (!chunk.empty()) Split(labels, metrics, directives, std::move(chunk), timestamp_ms, docs);
}

void EmfRenderer::Split(const Labels& labels, const std::vector<Metric>& metrics,
                        const std::vector<EmfDirective>& directives, std::vector<size_t> chosen,
                        int64_t timestamp_ms, std::vector<std::string>* docs) {
  std::string doc = WriteDocument(labels, metrics, directives, chosen, timestamp_ms);
  if (doc.empty()) return;
  if (doc.size() <= options_.max_document_bytes) {
    docs->push_back(std::move(doc));
    return;
  }
  if (chosen.size() == 1) {
    ++oversize_dropped_;  // the labels alone do not fit
    return;
  }
  const size_t half = chosen.size() / 2;
  std::vector<size_t> second(chosen.begin() + static_cast<std::ptrdiff_t>(half), chosen.end());
  chosen.resize(half);
  Split(labels, metrics, directives, std::move(chosen), timestamp_ms, docs);
  Split(labels, metrics, directives, std::move(second), timestamp_ms, docs);
}

std::string EmfRenderer::WriteDocument(const Labels& labels, const std::vector<Metric>& metrics,
                                       const std::vector<EmfDirective>& directives,
                                       const std::vector<size_t>& chosen,
                                       int64_t timestamp_ms) const {
  std::vector<char> in_doc(metrics.size(), 0);
  for (size_t m : chosen) in_doc[m] = 1;
  std::string out;
  out.reserve(1024 + 64 * chosen.size());
  out.append("{\"_aws\":{\"Timestamp\":");
  out.append(IntText(timestamp_ms));
  if (!options_.log_group_name.empty()) {
    out.append(",\"LogGroupName\":");
    util::AppendJsonQuoted(options_.log_group_name, &out);
  }
  if (!options_.log_stream_name.empty()) {
    out.append(",\"LogStreamName\":");
    util::AppendJsonQuoted(options_.log_stream_name, &out);
  }
  out.append(",\"CloudWatchMetrics\":[");
  bool any_directive = false;
  for (const EmfDirective& d : directives) {
    bool any_metric = false;
    for (size_t m : d.metrics) any_metric = any_metric || in_doc[m];
    if (!any_metric) continue;
    if (any_directive) out.push_back(',');
    any_directive = true;
    out.append("{\"Namespace\":");
    util::AppendJsonQuoted(rules_.metric_namespace, &out);
    out.append(",\"Dimensions\":[");
    for (size_t s = 0; s < d.dimensions.size(); ++s) {
      if (s > 0) out.push_back(',');
      out.push_back('[');
      for (size_t k = 0; k < d.dimensions[s].size(); ++k) {
        if (k > 0) out.push_back(',');
        util::AppendJsonQuoted(d.dimensions[s][k], &out);
      }
      out.push_back(']');
    }
    out.append("],\"Metrics\":[");
    bool first = true;
    for (size_t m : d.metrics) {
      if (!in_doc[m]) continue;
      if (!first) out.push_back(',');
      first = false;
      out.append("{\"Name\":");
      util::AppendJsonQuoted(metrics[m].name, &out);
      out.append(",\"Unit\":");
      util::AppendJsonQuoted(metrics[m].unit, &out);
      if (options_.high_resolution) out.append(",\"StorageResolution\":1");
      out.push_back('}');
    }
    out.append("]}");
  }
  if (!any_directive) return "";
  out.append("]}");
  for (const auto& [k, v] : labels) {
    out.push_back(',');
    util::AppendJsonQuoted(k, &out);
    out.push_back(':');
    util::AppendJsonQuoted(v, &out);
  }
  for (size_t m : chosen) {
    out.push_back(',');
    util::AppendJsonQuoted(metrics[m].name, &out);
    out.push_back(':');
    out.append(metrics[m].value);
  }
  out.push_back('}');
  return out;
}

}  // namespace nvmlx::render
