// Small string helpers shared by the parsers: trimming and an ASCII case-insensitive compare.
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

}  // namespace nvmlx::util

#endif  // NVML_EXPORTER_UTIL_STRINGS_H_
