// Cost per collection of --emf-schema container-insights (render/emf_container_insights.h) at
// the size the issue names: 8 GPUs, 500 pods on the node, each pod one container holding one
// time-sliced GPU (about 62 pods per GPU) with one GPU process, the Container Insights fields
// (etc/container-insights.csv), the Node's capacity and every pod's GPU request and limit.
// Baseline, same snapshot, same run: the Prometheus page the daemon renders from it (series
// model + text writer, per-pod families on as with --kubernetes-process-metrics). Reported by
// bench/container_insights.sh, never asserted.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "config/collectors_csv.h"
#include "model/snapshot.h"
#include "plan/field_plan.h"
#include "render/emf_container_insights.h"
#include "render/prometheus.h"
#include "render/series.h"

namespace {

using namespace nvmlx;

constexpr int kGpus = 8;

model::Snapshot MakeSnapshot(int pods) {
  auto rows = config::LoadCollectorsCsv(NVMLX_SOURCE_DIR "/etc/container-insights.csv");
  if (!rows.ok()) {
    std::fprintf(stderr, "%s\n", rows.status().ToString().c_str());
    std::abort();
  }
  model::Snapshot snap;
  snap.plan = plan::FieldPlan::Build(*rows, "bench");
  auto ids = std::make_shared<std::vector<model::DeviceIdentity>>(kGpus);
  snap.identities = ids;
  snap.time = std::chrono::system_clock::now();
  for (int g = 0; g < kGpus; ++g) {
    model::DeviceIdentity& id = (*ids)[g];
    id.index = static_cast<unsigned>(g);
    id.uuid = "GPU-bc2976c1-0000-0000-0000-00000000000" + std::to_string(g);
    id.pci_bus_id = "00000000:0" + std::to_string(g) + ":00.0";
    id.model_name = "NVIDIA A10G";
    model::DeviceSnapshot d;
    d.identity = &id;
    for (const config::CollectorEntry& e : *rows) {
      if (e.type == config::MetricType::kLabel) continue;
      if (e.field->kind == fields::ValueKind::kDouble) {
        d.samples.push_back({e.field->id, 0.25 + 0.01 * g});
      } else {
        d.samples.push_back({e.field->id, int64_t{20000 + g}});
      }
    }
    std::sort(d.samples.begin(), d.samples.end(),
              [](const auto& a, const auto& b) { return a.field_id < b.field_id; });
    snap.devices.push_back(std::move(d));
  }
  auto devices = std::make_shared<model::DeviceAttribution>();
  auto meta = std::make_shared<model::PodMetadata>();
  auto procs = std::make_shared<model::ProcessAttribution>();
  for (int p = 0; p < pods; ++p) {
    const int g = p % kGpus;
    const std::string name = "worker-5f6d7c8b9-" + std::to_string(10000 + p);
    const std::string uid = "00000000-0000-0000-0000-" + std::to_string(100000000000 + p);
    std::string cid = std::to_string(p);
    cid.insert(0, 64 - cid.size(), 'c');
    devices->pods_by_device[(*ids)[g].uuid].push_back(
        {"team-" + std::to_string(p % 20), name, "main", std::to_string(p / kGpus)});
    model::PodMeta m;
    m.namespace_name = "team-" + std::to_string(p % 20);
    m.pod = name;
    m.uid = uid;
    m.labels = {{"app", "worker"}, {"team", m.namespace_name}};
    m.container_names[cid] = "main";
    m.phase = "Running";
    m.containers = 1;
    m.gpu_resources["nvidia.com/gpu"] = {1, 1, 1, 1};
    m.owner_kind = "ReplicaSet";
    m.owner_name = "worker-5f6d7c8b9";
    meta->uid_by_name[m.namespace_name + "/" + name] = uid;
    meta->by_uid[uid] = std::move(m);
    const unsigned pid = 10000 + static_cast<unsigned>(p);
    procs->by_pid[pid] = {uid, cid};
    snap.devices[g].processes.push_back({pid, uint64_t{1} << 28, true, 1, 0});
  }
  snap.attribution.devices = devices;
  snap.attribution.metadata = meta;
  snap.attribution.processes = procs;
  auto node = std::make_shared<model::NodeInfo>();
  node->node_name = "ip-10-0-1-23.ec2.internal";
  node->instance_id = "i-0123456789abcdef0";
  node->instance_type = "g5.48xlarge";
  node->gpu_capacity["nvidia.com/gpu"] = kGpus;
  snap.attribution.node = node;
  return snap;
}

render::ContainerInsightsOptions CiOptions(bool histograms) {
  render::ContainerInsightsOptions o;
  o.cluster_name = "bench-cluster";
  o.node_name = "ip-10-0-1-23.ec2.internal";
  o.pod_shares = true;
  o.histograms = histograms;
  o.histogram_period = std::chrono::hours(24);  // accumulate only: the per-collection cost
  return o;
}

// The baseline: the Prometheus page of the same snapshot, as the daemon makes it.
void BM_PrometheusPage(benchmark::State& state) {
  const model::Snapshot snap = MakeSnapshot(static_cast<int>(state.range(0)));
  render::PrometheusOptions o;
  o.hostname = "ip-10-0-1-23.ec2.internal";
  o.pods.enabled = true;
  o.pods.dcgm_per_pod_series = true;
  render::SeriesModel model;
  std::string out;
  for (auto _ : state) {
    render::BuildSeries(snap, o, &model);
    render::RenderPrometheus(model, &out);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["bytes"] = static_cast<double>(out.size());
}
BENCHMARK(BM_PrometheusPage)->Arg(0)->Arg(500);

// Every document of one collection (Container, Pod and Node GPU events, allocation events).
void BM_ContainerInsights(benchmark::State& state) {
  const model::Snapshot snap = MakeSnapshot(static_cast<int>(state.range(0)));
  render::ContainerInsightsRenderer r(CiOptions(false));
  std::vector<std::string> docs;
  size_t bytes = 0;
  for (auto _ : state) {
    docs.clear();
    r.Render(snap, snap.time, &docs);
    benchmark::DoNotOptimize(docs.data());
  }
  for (const std::string& d : docs) bytes += d.size();
  state.counters["documents"] = static_cast<double>(docs.size());
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_ContainerInsights)->Arg(0)->Arg(500);

// --emf-histograms: a collection inside a period only adds its samples to the distributions.
void BM_ContainerInsightsHistogramSample(benchmark::State& state) {
  const model::Snapshot snap = MakeSnapshot(static_cast<int>(state.range(0)));
  render::ContainerInsightsRenderer r(CiOptions(true));
  std::vector<std::string> docs;
  for (auto _ : state) {
    r.Render(snap, snap.time, &docs);
    benchmark::DoNotOptimize(docs.data());
  }
}
BENCHMARK(BM_ContainerInsightsHistogramSample)->Arg(0)->Arg(500);

}  // namespace

BENCHMARK_MAIN();
