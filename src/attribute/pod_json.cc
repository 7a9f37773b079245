#include "attribute/pod_json.h"

#include <re2/re2.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "attribute/quantity.h"
#include "model/gpu_allocation.h"
#include "util/escape.h"
#include "util/json_members.h"
#include "util/log.h"

namespace nvmlx::attribute {
namespace {

using json = util::json::Json;
using util::json::Member;
using util::json::StringMember;

constexpr char kMirrorAnnotation[] = "kubernetes.io/config.mirror";

void AddContainers(const json& status, const char* key, model::PodMeta* meta) {
  const json* list = Member(status, key);
  if (list == nullptr || !list->is_array()) return;
  for (const json& cs : *list) {
    const std::string id = StripRuntimePrefix(StringMember(cs, "containerID"));
    const std::string name = StringMember(cs, "name");
    if (!id.empty() && !name.empty()) meta->container_names[id] = name;
  }
}

int64_t AddSaturating(int64_t a, int64_t b) {
  int64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? std::numeric_limits<int64_t>::max() : sum;
}

// A resources.requests / resources.limits value as Container Insights reads it: a quantity
// rounded up; a negative one or one that is not a quantity counts as not set (the agent skips
// negative ones; the API server validates quantities, so anything else is a corrupt object).
std::optional<int64_t> ResourceValue(const json& value) {
  std::optional<int64_t> v;
  if (const std::string* text = util::json::StringPtr(&value)) {
    v = ParseQuantityCeil(*text);
  } else {
    v = util::json::Int(&value);
  }
  if (v.has_value() && *v < 0) return std::nullopt;
  return v;
}

// spec.containers' GPU requests and limits (init containers are not summed: see PodMeta).
void AddGpuResources(const json& pod, model::PodMeta* meta) {
  const json* spec = Member(pod, "spec");
  const json* containers = spec != nullptr ? Member(*spec, "containers") : nullptr;
  if (containers == nullptr || !containers->is_array()) return;
  meta->containers = static_cast<int>(containers->size());
  for (const json& c : *containers) {
    const json* resources = Member(c, "resources");
    if (resources == nullptr) continue;
    for (const bool limits : {false, true}) {
      const json* amounts = Member(*resources, limits ? "limits" : "requests");
      if (amounts == nullptr || !amounts->is_object()) continue;
      for (const auto& [name, value] : amounts->items()) {
        if (!model::IsGpuResourceName(name)) continue;
        const std::optional<int64_t> v = ResourceValue(value);
        if (!v.has_value()) continue;
        model::GpuResourceAmount& a = meta->gpu_resources[name];
        if (limits) {
          a.limits = AddSaturating(a.limits, *v);
          ++a.containers_with_limit;
        } else {
          a.requests = AddSaturating(a.requests, *v);
          ++a.containers_with_request;
        }
      }
    }
  }
}

// metadata.ownerReferences: the entry with controller=true, else the first; entries that are
// not objects with string kind and name are skipped.
void AddOwner(const json& md, model::PodMeta* meta) {
  const json* owners = Member(md, "ownerReferences");
  if (owners == nullptr || !owners->is_array()) return;
  for (const json& o : *owners) {
    const std::string kind = StringMember(o, "kind");
    const std::string name = StringMember(o, "name");
    if (kind.empty() || name.empty()) continue;
    const bool is_controller = util::json::Bool(Member(o, "controller"));
    if (meta->owner_name.empty() || is_controller) {
      meta->owner_kind = kind;
      meta->owner_name = name;
    }
    if (is_controller) return;
  }
}

// One pod object -> PodRecord; `where` names it in errors.
Result<PodRecord> ParsePod(const json& pod, const LabelFilter& filter, const std::string& where) {
  const json* md = Member(pod, "metadata");
  if (md == nullptr || !md->is_object()) return InvalidArgument(where + ": no metadata object");
  PodRecord r;
  r.meta.uid = StringMember(*md, "uid");
  r.meta.pod = StringMember(*md, "name");
  r.meta.namespace_name = StringMember(*md, "namespace");
  if (r.meta.uid.empty() || r.meta.pod.empty()) {
    return InvalidArgument(where + ": metadata without uid or name");
  }
  if (filter.enabled()) {
    if (const json* labels = Member(*md, "labels"); labels != nullptr && labels->is_object()) {
      for (const auto& [key, value] : labels->items()) {
        const std::string* text = util::json::StringPtr(&value);
        if (text == nullptr || !filter.Admits(key)) continue;
        r.meta.labels.emplace_back(SanitizeLabelName(key), *text);
      }
      // Two keys can sanitise to one name (a.b and a_b): keep the first in key order.
      std::stable_sort(r.meta.labels.begin(), r.meta.labels.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      r.meta.labels.erase(
          std::unique(r.meta.labels.begin(), r.meta.labels.end(),
                      [](const auto& a, const auto& b) { return a.first == b.first; }),
          r.meta.labels.end());
    }
  }
  if (const json* ann = Member(*md, "annotations"); ann != nullptr) {
    r.mirror_uid = StringMember(*ann, kMirrorAnnotation);
  }
  AddOwner(*md, &r.meta);
  AddGpuResources(pod, &r.meta);
  if (const json* status = Member(pod, "status"); status != nullptr) {
    r.meta.phase = StringMember(*status, "phase");
    AddContainers(*status, "containerStatuses", &r.meta);
    AddContainers(*status, "initContainerStatuses", &r.meta);  // native sidecars
    AddContainers(*status, "ephemeralContainerStatuses", &r.meta);
  }
  return r;
}

}  // namespace

std::string SanitizeLabelName(std::string_view name) {
  std::string out;
  out.reserve(name.size() + 1);
  if (!name.empty() && name[0] >= '0' && name[0] <= '9') out.push_back('_');
  for (char c : name) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    out.push_back(ok ? c : '_');
  }
  return out;
}

std::shared_ptr<const LabelFilter> LabelFilter::Create(bool enabled,
                                                       const std::vector<std::string>& patterns) {
  std::shared_ptr<LabelFilter> f(new LabelFilter());
  f->enabled_ = enabled;
  if (!enabled) return f;
  for (const std::string& p : patterns) {
    if (p.empty()) continue;
    auto re = std::make_unique<re2::RE2>(p, re2::RE2::Quiet);
    if (!re->ok()) {
      log::Warn("skipping pod label allowlist regex that does not compile",
                {{"pattern", p}, {"err", re->error()}});
      continue;
    }
    f->patterns_.push_back(std::move(re));
  }
  return f;
}

LabelFilter::~LabelFilter() = default;

bool LabelFilter::Admits(std::string_view key) const {
  if (!enabled_) return false;
  if (patterns_.empty()) return true;
  for (const auto& re : patterns_) {
    if (re2::RE2::PartialMatch(key, *re)) return true;
  }
  return false;
}

std::string StripRuntimePrefix(std::string_view container_id) {
  const size_t sep = container_id.find("://");
  if (sep != std::string_view::npos) container_id.remove_prefix(sep + 3);
  return std::string(container_id);
}

Result<PodList> ParsePodList(std::string_view body, const LabelFilter& filter) {
  Result<json> parsed = util::json::Parse(body);
  if (!parsed.ok()) return InvalidArgument("pod list: " + parsed.status().message());
  const json& doc = *parsed;
  if (!doc.is_object()) return InvalidArgument("pod list: expected a JSON object");
  const std::string kind = StringMember(doc, "kind");
  if (kind != "PodList") {
    return InvalidArgument("pod list: expected kind PodList, got " + util::QuoteForMessage(kind));
  }
  PodList out;
  if (const json* md = Member(doc, "metadata"); md != nullptr) {
    out.resource_version = StringMember(*md, "resourceVersion");
    out.continue_token = StringMember(*md, "continue");
  }
  if (out.resource_version.empty()) {
    return InvalidArgument("pod list: no metadata.resourceVersion");
  }
  const json* items = Member(doc, "items");
  if (items != nullptr && !items->is_null()) {
    if (!items->is_array()) return InvalidArgument("pod list: items is not an array");
    size_t i = 0;
    for (const json& item : *items) {
      Result<PodRecord> r = ParsePod(item, filter, "pod list: items[" + std::to_string(i++) + "]");
      if (!r.ok()) return r.status();
      out.pods.push_back(std::move(*r));
    }
  }
  return out;
}

namespace {

// One event of the type names the watch sends; INVALID_ARGUMENT for any other.
Result<WatchEventType> EventType(const std::string& type) {
  if (type == "ADDED") return WatchEventType::kAdded;
  if (type == "MODIFIED") return WatchEventType::kModified;
  if (type == "DELETED") return WatchEventType::kDeleted;
  if (type == "BOOKMARK") return WatchEventType::kBookmark;
  return InvalidArgument("watch event: unknown type " + util::QuoteForMessage(type));
}

}  // namespace

Result<WatchEvent> ParseWatchEvent(std::string_view line, const LabelFilter& filter) {
  Result<json> parsed = util::json::Parse(line);
  if (!parsed.ok()) return InvalidArgument("watch event: " + parsed.status().message());
  const json& doc = *parsed;
  const std::string type = StringMember(doc, "type");
  const json* obj = Member(doc, "object");
  if (obj == nullptr || !obj->is_object()) {
    return InvalidArgument("watch event: no object (type " + util::QuoteForMessage(type) + ")");
  }
  WatchEvent ev;
  if (type == "ERROR") {
    ev.type = WatchEventType::kError;
    const std::optional<int64_t> code = util::json::Int(Member(*obj, "code"));
    if (code.has_value() && *code >= std::numeric_limits<int>::min() &&
        *code <= std::numeric_limits<int>::max()) {
      ev.error_code = static_cast<int>(*code);
    }
    ev.error_message = StringMember(*obj, "message");
    return ev;
  }
  Result<WatchEventType> event_type = EventType(type);
  if (!event_type.ok()) return event_type.status();
  ev.type = *event_type;
  if (const json* md = Member(*obj, "metadata"); md != nullptr) {
    ev.resource_version = StringMember(*md, "resourceVersion");
  }
  if (ev.type != WatchEventType::kBookmark) {
    Result<PodRecord> r = ParsePod(*obj, filter, "watch event " + util::MessagePrefix(type));
    if (!r.ok()) return r.status();
    ev.pod = std::move(*r);
  }
  return ev;
}

}  // namespace nvmlx::attribute
