#include "render/prometheus.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <span>
#include <string_view>
#include <system_error>
#include <vector>

#include "render/number_text.h"

namespace nvmlx::render {
namespace {

// "<value>" as the point's kind prints.
void AppendValue(const SeriesPoint& p, std::string* out) {
  switch (p.kind) {
    case SeriesPoint::Kind::kInt:
      AppendInt(p.int_value, out);
      return;
    case SeriesPoint::Kind::kUint:
      AppendUnsigned(p.uint_value, out);
      return;
    case SeriesPoint::Kind::kDouble:
      AppendGoFixed(p.double_value, out);
      return;
    case SeriesPoint::Kind::kMillis:
      break;
  }
  // Integer milliseconds printed as seconds with 3 decimals: exact, no float rounding.
  int64_t ms = p.int_value;
  if (ms < 0) {
    out->push_back('-');
    ms = -ms;
  }
  AppendInt(ms / 1000, out);
  out->push_back('.');
  const int64_t frac = ms % 1000;
  if (frac < 100) out->push_back('0');
  if (frac < 10) out->push_back('0');
  AppendInt(frac, out);
}

// A label set as every line of it starts: "{name="value",...} ", or " " without labels.
void AppendLabelSet(std::span<const LabelView> labels, std::string* out) {
  if (labels.empty()) {
    out->push_back(' ');
    return;
  }
  out->push_back('{');
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i > 0) out->push_back(',');
    out->append(labels[i].first);
    out->append("=\"");
    AppendEscapedLabelValue(labels[i].second, out);
    out->push_back('"');
  }
  out->append("} ");
}

}  // namespace

void RenderPrometheus(const SeriesModel& model, std::string* out) {
  out->clear();
  // Each label set's text once: a device's label set is shared by all of its families and is
  // most of each line.
  const size_t sets = model.label_set_count();
  std::string text;
  std::vector<uint32_t> at;  // set i is text[at[i], at[i + 1])
  text.reserve(model.label_count() * 40 + sets * 4);
  at.reserve(sets + 1);
  for (size_t i = 0; i < sets; ++i) {
    at.push_back(static_cast<uint32_t>(text.size()));
    AppendLabelSet(model.label_set(i), &text);
  }
  at.push_back(static_cast<uint32_t>(text.size()));

  // Size: each line is name + label set + ~24 value bytes; HELP/TYPE ~ 2 names + help.
  size_t estimate = 64;
  for (const SeriesFamily& f : model.families) {
    estimate += 2 * f.name.size() + f.help.size() + 32;
    for (const SeriesPoint& p : f.points) {
      estimate += f.name.size() + at[p.label_set + 1] - at[p.label_set] + 24;
    }
  }
  out->reserve(estimate);

  for (const SeriesFamily& f : model.families) {
    AppendHelpType(f.name, f.help, f.type, out);
    for (const SeriesPoint& p : f.points) {
      if ((p.writers & kToPrometheus) == 0) continue;
      out->append(f.name);
      out->append(text, at[p.label_set], at[p.label_set + 1] - at[p.label_set]);
      AppendValue(p, out);
      out->push_back('\n');
    }
  }
}

void RenderPrometheus(const model::Snapshot& snapshot, const PrometheusOptions& options,
                      std::string* out) {
  SeriesModel model;
  BuildSeries(snapshot, options, &model);
  RenderPrometheus(model, out);
}

}  // namespace nvmlx::render
