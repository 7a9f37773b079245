#include "attribute/resource_slices.h"

#include <nlohmann/json.hpp>
#include <utility>

#include "util/json_members.h"
#include "util/log.h"

namespace nvmlx::attribute {
namespace {

using json = util::json::Json;
using util::json::Member;
using util::json::StringMember;

// A DeviceAttribute's string value: {"string": "…"} (the same in v1 and v1beta1).
std::string StringAttribute(const json& attributes, const char* name) {
  const json* attr = Member(attributes, name);
  return attr == nullptr ? std::string() : StringMember(*attr, "string");
}

}  // namespace

Result<std::string> ParseResourceSliceList(std::string_view body, const std::string& where,
                                           DraSlices* out, size_t* skipped) {
  Result<json> parsed = util::json::Parse(body);
  if (!parsed.ok()) return InvalidArgument(where + ": " + parsed.status().message());
  const json& list = *parsed;
  const json* items = Member(list, "items");
  if (items == nullptr || !items->is_array()) {
    return InvalidArgument(where + ": expected a ResourceSliceList with an items array");
  }
  size_t skip = 0, i = 0;
  for (const json& slice : *items) {
    const std::string at = where + ": items[" + std::to_string(i++) + "]";
    const json* spec = Member(slice, "spec");
    if (spec == nullptr || !spec->is_object()) return InvalidArgument(at + ": no spec object");
    if (StringMember(*spec, "driver") != kDraGpuDriver) continue;
    const json* pool = Member(*spec, "pool");
    const std::string pool_name = pool != nullptr ? StringMember(*pool, "name") : std::string();
    if (pool_name.empty()) return InvalidArgument(at + ": spec.pool.name missing");
    const json* devices = Member(*spec, "devices");
    if (devices == nullptr) continue;  // a slice may carry no devices
    if (!devices->is_array()) return InvalidArgument(at + ": spec.devices is not an array");
    for (const json& dev : *devices) {
      const std::string name = StringMember(dev, "name");
      // v1 (and v1beta2): attributes on the device; v1beta1: under "basic".
      const json* attrs = Member(dev, "attributes");
      if (attrs == nullptr) {
        if (const json* basic = Member(dev, "basic")) attrs = Member(*basic, "attributes");
      }
      if (name.empty() || attrs == nullptr || !attrs->is_object()) {
        ++skip;
        continue;
      }
      DraDevice d;
      const std::string type = StringAttribute(*attrs, "type");
      d.uuid = StringAttribute(*attrs, "uuid");
      if (type == "gpu" && !d.uuid.empty()) {
        out->by_pool_device[pool_name + "/" + name] = std::move(d);
      } else if (type == "mig" && !StringAttribute(*attrs, "parentUUID").empty()) {
        d.mig = true;
        d.parent_uuid = StringAttribute(*attrs, "parentUUID");
        d.profile = StringAttribute(*attrs, "profile");
        out->by_pool_device[pool_name + "/" + name] = std::move(d);
      } else {
        ++skip;
      }
    }
  }
  if (skipped != nullptr) *skipped += skip;
  const json* md = Member(list, "metadata");
  return md != nullptr ? StringMember(*md, "continue") : std::string();
}

ResourceSliceRefresher::ResourceSliceRefresher(ResourceSliceOptions options)
    : options_(std::move(options)),
      client_(options_.api),
      streak_(std::string(kSource), options_.errors),
      worker_(
          {.name = "resourceslice refresher", .period = options_.period, .clock = options_.clock},
          [this] { RefreshOnce(); }) {
  if (options_.errors != nullptr) options_.errors->Register(kSource);
}

ResourceSliceRefresher::~ResourceSliceRefresher() { Stop(); }

std::string ResourceSliceRefresher::Target(std::string_view version) const {
  std::string selector = "spec.driver=" + std::string(kDraGpuDriver);
  if (!options_.node_name.empty()) selector += ",spec.nodeName=" + options_.node_name;
  return "/apis/resource.k8s.io/" + std::string(version) +
         "/resourceslices?limit=500&fieldSelector=" + QueryEscape(selector);
}

bool ResourceSliceRefresher::RefreshOnce() {
  auto slices = std::make_shared<DraSlices>();
  size_t skipped = 0;
  std::string continue_token;
  for (;;) {
    const std::string_view version = use_v1beta1_ ? "v1beta1" : "v1";
    std::string target = Target(version);
    if (!continue_token.empty()) target += "&continue=" + QueryEscape(continue_token);
    Result<HttpResponse> r = client_.Get(target, options_.request_timeout);
    if (!r.ok()) {
      streak_.Fail("list ResourceSlices", r.status().ToString());
      return false;
    }
    if (r->status == 404 && !use_v1beta1_ && continue_token.empty()) {
      // A server before Kubernetes 1.34 (or with v1 off) serves only the beta API.
      log::Info("resource.k8s.io/v1 not served; listing ResourceSlices through v1beta1");
      use_v1beta1_ = true;
      continue;
    }
    if (r->status != 200) {
      streak_.Fail("list ResourceSlices",
                   "HTTP " + std::to_string(r->status) + ": " + BodyExcerpt(r->body));
      return false;
    }
    Result<std::string> next = ParseResourceSliceList(
        r->body, "ResourceSliceList (resource.k8s.io/" + std::string(version) + ")", slices.get(),
        &skipped);
    if (!next.ok()) {
      streak_.Fail("list ResourceSlices", next.status().ToString());
      return false;
    }
    continue_token = *next;
    if (continue_token.empty()) break;
  }
  streak_.Succeed();
  log::Debug("ResourceSlices refreshed",
             {{"devices", std::to_string(slices->by_pool_device.size())},
              {"skipped", std::to_string(skipped)}});
  latest_.Publish(std::move(slices));
  return true;
}

void ResourceSliceRefresher::Start() { worker_.Start(); }

void ResourceSliceRefresher::Stop() {
  client_.Stop();  // interrupts a list in flight; the refresher is not restarted after Stop
  worker_.Stop();
}

void ResourceSliceRefresher::RefreshSoon() { worker_.RunSoon(); }

std::shared_ptr<const DraSlices> ResourceSliceRefresher::Latest() const { return latest_.Get(); }

}  // namespace nvmlx::attribute
