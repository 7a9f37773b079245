#include "render/prometheus.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <span>
#include <string_view>
#include <system_error>
#include <vector>

namespace nvmlx::render {
namespace {

void AppendInt(int64_t v, std::string* out) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, end);
}

void AppendUnsigned(uint64_t v, std::string* out) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, end);
}

// Go's %f is strconv.AppendFloat(f, 'f', 6, 64): the exact binary value correctly rounded to 6
// decimals, which is what std::to_chars(fixed, 6) produces too. Go would print NaN/+Inf/-Inf
// the same way we do, and these are the spellings the Prometheus parser accepts.
void AppendFixed(double v, int decimals, std::string* out) {
  if (std::isnan(v)) {
    out->append("NaN");
    return;
  }
  if (std::isinf(v)) {
    out->append(v > 0 ? "+Inf" : "-Inf");
    return;
  }
  // DBL_MAX has 309 integer digits; 6 decimals, sign and point fit comfortably.
  char buf[400];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::fixed, decimals);
  if (ec != std::errc()) {  // cannot happen with this buffer; keep the output parseable anyway
    out->append("NaN");
    return;
  }
  out->append(buf, end);
}

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
      AppendFixed(p.double_value, 6, out);
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

// Text format 0.0.4: label values escape \\, " and newline; HELP text only \\ and newline.
void AppendEscaped(std::string_view text, bool escape_quote, std::string* out) {
  for (char c : text) {
    if (c == '\\') {
      out->append("\\\\");
    } else if (c == '\n') {
      out->append("\\n");
    } else if (c == '"' && escape_quote) {
      out->append("\\\"");
    } else {
      out->push_back(c);
    }
  }
}

}  // namespace

void AppendGoFixed(double value, std::string* out) { AppendFixed(value, 6, out); }

void AppendEscapedLabelValue(std::string_view value, std::string* out) {
  AppendEscaped(value, /*escape_quote=*/true, out);
}

void AppendEscapedHelp(std::string_view help, std::string* out) {
  AppendEscaped(help, /*escape_quote=*/false, out);
}

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

void RenderPrometheus(const collect::Snapshot& snapshot, const PrometheusOptions& options,
                      std::string* out) {
  SeriesModel model;
  BuildSeries(snapshot, options, &model);
  RenderPrometheus(model, out);
}

void AppendHelpType(std::string_view name, std::string_view help, std::string_view type,
                    std::string* out) {
  // dcgm-exporter's template prints "# HELP name " even for an empty help: keep the space.
  out->append("# HELP ");
  out->append(name);
  out->push_back(' ');
  AppendEscapedHelp(help, out);
  out->append("\n# TYPE ");
  out->append(name);
  out->push_back(' ');
  out->append(type);
  out->push_back('\n');
}

}  // namespace nvmlx::render
