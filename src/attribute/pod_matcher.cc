#include "attribute/pod_matcher.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <tuple>
#include <utility>

namespace nvmlx::attribute {
namespace {

constexpr std::string_view kGpuResource = "nvidia.com/gpu";
constexpr std::string_view kMigResourcePrefix = "nvidia.com/mig-";
constexpr std::string_view kMigPrefix = "MIG-";
constexpr std::string_view kOldMigPrefix = "MIG-GPU-";
constexpr std::string_view kGkeReplicaSeparator = "/vgpu";
constexpr std::string_view kReplicaSeparator = "::";

std::string DcgmMigId(unsigned gpu_index, unsigned gpu_instance_id) {
  return std::to_string(gpu_index) + "-" + std::to_string(gpu_instance_id);
}

// Consumes leading decimal digits of *s into *out; false when there are none.
bool ConsumeNumber(std::string_view* s, unsigned* out) {
  auto [end, ec] = std::from_chars(s->data(), s->data() + s->size(), *out);
  if (ec != std::errc() || end == s->data()) return false;
  s->remove_prefix(static_cast<size_t>(end - s->data()));
  return true;
}

bool ConsumePrefix(std::string_view* s, std::string_view prefix) {
  if (!s->starts_with(prefix)) return false;
  s->remove_prefix(prefix.size());
  return true;
}

// GKE's MIG form, dcgm-exporter's regex ^nvidia([0-9]+)/gi([0-9]+)(/vgpu[0-9]+)?$ by hand.
std::optional<std::string> GkeMigId(std::string_view id) {
  unsigned gpu = 0, gi = 0, replica = 0;
  if (!ConsumePrefix(&id, "nvidia") || !ConsumeNumber(&id, &gpu) || !ConsumePrefix(&id, "/gi") ||
      !ConsumeNumber(&id, &gi)) {
    return std::nullopt;
  }
  if (!id.empty() && (!ConsumePrefix(&id, kGkeReplicaSeparator) || !ConsumeNumber(&id, &replica))) {
    return std::nullopt;
  }
  if (!id.empty()) return std::nullopt;
  return DcgmMigId(gpu, gi);
}

auto OrderKey(const model::PodRef& p) {
  return std::tie(p.namespace_name, p.pod, p.container, p.vgpu);
}

}  // namespace

PodMatcher::PodMatcher(const std::vector<model::DeviceIdentity>& identities, MatchOptions options)
    : options_(std::move(options)) {
  for (const model::DeviceIdentity& id : identities) {
    if (id.mig) {
      std::string dcgm_id = DcgmMigId(id.index, id.mig->gpu_instance_id);
      dcgm_id_by_mig_uuid_[id.mig->uuid] = dcgm_id;
      dcgm_id_by_parent_gi_[id.uuid + "/" + std::to_string(id.mig->gpu_instance_id)] = dcgm_id;
      key_by_dcgm_id_[dcgm_id] = id.DeviceKey();
      key_by_uuid_[id.mig->uuid] = id.DeviceKey();
    } else {
      key_by_uuid_[id.uuid] = id.DeviceKey();
      key_by_dcgm_id_[options_.id_type == GpuIdType::kUid ? id.uuid
                                                          : "nvidia" + std::to_string(id.index)] =
          id.DeviceKey();
    }
  }
}

std::string_view PodMatcher::SharedReplica(std::string_view device_id) {
  // Same precedence as dcgm-exporter's getSharedGPU: GKE's "/vgpu" first, then "::".
  if (size_t at = device_id.find(kGkeReplicaSeparator); at != std::string_view::npos) {
    return device_id.substr(at + kGkeReplicaSeparator.size());
  }
  if (size_t at = device_id.find(kReplicaSeparator); at != std::string_view::npos) {
    return device_id.substr(at + kReplicaSeparator.size());
  }
  return {};
}

bool PodMatcher::AcceptsResource(std::string_view name) const {
  if (name == kGpuResource || name.starts_with(kMigResourcePrefix)) return true;
  return std::find(options_.extra_resource_names.begin(), options_.extra_resource_names.end(),
                   name) != options_.extra_resource_names.end();
}

const std::string* PodMatcher::Resolve(std::string_view device_id) const {
  auto key_of = [this](std::string_view dcgm_id) -> const std::string* {
    auto it = key_by_dcgm_id_.find(dcgm_id);
    return it == key_by_dcgm_id_.end() ? nullptr : &it->second;
  };
  // The id dcgm-exporter derives from the device id, if any; the raw id is tried last.
  std::string_view derived;
  std::optional<std::string> gke;
  if (device_id.starts_with(kMigPrefix)) {
    std::string_view mig = device_id.substr(0, device_id.find(kReplicaSeparator));
    if (auto it = dcgm_id_by_mig_uuid_.find(mig); it != dcgm_id_by_mig_uuid_.end()) {
      derived = it->second;
    } else if (mig.starts_with(kOldMigPrefix)) {
      // "MIG-GPU-<uuid>/<gi>/<ci>": the parent is "GPU-<uuid>".
      std::string_view rest = mig.substr(kMigPrefix.size());
      size_t slash = rest.find('/');
      size_t ci_slash = rest.rfind('/');
      if (slash != std::string_view::npos && ci_slash > slash) {
        auto it = dcgm_id_by_parent_gi_.find(rest.substr(0, ci_slash));
        if (it != dcgm_id_by_parent_gi_.end()) derived = it->second;
      }
    }
  } else if ((gke = GkeMigId(device_id))) {
    derived = *gke;
  } else if (size_t at = device_id.find(kGkeReplicaSeparator); at != std::string_view::npos) {
    derived = device_id.substr(0, at);
  } else if (size_t at2 = device_id.find(kReplicaSeparator); at2 != std::string_view::npos) {
    derived = device_id.substr(0, at2);
  }
  if (!derived.empty()) {
    if (const std::string* key = key_of(derived)) return key;
  }
  return key_of(device_id);
}

void PodMatcher::MatchDra(const KubeletPodList& answer, const DraSlices& dra,
                          model::DeviceAttribution* out, MatchStats* stats) const {
  std::unordered_map<std::string, std::vector<model::PodRef>> holders;
  for (const KubeletPod& pod : answer.pods) {
    for (const KubeletContainer& container : pod.containers) {
      for (const KubeletClaim& claim : container.dynamic_resources) {
        for (const KubeletClaimResource& res : claim.claim_resources) {
          if (res.driver_name != kDraGpuDriver) continue;
          ++stats->dra_claims;
          auto slice = dra.by_pool_device.find(res.pool_name + "/" + res.device_name);
          if (slice == dra.by_pool_device.end()) {
            ++stats->dra_unresolved;
            stats->dra_unknown.push_back(res.pool_name + "/" + res.device_name);
            continue;
          }
          const DraDevice& device = slice->second;
          auto key = key_by_uuid_.find(device.uuid);
          if (key == key_by_uuid_.end()) {
            ++stats->dra_unresolved;
            continue;
          }
          model::DraAllocation a{claim.claim_name,
                                 claim.claim_namespace,
                                 res.driver_name,
                                 res.pool_name,
                                 res.device_name,
                                 "",
                                 ""};
          if (device.mig) {
            a.mig_profile = device.profile;
            a.mig_device_uuid = device.uuid;
          }
          std::vector<model::PodRef>& refs = holders[key->second];
          const bool seen = std::any_of(refs.begin(), refs.end(), [&](const model::PodRef& r) {
            return r.namespace_name == pod.namespace_name && r.pod == pod.name &&
                   r.container == container.name;
          });
          // dcgm-exporter keeps the first claim of a container on a device.
          if (!seen) {
            refs.push_back({pod.namespace_name, pod.name, container.name, "", std::move(a)});
          }
        }
      }
    }
  }
  for (auto& [key, refs] : holders) {
    std::stable_sort(refs.begin(), refs.end(), [](const model::PodRef& a, const model::PodRef& b) {
      return OrderKey(a) < OrderKey(b);
    });
    out->pods_by_device[key] = std::move(refs);
  }
}

std::shared_ptr<const model::DeviceAttribution> PodMatcher::Match(const KubeletPodList& answer,
                                                                  MatchStats* stats,
                                                                  const DraSlices* dra) const {
  auto out = std::make_shared<model::DeviceAttribution>();
  MatchStats local;
  for (const KubeletPod& pod : answer.pods) {
    for (const KubeletContainer& container : pod.containers) {
      for (const KubeletDevices& devices : container.devices) {
        if (!AcceptsResource(devices.resource_name)) continue;
        for (const std::string& device_id : devices.device_ids) {
          ++local.gpu_devices;
          const std::string* key = Resolve(device_id);
          if (key == nullptr) {
            ++local.unmatched;
            continue;
          }
          model::PodRef ref{pod.namespace_name, pod.name, container.name,
                            options_.virtual_gpus ? std::string(SharedReplica(device_id)) : ""};
          std::vector<model::PodRef>& refs = out->pods_by_device[*key];
          if (options_.virtual_gpus || refs.empty()) {
            refs.push_back(std::move(ref));
          } else if (OrderKey(ref) < OrderKey(refs.front())) {
            refs.front() = std::move(ref);
          }
        }
      }
    }
  }
  if (options_.virtual_gpus) {
    for (auto& [key, refs] : out->pods_by_device) {
      std::sort(refs.begin(), refs.end(), [](const model::PodRef& a, const model::PodRef& b) {
        return OrderKey(a) < OrderKey(b);
      });
      refs.erase(std::unique(refs.begin(), refs.end(),
                             [](const model::PodRef& a, const model::PodRef& b) {
                               return OrderKey(a) == OrderKey(b);
                             }),
                 refs.end());
    }
  }
  if (dra != nullptr) MatchDra(answer, *dra, out.get(), &local);
  if (stats != nullptr) *stats = local;
  return out;
}

}  // namespace nvmlx::attribute
