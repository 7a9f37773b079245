#include "attribute/node_json.h"

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "attribute/quantity.h"
#include "model/gpu_allocation.h"
#include "util/escape.h"
#include "util/json_members.h"
#include "util/log.h"

namespace nvmlx::attribute {
namespace {

using util::json::Json;
using util::json::Member;
using util::json::StringMember;

constexpr std::string_view kAwsPrefix = "aws:///";
constexpr char kInstanceTypeLabel[] = "node.kubernetes.io/instance-type";
// Deprecated since Kubernetes 1.17 but still set by some node images.
constexpr char kBetaInstanceTypeLabel[] = "beta.kubernetes.io/instance-type";

// The GPU resource names of a status.capacity / status.allocatable object, rounded up; names
// whose value is not a non-negative quantity string are left out (the API server writes none).
std::map<std::string, int64_t> GpuResources(const Json* resources) {
  std::map<std::string, int64_t> out;
  if (util::json::Object(resources) == nullptr) return out;
  for (const auto& [name, value] : resources->items()) {
    const std::string* text = util::json::StringPtr(&value);
    if (!model::IsGpuResourceName(name) || text == nullptr) continue;
    const std::optional<int64_t> v = ParseQuantityCeil(*text);
    if (v.has_value() && *v >= 0) out[name] = *v;
  }
  return out;
}

}  // namespace

std::string InstanceIdFromProviderId(std::string_view provider_id) {
  if (provider_id.substr(0, kAwsPrefix.size()) != kAwsPrefix) return "";
  const std::string_view rest = provider_id.substr(kAwsPrefix.size());
  const size_t slash = rest.find('/');
  if (slash == 0 || slash == std::string_view::npos) return "";  // no zone
  const std::string_view id = rest.substr(slash + 1);
  if (id.size() < 3 || id.substr(0, 2) != "i-") return "";
  for (char c : id.substr(2)) {
    const bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
    if (!ok) return "";  // EC2 instance ids are lower-case hex after "i-"
  }
  return std::string(id);
}

Result<model::NodeInfo> ParseNode(std::string_view body, const std::string& where) {
  Result<Json> parsed = util::json::Parse(body);
  if (!parsed.ok()) return InvalidArgument(where + ": " + parsed.status().message());
  const Json& doc = *parsed;
  if (!doc.is_object()) return InvalidArgument(where + ": expected a JSON object");
  const std::string kind = StringMember(doc, "kind");
  if (kind != "Node") {
    return InvalidArgument(where + ": expected kind Node, got " + util::QuoteForMessage(kind));
  }
  model::NodeInfo node;
  const Json* md = Member(doc, "metadata");
  if (md != nullptr) node.node_name = StringMember(*md, "name");
  if (node.node_name.empty()) return InvalidArgument(where + ": no metadata.name");
  if (const Json* labels = Member(md, "labels"); labels != nullptr) {
    node.instance_type = StringMember(*labels, kInstanceTypeLabel);
    if (node.instance_type.empty()) {
      node.instance_type = StringMember(*labels, kBetaInstanceTypeLabel);
    }
  }
  const std::string provider_id = StringMember(Member(doc, "spec"), "providerID");
  node.instance_id = InstanceIdFromProviderId(provider_id);
  if (node.instance_id.empty()) {
    log::Debug("the node's providerID names no EC2 instance: no instance id",
               {{"node", node.node_name}, {"provider_id", provider_id}});
  }
  if (const Json* status = Member(doc, "status"); status != nullptr) {
    node.gpu_capacity = GpuResources(Member(*status, "capacity"));
    node.gpu_allocatable = GpuResources(Member(*status, "allocatable"));
  }
  return node;
}

}  // namespace nvmlx::attribute
