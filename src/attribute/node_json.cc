#include "attribute/node_json.h"

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "attribute/json_members.h"
#include "attribute/quantity.h"
#include "model/gpu_allocation.h"
#include "util/log.h"

namespace nvmlx::attribute {
namespace {

using json_members::Member;
using json_members::StringMember;
using nlohmann::json;

constexpr std::string_view kAwsPrefix = "aws:///";
constexpr char kInstanceTypeLabel[] = "node.kubernetes.io/instance-type";
// Deprecated since Kubernetes 1.17 but still set by some node images.
constexpr char kBetaInstanceTypeLabel[] = "beta.kubernetes.io/instance-type";

// The GPU resource names of a status.capacity / status.allocatable object, rounded up; names
// whose value is not a non-negative quantity string are left out (the API server writes none).
std::map<std::string, int64_t> GpuResources(const json* resources) {
  std::map<std::string, int64_t> out;
  if (resources == nullptr || !resources->is_object()) return out;
  for (const auto& [name, value] : resources->items()) {
    if (!model::IsGpuResourceName(name) || !value.is_string()) continue;
    const std::optional<int64_t> v = ParseQuantityCeil(value.get_ref<const std::string&>());
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
  try {
    const json doc = json::parse(body);
    if (!doc.is_object()) return InvalidArgument(where + ": expected a JSON object");
    const std::string kind = StringMember(doc, "kind");
    if (kind != "Node") {
      return InvalidArgument(where + ": expected kind Node, got \"" + kind + "\"");
    }
    model::NodeInfo node;
    const json* md = Member(doc, "metadata");
    if (md != nullptr) node.node_name = StringMember(*md, "name");
    if (node.node_name.empty()) return InvalidArgument(where + ": no metadata.name");
    if (const json* labels = Member(*md, "labels"); labels != nullptr) {
      node.instance_type = StringMember(*labels, kInstanceTypeLabel);
      if (node.instance_type.empty()) {
        node.instance_type = StringMember(*labels, kBetaInstanceTypeLabel);
      }
    }
    std::string provider_id;
    if (const json* spec = Member(doc, "spec"); spec != nullptr) {
      provider_id = StringMember(*spec, "providerID");
    }
    node.instance_id = InstanceIdFromProviderId(provider_id);
    if (node.instance_id.empty()) {
      log::Debug("the node's providerID names no EC2 instance: no instance id",
                 {{"node", node.node_name}, {"provider_id", provider_id}});
    }
    if (const json* status = Member(doc, "status"); status != nullptr) {
      node.gpu_capacity = GpuResources(Member(*status, "capacity"));
      node.gpu_allocatable = GpuResources(Member(*status, "allocatable"));
    }
    return node;
  } catch (const json::exception& e) {
    return InvalidArgument(where + ": invalid JSON: " + e.what());
  }
}

}  // namespace nvmlx::attribute
