// Small string helpers shared by the parsers: trimming, an ASCII case-insensitive compare, and
// the one strict UTF-8 decoder (the JSON writer and the container-label sanitiser use it).
// One definition each, so that a parser's whitespace set is a choice it names, not a copy that
// drifts: TrimBlanks for formats whose padding is spaces and tabs (CSV cells, selectors, HTTP
// header values), TrimWhitespace for the std::isspace set (job files, tokens, engine replies).
//
// Locale-free: bytes are compared as ASCII whatever the process locale; bytes >= 0x80 (UTF-8)
// are never whitespace and never change case.
//
// Thread-safety: pure functions.
#ifndef NVML_EXPORTER_UTIL_STRINGS_H_
#define NVML_EXPORTER_UTIL_STRINGS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace nvmlx::util {

// `s` without the leading and trailing bytes found in `chars`; a view into `s`.
constexpr std::string_view TrimChars(std::string_view s, std::string_view chars) {
  const size_t b = s.find_first_not_of(chars);
  if (b == std::string_view::npos) return s.substr(s.size());
  return s.substr(b, s.find_last_not_of(chars) - b + 1);
}

// `s` without leading and trailing spaces and tabs (HTTP's OWS, CSV and selector padding).
constexpr std::string_view TrimBlanks(std::string_view s) { return TrimChars(s, " \t"); }

// `s` without leading and trailing std::isspace bytes in the C locale: space \t \n \v \f \r.
constexpr std::string_view TrimWhitespace(std::string_view s) {
  return TrimChars(s, " \t\n\v\f\r");
}

// ASCII case-insensitive equality: only A-Z and a-z fold; other bytes must match exactly.
constexpr bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  constexpr auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c; };
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                            [&](char x, char y) { return lower(x) == lower(y); });
}

// The UTF-8 sequence at s[i]: its length (1-4) with its code point in *code_point, or 0 when the
// bytes there are not a valid one: a stray continuation byte, a truncated sequence, an overlong
// form, a surrogate (U+D800-DFFF) or a code point beyond U+10FFFF, which strict decoders (and
// Prometheus' label values) refuse. `i` must be below s.size().
constexpr size_t DecodeUtf8(std::string_view s, size_t i, uint32_t* code_point) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) {
    *code_point = lead;
    return 1;
  }
  size_t n = 0;
  uint32_t cp = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    n = 2;
    cp = lead & 0x1Fu;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    n = 3;
    cp = lead & 0x0Fu;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    n = 4;
    cp = lead & 0x07u;
  } else {
    return 0;  // a continuation byte, or a lead that only starts overlong or too large forms
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(k) & 0x3Fu);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000)) return 0;  // overlong
  if (cp >= 0xD800 && cp <= 0xDFFF) return 0;                        // a surrogate
  if (cp > 0x10FFFF) return 0;
  *code_point = cp;
  return n;
}

}  // namespace nvmlx::util

#endif  // NVML_EXPORTER_UTIL_STRINGS_H_
