#include "config/device_selector.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <string>

#include "util/escape.h"
#include "util/strings.h"

namespace nvmlx::config {
namespace {

// Far above any real GPU or MIG-instance count; bounds the memory a range like g:0-4000000000
// would otherwise take.
constexpr unsigned kMaxId = 65535;

// Decimal digits only (no sign, no spaces inside): what strconv.Atoi accepts for an id, minus the
// negative numbers that cannot name a device.
std::optional<unsigned long> ParseNumber(std::string_view s) {
  if (s.empty() || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  unsigned long v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return kMaxId + 1ul;  // overflow: too big
  return v;
}

}  // namespace

bool DeviceSelector::SelectsGpu(unsigned index) const {
  switch (kind) {
    case Kind::kFlex:
      return true;
    case Kind::kGpus:
    case Kind::kGpusAndInstances:
      return all || std::binary_search(ids.begin(), ids.end(), index);
    case Kind::kInstances:
      return false;
  }
  return false;
}

bool DeviceSelector::SelectsInstance(unsigned ordinal) const {
  switch (kind) {
    case Kind::kFlex:
      return true;
    case Kind::kInstances:
      return all || std::binary_search(ids.begin(), ids.end(), ordinal);
    case Kind::kGpusAndInstances:
      return instances_all || std::binary_search(instance_ids.begin(), instance_ids.end(), ordinal);
    case Kind::kGpus:
      return false;
  }
  return false;
}

namespace {

Result<DeviceSelector> ParseOne(std::string_view s, const std::string& head);

// "g[:ids]+i[:ids]" in either order (dcgm-exporter 4.8.3+'s parseDeviceOptions): each kind at
// most once, f never combined, no empty part.
Result<DeviceSelector> ParseCombined(std::string_view s, const std::string& head) {
  DeviceSelector out;
  out.kind = DeviceSelector::Kind::kGpusAndInstances;
  bool have_g = false;
  bool have_i = false;
  size_t start = 0;
  while (start <= s.size()) {
    size_t plus = s.find('+', start);
    if (plus == std::string_view::npos) plus = s.size();
    const std::string_view part = util::TrimBlanks(s.substr(start, plus - start));
    start = plus + 1;
    if (part.empty()) return InvalidArgument(head + "empty selector next to '+'");
    Result<DeviceSelector> one = ParseOne(part, head);
    if (!one.ok()) return one.status();
    if (one->kind == DeviceSelector::Kind::kFlex) {
      return InvalidArgument(head + "f (flex) cannot be combined with g or i");
    }
    const bool is_g = one->kind == DeviceSelector::Kind::kGpus;
    if ((is_g && have_g) || (!is_g && have_i)) {
      return InvalidArgument(head + (is_g ? "g" : "i") + " is given twice");
    }
    if (is_g) {
      have_g = true;
      out.all = one->all;
      out.ids = std::move(one->ids);
    } else {
      have_i = true;
      out.instances_all = one->all;
      out.instance_ids = std::move(one->ids);
    }
  }
  return out;
}

}  // namespace

Result<DeviceSelector> ParseDeviceSelector(std::string_view text) {
  const std::string head = "invalid device selector " + util::QuoteForMessage(text) + ": ";
  const std::string_view s = util::TrimBlanks(text);
  if (s.find('+') != std::string_view::npos) return ParseCombined(s, head);
  return ParseOne(s, head);
}

namespace {

// One kind: f, g[:ids] or i[:ids].
Result<DeviceSelector> ParseOne(std::string_view s, const std::string& head) {
  auto fail = [&head](const std::string& what) -> Result<DeviceSelector> {
    return InvalidArgument(head + what);
  };
  if (s.empty()) return fail("expected f, g, i, g:<ids> or i:<ids> (e.g. g:0,2-3)");
  const size_t colon = s.find(':');
  if (colon != std::string_view::npos && s.find(':', colon + 1) != std::string_view::npos) {
    return fail("at most one ':' is allowed");
  }
  const std::string_view letter = util::TrimBlanks(s.substr(0, colon));
  DeviceSelector sel;
  if (letter == "f") {
    if (colon != std::string_view::npos) {
      return fail("no id list is allowed with f (flex); use g:<ids> to pick GPUs");
    }
    sel.kind = DeviceSelector::Kind::kFlex;
    return sel;
  }
  if (letter == "g") {
    sel.kind = DeviceSelector::Kind::kGpus;
  } else if (letter == "i") {
    sel.kind = DeviceSelector::Kind::kInstances;
  } else {
    return fail(colon == std::string_view::npos
                    ? "expected f, g, i, g:<ids> or i:<ids> (e.g. g:0,2-3)"
                    : "expected g or i before ':'");
  }
  if (colon == std::string_view::npos) return sel;  // all entities of that kind

  const std::string_view list = util::TrimBlanks(s.substr(colon + 1));
  if (list.empty()) return fail("expected a list of ids after ':' (e.g. 0,2-3)");
  sel.all = false;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string_view::npos) comma = list.size();
    const std::string_view item = util::TrimBlanks(list.substr(start, comma - start));
    start = comma + 1;
    if (item.empty()) return fail("empty entry in the id list");
    const size_t dash = item.find('-');
    if (dash == std::string_view::npos) {
      std::optional<unsigned long> id = ParseNumber(item);
      if (!id) return fail("expected a number, got " + util::QuoteForMessage(item));
      if (*id > kMaxId) {
        return fail("id " + std::string(item) + " is too large (at most " + std::to_string(kMaxId) +
                    ")");
      }
      sel.ids.push_back(static_cast<unsigned>(*id));
      continue;
    }
    if (item.find('-', dash + 1) != std::string_view::npos) {
      return fail("a range is <number>-<number>, got " + util::QuoteForMessage(item));
    }
    const std::string_view lo_text = util::TrimBlanks(item.substr(0, dash));
    const std::string_view hi_text = util::TrimBlanks(item.substr(dash + 1));
    std::optional<unsigned long> lo = ParseNumber(lo_text);
    if (!lo) return fail("expected a number before '-'");
    std::optional<unsigned long> hi = ParseNumber(hi_text);
    if (!hi) return fail("expected a number after '-'");
    if (*lo > kMaxId || *hi > kMaxId) {
      return fail("range " + std::string(item) + " is too large (ids are at most " +
                  std::to_string(kMaxId) + ")");
    }
    // dcgm-exporter 4.8.4 refuses a backwards range too (before, it selected nothing).
    if (*lo > *hi) {
      return fail("range " + std::string(item) + " is backwards (write " + std::string(hi_text) +
                  "-" + std::string(lo_text) + ")");
    }
    for (unsigned long i = *lo; i <= *hi; ++i) sel.ids.push_back(static_cast<unsigned>(i));
  }
  std::sort(sel.ids.begin(), sel.ids.end());
  sel.ids.erase(std::unique(sel.ids.begin(), sel.ids.end()), sel.ids.end());
  return sel;
}

}  // namespace

}  // namespace nvmlx::config
