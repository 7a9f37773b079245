// libFuzzer entry point for the kubelet's pod-resources answer as we use it: any bytes decoded as
// a ListPodResourcesResponse (protobuf, as gRPC hands it over), then matched to our GPUs by the
// PodMatcher (pod_matcher.h), whose device-id parsing ("GPU-…::3", "nvidia0/gi1/vgpu3",
// "MIG-GPU-<uuid>/<gi>/<ci>", DRA pool/device names) is ours. The first byte picks the options
// (--kubernetes-gpu-id-type, --kubernetes-virtual-gpus, DRA on or off). Replayed over
// testdata/fuzz/pod_resources/ by pod_resources_fuzz_replay_test in the ordinary build; fuzzed
// by `make fuzz` (cmake/fuzz.cmake).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "attribute/pod_matcher.h"
#include "attribute/pod_resources_proto.h"

namespace {

using nvmlx::attribute::DraSlices;
using nvmlx::model::DeviceIdentity;

constexpr char kGpu0[] = "GPU-00000000-0000-0000-0000-000000000000";
constexpr char kGpu1[] = "GPU-00000000-0000-0000-0000-000000000001";
constexpr char kMigA[] = "MIG-11111111-1111-1111-1111-111111111111";

// Two whole GPUs, GPU 1 also as two MIG instances (GI 1 and 2): what the matcher resolves to.
std::vector<DeviceIdentity> Identities() {
  std::vector<DeviceIdentity> ids(4);
  ids[0].index = 0;
  ids[0].uuid = kGpu0;
  for (size_t i = 1; i < 4; ++i) {
    ids[i].index = 1;
    ids[i].uuid = kGpu1;
  }
  ids[2].mig = DeviceIdentity::Mig{1, 0, "1g.18gb", kMigA};
  ids[3].mig = DeviceIdentity::Mig{2, 0, "1g.18gb", "MIG-22222222-2222-2222-2222-222222222222"};
  return ids;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  v1::ListPodResourcesResponse answer;
  if (!answer.ParseFromArray(data + 1, static_cast<int>(size - 1))) return 0;

  nvmlx::attribute::MatchOptions options;
  options.id_type =
      (mode & 1) ? nvmlx::attribute::GpuIdType::kDeviceName : nvmlx::attribute::GpuIdType::kUid;
  options.virtual_gpus = (mode & 2) != 0;
  if (mode & 4) options.extra_resource_names = {"example.com/gpu"};
  DraSlices slices;
  slices.by_pool_device["node1/gpu-0"] = {false, kGpu0, "", ""};
  slices.by_pool_device["node1/gpu-1-mig-a"] = {true, kMigA, kGpu1, "1g.18gb"};
  slices.by_pool_device["node1/gpu-9"] = {false, "GPU-not-collected", "", ""};

  const std::vector<DeviceIdentity> identities = Identities();
  const nvmlx::attribute::PodMatcher matcher(identities, options);
  nvmlx::attribute::MatchStats stats;
  auto result =
      matcher.Match(nvmlx::attribute::FromProto(answer), &stats, (mode & 8) ? &slices : nullptr);
  // Invariants: an answer always, attributed only to devices we collect, counts consistent.
  if (result == nullptr) std::abort();
  if (result->pods_by_device.size() > identities.size()) std::abort();
  if (stats.unmatched > stats.gpu_devices) std::abort();
  if (stats.dra_unresolved > stats.dra_claims) std::abort();
  for (const auto& [key, holders] : result->pods_by_device) {
    if (key.empty() || holders.empty()) std::abort();
  }
  for (const auto& id : {std::string("GPU-x::3"), std::string("nvidia0/gi1/vgpu3")}) {
    (void)nvmlx::attribute::PodMatcher::SharedReplica(id);
  }
  return 0;
}
