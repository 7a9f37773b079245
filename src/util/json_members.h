// Non-throwing access to JSON that comes from outside the process (the API server's Nodes, pods,
// ConfigMaps and ResourceSlices, a container engine's answers, our own state files) and writing
// of JSON that carries outside strings. nlohmann::json throws on most wrong-type reads (value()
// and get<T>() on a string that is a number, at() on a missing key, dump() of invalid UTF-8);
// no exception may cross a module boundary here, so one odd member of a peer's answer must read
// as absent instead of aborting the daemon. Every read of such JSON in src/ goes through this
// header: scripts/check_json_access.py refuses the throwing accessors everywhere else.
//
// The shape of a read: Member() finds a member (null when the object is not an object or has no
// such key; a null argument gives null, so lookups chain), then one typed accessor turns it into
// a value, absent (std::nullopt, null) when it has another type.
//
// Header-only, so that any layer may use it without linking more than nlohmann_json (which its
// users link themselves).
//
// Thread-safety: pure functions over the caller's values.
#ifndef NVML_EXPORTER_UTIL_JSON_MEMBERS_H_
#define NVML_EXPORTER_UTIL_JSON_MEMBERS_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "util/status.h"

namespace nvmlx::util::json {

using Json = nlohmann::json;

// obj[key], or null when obj is null, not an object, or has no such key.
inline const Json* Member(const Json* obj, std::string_view key) {
  if (obj == nullptr || !obj->is_object()) return nullptr;
  auto it = obj->find(key);
  return it == obj->end() ? nullptr : &*it;
}
inline const Json* Member(const Json& obj, std::string_view key) { return Member(&obj, key); }

// v itself when it is an array (an object), else null.
inline const Json* Array(const Json* v) { return v != nullptr && v->is_array() ? v : nullptr; }
inline const Json* Object(const Json* v) { return v != nullptr && v->is_object() ? v : nullptr; }

// The string v holds, without a copy; null when v is null or not a string.
inline const std::string* StringPtr(const Json* v) {
  return v != nullptr ? v->get_ptr<const std::string*>() : nullptr;
}
inline std::optional<std::string> String(const Json* v) {
  const std::string* s = StringPtr(v);
  return s != nullptr ? std::optional<std::string>(*s) : std::nullopt;
}
// obj[key] as a string; empty when absent or not a string (for members where empty means unset).
inline std::string StringMember(const Json* obj, std::string_view key) {
  const std::string* s = StringPtr(Member(obj, key));
  return s != nullptr ? *s : std::string();
}
inline std::string StringMember(const Json& obj, std::string_view key) {
  return StringMember(&obj, key);
}

// An integer that fits int64_t; absent for any other value (a float, a string, 2^63 or more).
inline std::optional<int64_t> Int(const Json* v) {
  if (v == nullptr) return std::nullopt;
  if (const auto* i = v->get_ptr<const Json::number_integer_t*>()) return int64_t{*i};
  if (const auto* u = v->get_ptr<const Json::number_unsigned_t*>()) {
    if (*u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return static_cast<int64_t>(*u);
    }
  }
  return std::nullopt;
}

// A non-negative integer; absent for any other value (a negative one, a float, a string).
inline std::optional<uint64_t> Uint(const Json* v) {
  if (v == nullptr) return std::nullopt;
  if (const auto* u = v->get_ptr<const Json::number_unsigned_t*>()) return uint64_t{*u};
  if (const auto* i = v->get_ptr<const Json::number_integer_t*>(); i != nullptr && *i >= 0) {
    return static_cast<uint64_t>(*i);
  }
  return std::nullopt;
}

// Any number as a double, finite only (the parser admits no NaN or infinity, but a value built
// in memory may hold one); absent for anything else.
inline std::optional<double> Number(const Json* v) {
  if (v == nullptr) return std::nullopt;
  double d = 0;
  if (const auto* f = v->get_ptr<const Json::number_float_t*>()) {
    d = *f;
  } else if (const auto* i = v->get_ptr<const Json::number_integer_t*>()) {
    d = static_cast<double>(*i);
  } else if (const auto* u = v->get_ptr<const Json::number_unsigned_t*>()) {
    d = static_cast<double>(*u);
  } else {
    return std::nullopt;
  }
  return std::isfinite(d) ? std::optional<double>(d) : std::nullopt;
}

// True only for the boolean true (a string "true" is not a boolean).
inline bool Bool(const Json* v) {
  const auto* b = v != nullptr ? v->get_ptr<const Json::boolean_t*>() : nullptr;
  return b != nullptr && *b;
}

namespace internal {

// Records the first parse error (its message, without throwing) and stops the parse; every
// other event is accepted and dropped. Used only to explain a text that failed to parse.
class ErrorSax : public nlohmann::json_sax<Json> {
 public:
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    message = e.what();
    return false;
  }
  std::string message;
};

// nlohmann's messages quote the last token read, which may be most of a huge string: at most
// this many bytes of one go into an error.
inline constexpr size_t kMaxParseMessage = 160;

}  // namespace internal

// The JSON value of `text`, without exceptions. INVALID_ARGUMENT "invalid JSON: <the parser's
// reason, at most ~160 bytes>" when it is not one JSON text.
inline Result<Json> Parse(std::string_view text) {
  Json doc = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_discarded()) return doc;
  internal::ErrorSax sax;
  Json::sax_parse(text, &sax);  // again, only for the reason (no exception: the handler stops)
  std::string why = sax.message.empty() ? std::string("not JSON") : std::move(sax.message);
  if (why.size() > internal::kMaxParseMessage) {
    size_t cut = internal::kMaxParseMessage;
    while (cut > 0 && (static_cast<unsigned char>(why[cut]) & 0xC0) == 0x80) --cut;  // whole chars
    why.resize(cut);
    why += "...";
  }
  return InvalidArgument("invalid JSON: " + why);
}

// j as compact JSON (indent -1) or indented by `indent` spaces. Bytes of a string that are not
// valid UTF-8 (a pod or container name, a label, a GPU name: anything from outside) become
// U+FFFD instead of making dump() throw.
inline std::string Dump(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

}  // namespace nvmlx::util::json

#endif  // NVML_EXPORTER_UTIL_JSON_MEMBERS_H_
