#include "render/text_format.h"

#include <charconv>
#include <cmath>
#include <system_error>

namespace nvmlx::render {
namespace {

// Text format 0.0.4: label values escape \\, " and newline; HELP text only \\ and newline.
// Appends the runs between escapes in bulk: most help texts and label values have none, and a
// byte-by-byte push_back was a fifth of the text writer's time on a 1-GPU page.
void AppendEscaped(std::string_view text, bool escape_quote, std::string* out) {
  size_t run = 0;  // start of the bytes not yet appended
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const char* escaped = c == '\\'                    ? "\\\\"
                          : c == '\n'                  ? "\\n"
                          : (c == '"' && escape_quote) ? "\\\""
                                                       : nullptr;
    if (escaped == nullptr) continue;
    out->append(text.data() + run, i - run);
    out->append(escaped, 2);
    run = i + 1;
  }
  out->append(text.data() + run, text.size() - run);
}

}  // namespace

// Go's %f is strconv.AppendFloat(f, 'f', 6, 64): the exact binary value correctly rounded to 6
// decimals, which is what std::to_chars(fixed, 6) produces too. Go would print NaN/+Inf/-Inf
// the same way we do, and these are the spellings the Prometheus parser accepts.
void AppendGoFixed(double v, std::string* out) {
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
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::fixed, 6);
  if (ec != std::errc()) {  // cannot happen with this buffer; keep the output parseable anyway
    out->append("NaN");
    return;
  }
  out->append(buf, end);
}

void AppendEscapedLabelValue(std::string_view value, std::string* out) {
  AppendEscaped(value, /*escape_quote=*/true, out);
}

void AppendEscapedHelp(std::string_view help, std::string* out) {
  AppendEscaped(help, /*escape_quote=*/false, out);
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
