#include "config/option_flags.h"

#include <cassert>
#include <charconv>

#include "util/escape.h"
#include "util/go_duration.h"

namespace nvmlx::config::flags {

const Raw& RawFlags::Get(std::string_view name) const {
  for (size_t i = 0; i < specs_.size(); ++i) {
    if (specs_[i]->name == name) return values_[i];
  }
  assert(false && "not a flag of any group");
  static const Raw kUnset;
  return kUnset;
}

const Raw* RawFlags::Find(std::string_view name) const {
  for (size_t i = 0; i < specs_.size(); ++i) {
    if (specs_[i]->name == name) return &values_[i];
  }
  return nullptr;
}

std::optional<long long> ParseDecimal(std::string_view s) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  bool neg = false;
  if (!s.empty() && s.front() == '-') {
    neg = true;
    s.remove_prefix(1);
  }
  if (s.empty() || s.front() == '+' || s.front() == '-') return std::nullopt;
  long long v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return neg ? -v : v;
}

std::string Quote(std::string_view s) { return util::QuoteForMessage(s); }

Status ToBool(const Raw& raw, bool* out) {
  if (!raw.set) return Status::Ok();
  std::optional<bool> b = ParseGoBool(raw.last());
  if (!b) {
    return InvalidArgument(raw.origin + ": " + Quote(raw.last()) +
                           " is not a boolean (expected one of " + std::string(kBoolValues) + ")");
  }
  *out = *b;
  return Status::Ok();
}

Status ToIntInRange(const Raw& raw, long long min, long long max, std::string_view what, int* out) {
  if (!raw.set) return Status::Ok();
  std::optional<long long> v = ParseDecimal(raw.last());
  if (!v || *v < min || *v > max) {
    return InvalidArgument(raw.origin + ": " + Quote(raw.last()) + " is not " + std::string(what));
  }
  *out = static_cast<int>(*v);
  return Status::Ok();
}

Status ToNonEmpty(const Raw& raw, std::string* out) {
  if (!raw.set) return Status::Ok();
  if (raw.last().empty()) return InvalidArgument(raw.origin + ": must not be empty");
  *out = raw.last();
  return Status::Ok();
}

void ToText(const Raw& raw, std::string* out) {
  if (raw.set) *out = raw.last();
}

void ToList(const Raw& raw, std::vector<std::string>* out) {
  if (!raw.set) return;
  out->clear();
  for (const std::string& value : raw.values) {
    size_t start = 0;
    while (start <= value.size()) {
      size_t comma = value.find(',', start);
      if (comma == std::string::npos) comma = value.size();
      std::string item = value.substr(start, comma - start);
      const size_t b = item.find_first_not_of(" \t");
      if (b != std::string::npos) {
        out->push_back(item.substr(b, item.find_last_not_of(" \t") - b + 1));
      }
      start = comma + 1;
    }
  }
}

Status ToTimeout(const Raw& raw, std::chrono::milliseconds* out) {
  if (!raw.set) return Status::Ok();
  Result<std::chrono::nanoseconds> d = ParseGoDuration(raw.last());
  if (!d.ok()) return InvalidArgument(raw.origin + ": " + d.status().message());
  // Go reads 0 as "no timeout"; our server has no such mode, and a sub-millisecond timeout would
  // fail every request, so both are refused rather than misread.
  if (*d < std::chrono::milliseconds(1)) {
    return InvalidArgument(raw.origin + ": " + Quote(raw.last()) + " is below the minimum of 1ms");
  }
  *out = std::chrono::duration_cast<std::chrono::milliseconds>(*d);
  return Status::Ok();
}

}  // namespace nvmlx::config::flags
