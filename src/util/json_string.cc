#include "util/json_string.h"

#include <cstdint>

#include "util/strings.h"

namespace nvmlx::util {

void AppendJsonEscaped(std::string_view s, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < s.size();) {
    // Runs of plain ASCII (almost every label and name) are appended at once.
    size_t run = i;
    while (run < s.size()) {
      const unsigned char r = static_cast<unsigned char>(s[run]);
      if (r < 0x20 || r >= 0x80 || r == '"' || r == '\\') break;
      ++run;
    }
    if (run > i) {
      out->append(s.data() + i, run - i);
      i = run;
      continue;
    }
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"':
          out->append("\\\"");
          break;
        case '\\':
          out->append("\\\\");
          break;
        case '\n':
          out->append("\\n");
          break;
        case '\r':
          out->append("\\r");
          break;
        case '\t':
          out->append("\\t");
          break;
        default:
          if (c < 0x20) {
            out->append("\\u00");
            out->push_back(kHex[c >> 4]);
            out->push_back(kHex[c & 0xF]);
          } else {
            out->push_back(static_cast<char>(c));
          }
      }
      ++i;
      continue;
    }
    uint32_t code_point = 0;
    const size_t n = DecodeUtf8(s, i, &code_point);
    if (n == 0) {
      out->append("\\ufffd");
      ++i;
    } else {
      out->append(s.substr(i, n));
      i += n;
    }
  }
}

void AppendJsonQuoted(std::string_view s, std::string* out) {
  out->push_back('"');
  AppendJsonEscaped(s, out);
  out->push_back('"');
}

}  // namespace nvmlx::util
