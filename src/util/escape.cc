#include "util/escape.h"

namespace nvmlx::util {

std::string EscapeControlBytes(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 0xf];
    } else {
      out += c;
    }
  }
  return out;
}

std::string MessagePrefix(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return EscapeControlBytes(s);
  size_t cut = max_bytes;
  // Back to the start of the sequence the cut falls in (continuation bytes are 10xxxxxx).
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return EscapeControlBytes(s.substr(0, cut)) + "... (" + std::to_string(s.size()) + " bytes)";
}

std::string QuoteForMessage(std::string_view s) {
  if (s.size() <= kMaxQuotedBytes) return "\"" + EscapeControlBytes(s) + "\"";
  // The closing quote before the length, so that the length is not read as part of the value.
  std::string prefix = MessagePrefix(s);
  const size_t dots = prefix.rfind("... (");
  return "\"" + prefix.substr(0, dots) + "\"" + prefix.substr(dots);
}

}  // namespace nvmlx::util
