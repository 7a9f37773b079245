#include "attribute/configmap.h"

#include <nlohmann/json.hpp>

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
  nlohmann::json doc = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return InvalidArgument(what + ": the API server's answer is not a JSON object");
  }
  auto data = doc.find("data");
  if (data == doc.end() || !data->is_object()) {
    return InvalidArgument(what + ": no data (expected the key \"" + std::string(key) + "\")");
  }
  auto value = data->find(std::string(key));
  if (value == data->end()) {
    return InvalidArgument(what + ": no \"" + std::string(key) + "\" key in its data");
  }
  if (!value->is_string()) {
    return InvalidArgument(what + ": \"" + std::string(key) + "\" is not a string");
  }
  return value->get<std::string>();
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
                       r->body.substr(0, 200));
  }
  return ConfigMapValue(r->body, key, what);
}

}  // namespace nvmlx::attribute
