#include "attribute/configmap.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "util/json_members.h"

namespace nvmlx::attribute {
namespace {

// Kubernetes object names: lower-case alphanumerics, '-' and '.' (a namespace has no '.'); what
// goes into the URL path needs no escaping then.
bool IsObjectName(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.')) return false;
  }
  return true;
}

}  // namespace

Result<std::string> ConfigMapValue(std::string_view json, std::string_view key,
                                   const std::string& what) {
  namespace js = util::json;
  Result<js::Json> doc = js::Parse(json);
  if (!doc.ok() || !doc->is_object()) {
    return InvalidArgument(what + ": the API server's answer is not a JSON object");
  }
  const js::Json* data = js::Object(js::Member(*doc, "data"));
  if (data == nullptr) {
    return InvalidArgument(what + ": no data (expected the key \"" + std::string(key) + "\")");
  }
  const js::Json* value = js::Member(*data, key);
  if (value == nullptr) {
    return InvalidArgument(what + ": no \"" + std::string(key) + "\" key in its data");
  }
  std::optional<std::string> text = js::String(value);
  if (!text.has_value()) {
    return InvalidArgument(what + ": \"" + std::string(key) + "\" is not a string");
  }
  return std::move(*text);
}

Result<std::string> ReadConfigMapKey(KubeApiClient& client, const std::string& ns,
                                     const std::string& name, std::string_view key,
                                     std::chrono::milliseconds timeout) {
  const std::string what = "configmap " + ns + "/" + name;
  if (!IsObjectName(ns) || !IsObjectName(name)) {
    return InvalidArgument(what +
                           ": not a valid namespace and name (lower-case letters, digits, "
                           "'-' and '.')");
  }
  Result<HttpResponse> r = client.Get("/api/v1/namespaces/" + ns + "/configmaps/" + name, timeout);
  if (!r.ok()) return Unavailable(what + ": " + r.status().message());
  if (r->status != 200) {
    return Unavailable(what + ": the API server answered " + std::to_string(r->status) + ": " +
                       BodyExcerpt(r->body));
  }
  return ConfigMapValue(r->body, key, what);
}

}  // namespace nvmlx::attribute
