#include "util/go_duration.h"

#include <climits>
#include <cmath>
#include <string>

#include "util/escape.h"

namespace nvmlx {
namespace {

// Bounded: a flag or environment value may be megabytes long.
std::string Quoted(std::string_view s) { return util::QuoteForMessage(s); }

}  // namespace

Result<std::chrono::nanoseconds> ParseGoDuration(std::string_view text) {
  const std::string bad = "invalid duration " + Quoted(text);
  std::string_view s = text;
  bool neg = false;
  if (!s.empty() && (s.front() == '-' || s.front() == '+')) {
    neg = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return std::chrono::nanoseconds(0);
  if (s.empty()) return InvalidArgument(bad + ": expected a number and a unit, e.g. 10s");
  long double total = 0;
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  while (!s.empty()) {
    size_t i = 0;
    long double value = 0;
    bool any = false;
    while (i < s.size() && digit(s[i])) {
      value = value * 10 + (s[i] - '0');
      any = true;
      ++i;
    }
    if (i < s.size() && s[i] == '.') {
      ++i;
      long double scale = 0.1L;
      while (i < s.size() && digit(s[i])) {
        value += (s[i] - '0') * scale;
        scale /= 10;
        any = true;
        ++i;
      }
    }
    if (!any) return InvalidArgument(bad + ": expected a number, e.g. 10s");
    size_t j = i;
    while (j < s.size() && !digit(s[j]) && s[j] != '.') ++j;
    const std::string_view unit = s.substr(i, j - i);
    long double mult = 0;
    if (unit == "ns") {
      mult = 1;
    } else if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") {  // µs (U+00B5, U+03BC)
      mult = 1e3L;
    } else if (unit == "ms") {
      mult = 1e6L;
    } else if (unit == "s") {
      mult = 1e9L;
    } else if (unit == "m") {
      mult = 60e9L;
    } else if (unit == "h") {
      mult = 3600e9L;
    } else if (unit.empty()) {
      return InvalidArgument(bad + ": missing unit (ns, us, ms, s, m or h, e.g. 10s)");
    } else {
      return InvalidArgument(bad + ": unknown unit " + Quoted(unit) +
                             " (expected ns, us, ms, s, m or h)");
    }
    total += value * mult;
    if (total > static_cast<long double>(LLONG_MAX)) {
      return InvalidArgument(bad + ": out of range");
    }
    s.remove_prefix(j);
  }
  const long long ns = std::llround(total);
  return std::chrono::nanoseconds(neg ? -ns : ns);
}

}  // namespace nvmlx
