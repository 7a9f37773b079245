// Cost of process/pod attribution (Google Benchmark): parsing a cgroup file, one
// ProcessAttributor pass over the fixture /proc tree (cold: every cgroup read; warm: the
// pid+start-time cache), and rendering the per-pod series for 8 shared GPUs. Reported, never
// asserted.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "attribute/cgroup.h"
#include "attribute/process_attributor.h"
#include "fields/catalog.h"
#include "fields/field_ids.h"
#include "plan/field_plan.h"
#include "render/prometheus.h"

namespace {

using namespace nvmlx;

void BM_ParseCgroupFile(benchmark::State& state) {
  const std::string text =
      "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod8f1c2d3e_4a5b_6c7d_8e9f_"
      "0a1b2c3d4e5f.slice/cri-containerd-"
      "3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a.scope\n";
  for (auto _ : state) benchmark::DoNotOptimize(attribute::ParseCgroupFile(text));
}
BENCHMARK(BM_ParseCgroupFile);

model::Snapshot FixturePids() {
  model::Snapshot s;
  model::DeviceSnapshot d;
  for (unsigned pid : {4101u, 4102u, 4201u, 4301u, 4401u, 5101u, 5102u}) {
    d.processes.push_back({pid, 0, false, 0, 0});
  }
  s.devices.push_back(d);
  return s;
}

void BM_AttributorPassCold(benchmark::State& state) {
  const model::Snapshot snap = FixturePids();
  for (auto _ : state) {
    attribute::ProcessAttributor a({NVMLX_SOURCE_DIR "/testdata/proc", nullptr});
    a.Observe(snap);
    a.ResolveNow();
  }
  state.counters["pids"] = 7;
}
BENCHMARK(BM_AttributorPassCold);

void BM_AttributorPassWarm(benchmark::State& state) {
  const model::Snapshot snap = FixturePids();
  attribute::ProcessAttributor a({NVMLX_SOURCE_DIR "/testdata/proc", nullptr});
  a.Observe(snap);
  a.ResolveNow();
  for (auto _ : state) a.ResolveNow();
  state.counters["pids"] = 7;
}
BENCHMARK(BM_AttributorPassWarm);

// 8 GPUs, each shared by 4 pods with 2 processes each; GPU_UTIL and FB_USED enabled.
void BM_RenderPerPod(benchmark::State& state) {
  const bool pods_on = state.range(0) != 0;
  auto ids = std::make_shared<std::vector<model::DeviceIdentity>>(8);
  model::Snapshot snap;
  snap.identities = ids;
  auto procs = std::make_shared<model::ProcessAttribution>();
  auto md = std::make_shared<model::PodMetadata>();
  unsigned pid = 1000;
  for (unsigned g = 0; g < 8; ++g) {
    (*ids)[g].index = g;
    (*ids)[g].uuid = "GPU-" + std::to_string(g);
    (*ids)[g].model_name = "NVIDIA H200";
    (*ids)[g].pci_bus_id = "00000000:0" + std::to_string(g) + ":00.0";
    model::DeviceSnapshot d;
    d.identity = &(*ids)[g];
    d.samples = {{fields::ids::kGpuUtil, int64_t{90}}, {fields::ids::kFbUsed, int64_t{30000}}};
    for (unsigned p = 0; p < 4; ++p) {
      const std::string uid = "uid-" + std::to_string(g) + "-" + std::to_string(p);
      const std::string cid(64, static_cast<char>('a' + p));
      md->by_uid[uid] = {"ns", "pod-" + uid, uid, {{"team", "x"}}, {{cid, "main"}}};
      for (unsigned k = 0; k < 2; ++k, ++pid) {
        d.processes.push_back({pid, 1ull << 30, true, 10, 2});
        procs->by_pid[pid] = {uid, cid};
      }
    }
    snap.devices.push_back(d);
  }
  snap.attribution.processes = procs;
  snap.attribution.metadata = md;
  render::PrometheusOptions o;
  std::vector<config::CollectorEntry> rows;
  for (const char* name : {"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED"}) {
    config::CollectorEntry e;
    e.field = fields::FindByName(name);
    e.name = name;
    rows.push_back(e);
  }
  snap.plan = plan::FieldPlan::Build(std::move(rows), "bench");
  o.hostname = "node1";
  o.pods.enabled = pods_on;
  o.pods.dcgm_per_pod_series = pods_on;
  std::string out;
  for (auto _ : state) {
    render::RenderPrometheus(snap, o, &out);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["bytes"] = static_cast<double>(out.size());
}
BENCHMARK(BM_RenderPerPod)->Arg(0)->Arg(1);

}  // namespace

BENCHMARK_MAIN();
