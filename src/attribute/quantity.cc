#include "attribute/quantity.h"

#include <limits>
#include <string>

namespace nvmlx::attribute {
namespace {

using Wide = __int128;
constexpr int kMaxDigits = 30;    // 10^30 < 2^100: a mantissa always fits a Wide
constexpr int kMaxExponent = 30;  // of an "e" suffix (the header says why)

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The suffix as a power of 10 and a power of 2; false when it is none of the grammar's.
bool Suffix(std::string_view s, int* pow10, int* pow2) {
  *pow10 = 0;
  *pow2 = 0;
  if (s.empty()) return true;
  if (s.size() == 2 && s[1] == 'i') {
    const std::string_view binary = "KMGTPE";
    const size_t i = binary.find(s[0]);
    if (i == std::string_view::npos) return false;
    *pow2 = 10 * static_cast<int>(i + 1);
    return true;
  }
  if (s.size() == 1) {
    switch (s[0]) {
      case 'm':
        *pow10 = -3;
        return true;
      case 'k':
        *pow10 = 3;
        return true;
      case 'M':
        *pow10 = 6;
        return true;
      case 'G':
        *pow10 = 9;
        return true;
      case 'T':
        *pow10 = 12;
        return true;
      case 'P':
        *pow10 = 15;
        return true;
      case 'E':
        *pow10 = 18;
        return true;
      default:
        return false;
    }
  }
  if (s[0] != 'e' && s[0] != 'E') return false;
  s.remove_prefix(1);
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty() || s.size() > 3) return false;
  int e = 0;
  for (char c : s) {
    if (!IsDigit(c)) return false;
    e = e * 10 + (c - '0');
  }
  if (e > kMaxExponent) return false;
  *pow10 = negative ? -e : e;
  return true;
}

int64_t Saturate(Wide v) {
  if (v > std::numeric_limits<int64_t>::max()) return std::numeric_limits<int64_t>::max();
  if (v < std::numeric_limits<int64_t>::min()) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

}  // namespace

std::optional<int64_t> ParseQuantityCeil(std::string_view text) {
  std::string_view s = text;
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  // The number: digits, at most one '.', at least one digit.
  Wide mantissa = 0;
  int digits = 0;
  int fraction_digits = 0;
  bool any_digit = false;
  bool point = false;
  size_t i = 0;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '.' && !point) {
      point = true;
      continue;
    }
    if (!IsDigit(c)) break;
    any_digit = true;
    if (point) ++fraction_digits;
    if (mantissa == 0 && c == '0') continue;  // leading zeros are not significant
    if (++digits > kMaxDigits) return std::nullopt;
    mantissa = mantissa * 10 + (c - '0');
  }
  if (!any_digit) return std::nullopt;
  int pow10 = 0;
  int pow2 = 0;
  if (!Suffix(s.substr(i), &pow10, &pow2)) return std::nullopt;
  if (mantissa == 0) return 0;
  int exp10 = pow10 - fraction_digits;
  // Scale up: past 2^63 the result saturates, so stop multiplying once it is that large.
  const Wide cap = static_cast<Wide>(std::numeric_limits<int64_t>::max()) + 1;
  for (int k = 0; k < pow2 && mantissa < cap; ++k) mantissa *= 2;
  for (; exp10 > 0 && mantissa < cap; --exp10) mantissa *= 10;
  if (exp10 > 0) exp10 = 0;  // saturated already
  // Scale down, rounding towards +infinity: up for a positive value, truncating for a
  // negative one (ceil(-0.5) is 0).
  Wide value = mantissa;
  bool remainder = false;
  for (; exp10 < 0 && value != 0; ++exp10) {
    remainder = remainder || value % 10 != 0;
    value /= 10;
  }
  if (exp10 < 0) remainder = true;  // every digit was below the unit
  if (negative) return Saturate(-value);
  return Saturate(remainder ? value + 1 : value);
}

}  // namespace nvmlx::attribute
