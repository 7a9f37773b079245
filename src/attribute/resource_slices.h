// ResourceSlices: what the NVIDIA DRA driver (gpu.nvidia.com) publishes about each device of its
// pools, read from the Kubernetes API server, so that a DRA claim the kubelet reports by
// (driver, pool, device name) can be resolved to the GPU or MIG device it names.
//
// dcgm-exporter 4.8.2 (internal/pkg/transformation/dra.go) keeps an informer on
// resource.k8s.io/v1beta1 ResourceSlices and reads, for every device of a gpu.nvidia.com slice,
// the string attributes `type` ("gpu" or "mig"), `uuid`, and for MIG `parentUUID` and `profile`,
// keyed "<pool>/<device>". We do the same with a periodic list (slices change only when the
// driver re-publishes, e.g. after a MIG reconfiguration), asking for resource.k8s.io/v1 first
// (Kubernetes 1.34+, attributes directly on the device) and falling back to v1beta1
// (attributes under `basic`) when the server does not serve v1. With a node name the list is
// restricted to that node's slices (fieldSelector spec.nodeName), always to the driver's.
//
// Thread-safety: ParseResourceSliceList is a pure function. ResourceSliceRefresher: Latest()
// and RefreshSoon() from any thread; Start/Stop/RefreshOnce from one controlling thread
// (RefreshOnce only while the thread is not running).
#ifndef NVML_EXPORTER_ATTRIBUTE_RESOURCE_SLICES_H_
#define NVML_EXPORTER_ATTRIBUTE_RESOURCE_SLICES_H_

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "attribute/error_counters.h"
#include "attribute/kube_client.h"
#include "util/clock.h"
#include "util/latest.h"
#include "util/periodic_worker.h"
#include "util/status.h"

namespace nvmlx::attribute {

// The DRA driver whose claims name GPUs (dcgm-exporter's DRAGPUDriverName).
inline constexpr std::string_view kDraGpuDriver = "gpu.nvidia.com";

// One device of a slice: a whole GPU (uuid "GPU-…") or a MIG device (uuid "MIG-…", with its
// parent GPU's uuid and profile, e.g. "1g.18gb").
struct DraDevice {
  bool mig = false;
  std::string uuid;
  std::string parent_uuid;  // MIG only
  std::string profile;      // MIG only
};
// "<pool>/<device>" -> device.
struct DraSlices {
  std::unordered_map<std::string, DraDevice> by_pool_device;
};

// Adds the gpu.nvidia.com devices of a ResourceSliceList (v1 or v1beta1 JSON) to *out. Devices
// without a usable type (not "gpu"/"mig", or a MIG one without parentUUID, as dcgm-exporter
// skips them) are skipped and counted in *skipped (may be null). Errors name `where` and what
// was expected. Returns the list's continue token (empty on the last page).
Result<std::string> ParseResourceSliceList(std::string_view body, const std::string& where,
                                           DraSlices* out, size_t* skipped = nullptr);

struct ResourceSliceOptions {
  KubeApiConfig api;
  std::string node_name;  // empty: the slices of every node
  std::chrono::milliseconds period{30000};
  std::chrono::milliseconds request_timeout{5000};  // also bounds the start-up list
  model::SourceErrors* errors = nullptr;            // may be null; must outlive the refresher
  util::Clock* clock = nullptr;  // null: the real clock; must outlive the refresher
};

class ResourceSliceRefresher {
 public:
  static constexpr std::string_view kSource = "resourceslices";

  explicit ResourceSliceRefresher(ResourceSliceOptions options);
  ~ResourceSliceRefresher();
  ResourceSliceRefresher(const ResourceSliceRefresher&) = delete;
  ResourceSliceRefresher& operator=(const ResourceSliceRefresher&) = delete;

  // One list on the calling thread; true when it succeeded (then published).
  bool RefreshOnce();
  void Start();
  void Stop();
  // Wakes the thread for a list now (e.g. a claim named a device we do not know yet).
  void RefreshSoon();

  // Null until the first successful list.
  std::shared_ptr<const DraSlices> Latest() const;

 private:
  // The list target for API group version `version` ("v1", "v1beta1").
  std::string Target(std::string_view version) const;

  const ResourceSliceOptions options_;
  KubeApiClient client_;
  // Only the refreshing thread touches these.
  bool use_v1beta1_ = false;  // the server answered 404 for v1
  FailureStreak streak_;
  util::Latest<DraSlices> latest_;
  util::PeriodicWorker worker_;  // last: stopped before the members above go
};

}  // namespace nvmlx::attribute

#endif  // NVML_EXPORTER_ATTRIBUTE_RESOURCE_SLICES_H_
