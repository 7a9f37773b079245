// PodMatcher: turns a kubelet pod-resources List answer into a DeviceAttribution (device key ->
// containers holding it), resolving the device ids exactly as dcgm-exporter 4.8.2 does
// (internal/pkg/transformation/kubernetes.go), against our own device identities instead of
// NVML lookups:
//
//  - Devices are kept when their resource is `nvidia.com/gpu`, one of --nvidia-resource-names,
//    or starts with `nvidia.com/mig-`.
//  - Every device is named by a "dcgm id": a MIG instance by "<gpu index>-<GPU instance id>"
//    whatever the id type; a whole GPU by its UUID (--kubernetes-gpu-id-type uid) or by
//    "nvidia<index>" (device-name).
//  - A kubelet device id maps to these dcgm ids:
//      `MIG-<uuid>[::N]`           the MIG instance with that UUID ("MIG-GPU-<uuid>/<gi>/<ci>" of
//                                  old drivers is parsed as parent UUID and GI id);
//      `nvidiaN/giM[/vgpuK]`       (GKE) "N-M";
//      `<x>/vgpuK`                 (GKE time-sharing) "<x>";
//      `<x>::N`                    (NVIDIA time-slicing) "<x>";
//    and always the raw id itself. Ids that name no device we collect are dropped.
//  - The sharing replica (`vgpu` label) is what follows "/vgpu", else what follows "::".
//
// Sharing. With --kubernetes-virtual-gpus every container holding a device is kept, with its
// replica, so the renderer emits one series per sharing container. Without it dcgm-exporter
// keeps the container listed LAST, so with time-slicing the pod named on a GPU's series changes
// between scrapes with the kubelet's listing order (dcgm-exporter #307, #151, #201). We keep
// one container too (the series count stays dcgm-exporter's) but choose it deterministically:
// the least (namespace, pod, container), so the label is stable for as long as the set of
// sharing pods is. The replica is not reported in that mode (dcgm-exporter has no vgpu label
// there either).
//
// DRA (--kubernetes-enable-dra). A container's dynamic resources are claims; each claim resource
// of driver gpu.nvidia.com names a device by pool and device name, which the driver's
// ResourceSlices (resource_slices.h) resolve to a GPU UUID or a MIG device (its UUID, parent and
// profile). Such a device gets the container with its claim (model::PodRef::dra), once per
// (namespace, pod, container); the renderer adds dcgm-exporter's dra_* attributes. As in
// dcgm-exporter, a device with DRA holders is attributed to them only (they replace any
// device-plugin holder), and every DRA holder gets its own series copy. Differences from
// dcgm-exporter 4.8.2, which keys every claim by a GPU UUID (a MIG claim by its parent's) and
// compares that key with the series' --kubernetes-gpu-id-type id: a MIG claim attributes the MIG
// instance it names (dcgm-exporter's key never equals a MIG series' "<gpu>-<gi>" id, so its MIG
// claims label nothing), and claims are resolved whatever the id type (its "nvidia<N>" ids never
// equal a UUID). Holders are ordered by (namespace, pod, container), not listing order.
//
// Thread-safety: immutable after construction; Match() is const and may run on any thread.
#ifndef NVML_EXPORTER_ATTRIBUTE_POD_MATCHER_H_
#define NVML_EXPORTER_ATTRIBUTE_POD_MATCHER_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "attribute/pod_resources.h"
#include "attribute/resource_slices.h"
#include "model/attribution.h"
#include "model/snapshot.h"

namespace nvmlx::attribute {

enum class GpuIdType { kUid, kDeviceName };

struct MatchOptions {
  GpuIdType id_type = GpuIdType::kUid;
  // --nvidia-resource-names: accepted besides nvidia.com/gpu and nvidia.com/mig-*.
  std::vector<std::string> extra_resource_names;
  bool virtual_gpus = false;  // --kubernetes-virtual-gpus
};

// What one Match() saw, for debug logs and tests.
struct MatchStats {
  size_t gpu_devices = 0;     // device ids of accepted resources
  size_t unmatched = 0;       // of those, naming no device we collect
  size_t dra_claims = 0;      // gpu.nvidia.com claim resources (with slices to resolve them)
  size_t dra_unresolved = 0;  // of those, naming no slice device or no device we collect
  std::vector<std::string> dra_unknown;  // "<pool>/<device>" of those naming no slice device
};

class PodMatcher {
 public:
  PodMatcher(const std::vector<model::DeviceIdentity>& identities, MatchOptions options);

  // `dra`: the latest ResourceSlices when DRA attribution is on (null: dynamic resources are
  // ignored, as dcgm-exporter does without --kubernetes-enable-dra or without its slice
  // informer).
  std::shared_ptr<const model::DeviceAttribution> Match(const KubeletPodList& answer,
                                                        MatchStats* stats = nullptr,
                                                        const DraSlices* dra = nullptr) const;

  // The replica of a shared device id ("3" of "GPU-…::3", "nvidia0/vgpu3",
  // "nvidia0/gi1/vgpu3"), empty when the id is not shared. Exposed for tests.
  static std::string_view SharedReplica(std::string_view device_id);

 private:
  bool AcceptsResource(std::string_view resource_name) const;
  // The device key the kubelet id names, or nullptr.
  const std::string* Resolve(std::string_view device_id) const;
  // Adds the DRA holders of `answer` to *out (replacing device-plugin holders of their devices).
  void MatchDra(const KubeletPodList& answer, const DraSlices& dra, model::DeviceAttribution* out,
                MatchStats* stats) const;

  // Lookups by string_view without building a std::string per device id (a refresh resolves
  // every GPU id of every pod on the node).
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using StringMap = std::unordered_map<std::string, std::string, StringHash, std::equal_to<>>;

  MatchOptions options_;
  StringMap key_by_dcgm_id_;
  StringMap dcgm_id_by_mig_uuid_;
  // "<parent GPU uuid>/<gi>" -> dcgm id, for the old "MIG-GPU-<uuid>/<gi>/<ci>" form.
  StringMap dcgm_id_by_parent_gi_;
  // GPU or MIG device UUID -> device key, for DRA.
  StringMap key_by_uuid_;
};

}  // namespace nvmlx::attribute

#endif  // NVML_EXPORTER_ATTRIBUTE_POD_MATCHER_H_
