// Lenient member access for the API server's JSON objects (pods, ResourceSlices): a missing key
// or a value of the wrong type reads as absent, so that one odd object is skipped rather than
// failing a whole list. Internal to attribute/.
//
// Thread-safety: pure functions.
#ifndef NVML_EXPORTER_ATTRIBUTE_JSON_MEMBERS_H_
#define NVML_EXPORTER_ATTRIBUTE_JSON_MEMBERS_H_

#include <nlohmann/json.hpp>
#include <string>

namespace nvmlx::attribute::json_members {

// obj[key], or null when obj is not an object or has no such key.
inline const nlohmann::json* Member(const nlohmann::json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

// obj[key] as a string; empty when absent or not a string.
inline std::string StringMember(const nlohmann::json& obj, const char* key) {
  const nlohmann::json* v = Member(obj, key);
  return v != nullptr && v->is_string() ? v->get<std::string>() : std::string();
}

}  // namespace nvmlx::attribute::json_members

#endif  // NVML_EXPORTER_ATTRIBUTE_JSON_MEMBERS_H_
