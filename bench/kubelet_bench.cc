// The CPU cost of one kubelet refresh, without the socket: decoding a List answer of N pods
// (protobuf), converting it to the plain answer (FromProto, in the kubelet plugin) and matching
// it to 8 GPUs (PodMatcher). Each pod holds one GPU (time-sliced ids "GPU-…::k", as on a shared
// node) plus a CPU set, the shape of a real answer. The baseline in
// the same run is decoding alone, so the ratio shows what matching adds.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "attribute/pod_matcher.h"
#include "attribute/pod_resources.pb.h"
#include "attribute/pod_resources_proto.h"

namespace {

std::vector<nvmlx::model::DeviceIdentity> EightGpus() {
  std::vector<nvmlx::model::DeviceIdentity> ids(8);
  for (unsigned i = 0; i < 8; ++i) {
    ids[i].index = i;
    ids[i].uuid = "GPU-00000000-0000-0000-0000-00000000000" + std::to_string(i);
  }
  return ids;
}

std::string Answer(int pods) {
  v1::ListPodResourcesResponse r;
  for (int i = 0; i < pods; ++i) {
    v1::PodResources* pod = r.add_pod_resources();
    pod->set_namespace_("namespace-" + std::to_string(i % 20));
    pod->set_name("inference-server-7d9f8c6b5-" + std::to_string(i));
    v1::ContainerResources* c = pod->add_containers();
    c->set_name("server");
    c->add_cpu_ids(i % 64);
    v1::ContainerDevices* d = c->add_devices();
    d->set_resource_name("nvidia.com/gpu");
    d->add_device_ids("GPU-00000000-0000-0000-0000-00000000000" + std::to_string(i % 8) +
                      "::" + std::to_string(i / 8));
    d->mutable_topology()->add_nodes()->set_id(0);
  }
  return r.SerializeAsString();
}

void BM_Decode(benchmark::State& state) {
  const std::string wire = Answer(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    v1::ListPodResourcesResponse r;
    benchmark::DoNotOptimize(r.ParseFromString(wire));
  }
  state.counters["pods"] = static_cast<double>(state.range(0));
  state.counters["bytes"] = static_cast<double>(wire.size());
}

void BM_DecodeAndMatch(benchmark::State& state) {
  const std::string wire = Answer(static_cast<int>(state.range(0)));
  nvmlx::attribute::MatchOptions o;
  o.virtual_gpus = true;
  nvmlx::attribute::PodMatcher matcher(EightGpus(), o);
  for (auto _ : state) {
    v1::ListPodResourcesResponse r;
    r.ParseFromString(wire);
    auto a = matcher.Match(nvmlx::attribute::FromProto(r));
    benchmark::DoNotOptimize(a);
  }
  state.counters["pods"] = static_cast<double>(state.range(0));
  state.counters["bytes"] = static_cast<double>(wire.size());
}

BENCHMARK(BM_Decode)->Arg(500)->Arg(1000)->Arg(5000);
BENCHMARK(BM_DecodeAndMatch)->Arg(500)->Arg(1000)->Arg(5000);

}  // namespace

BENCHMARK_MAIN();
