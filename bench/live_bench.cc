// The live page's per-collection and per-request costs, and the history's memory against its
// bound (docs/live-page.md): bench/run.sh writes the "Live page" section of docs/benchmarks.md.
//
//  - BM_HistoryMemory/<gpus>: fills a 15-minute history at a 1 s interval twice over (every ring
//    wrapped) and reports the heap the history holds (glibc mallinfo2, before and after) against
//    its bound, gpus * History::BytesPerDevice(): counters heap_bytes, bound_bytes, ratio.
//  - BM_HistoryAdd/<gpus>: one snapshot into a full history (collector thread, per collection).
//  - BM_SnapshotJson/<gpus>: the snapshot document (collector thread, per collection), against
//    BM_PrometheusPage/<gpus>, the /metrics page of the same snapshot (the baseline).
//  - BM_HistoryRequest/<gpus>: one /api/v1/history?minutes=15 answer (copy + JSON, per request);
//    BM_HistoryPoll/<gpus>: the page's poll, ?since= its newest point (one new point per GPU).
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <memory>
#include <string>
#include <vector>

#include "config/collectors_csv.h"
#include "live/history.h"
#include "live/live_json.h"
#include "plan/field_plan.h"
#include "render/prometheus.h"

namespace {

using namespace nvmlx;
using std::chrono::milliseconds;

struct Fixture {
  std::shared_ptr<std::vector<model::DeviceIdentity>> ids =
      std::make_shared<std::vector<model::DeviceIdentity>>();
  explicit Fixture(int gpus) {
    for (int i = 0; i < gpus; ++i) {
      model::DeviceIdentity id;
      id.index = static_cast<unsigned>(i);
      id.uuid = "GPU-11111111-2222-3333-4444-" + std::to_string(100000000000 + i);
      id.pci_bus_id = "00000000:0" + std::to_string(i) + ":00.0";
      id.model_name = "NVIDIA H200";
      id.label_values = {{1, "580.159.04"}};
      ids->push_back(id);
    }
  }
  // The default CSV's numeric fields, with the six the history keeps among them.
  model::Snapshot At(int64_t t_ms) const {
    model::Snapshot s;
    s.time = std::chrono::system_clock::time_point(milliseconds(t_ms));
    s.identities = ids;
    for (const model::DeviceIdentity& id : *ids) {
      model::DeviceSnapshot d;
      d.identity = &id;
      for (int f : {100, 101, 140, 150, 155, 156,  202,  203,  204,  206,
                    207, 230, 251, 252, 253, 1001, 1004, 1005, 1009, 1010}) {
        if (f == 155 || f >= 1000) {
          d.samples.push_back({f, 0.5 + static_cast<double>(t_ms % 97)});
        } else {
          d.samples.push_back({f, int64_t{t_ms % 101}});
        }
      }
      s.devices.push_back(std::move(d));
    }
    return s;
  }
};

constexpr milliseconds kInterval{1000};
constexpr int kMinutes = 15;

void BM_HistoryMemory(benchmark::State& state) {
  const int gpus = static_cast<int>(state.range(0));
  Fixture f(gpus);
  std::vector<model::Snapshot> snaps;
  for (int i = 0; i < 4; ++i) snaps.push_back(f.At(i));
  std::size_t heap = 0, bound = 0, held = 0;
  for (auto _ : state) {
    const std::size_t before = mallinfo2().uordblks;
    auto h = std::make_unique<live::History>(
        live::HistoryOptions{.minutes = kMinutes, .interval = kInterval});
    const int n = static_cast<int>(2 * h->Capacity());
    for (int i = 0; i < n; ++i) {
      model::Snapshot& s = snaps[static_cast<std::size_t>(i) % snaps.size()];
      s.time = std::chrono::system_clock::time_point(milliseconds(int64_t{1000} * i));
      h->Add(s);
    }
    heap = mallinfo2().uordblks - before;
    bound = static_cast<std::size_t>(gpus) * h->BytesPerDevice();
    held = h->BytesHeld();
    benchmark::DoNotOptimize(h);
  }
  state.counters["heap_bytes"] = static_cast<double>(heap);
  state.counters["bound_bytes"] = static_cast<double>(bound);
  state.counters["held_bytes"] = static_cast<double>(held);
  state.counters["ratio"] = static_cast<double>(heap) / static_cast<double>(bound);
  state.counters["bytes_per_gpu"] = static_cast<double>(bound) / gpus;
}
BENCHMARK(BM_HistoryMemory)->Arg(1)->Arg(8)->Arg(64)->Iterations(1)->Unit(benchmark::kMillisecond);

std::unique_ptr<live::History> Full(const Fixture& f) {
  auto h = std::make_unique<live::History>(
      live::HistoryOptions{.minutes = kMinutes, .interval = kInterval});
  model::Snapshot s = f.At(0);
  for (int i = 0; i < static_cast<int>(h->Capacity()); ++i) {
    s.time = std::chrono::system_clock::time_point(milliseconds(int64_t{1000} * i));
    h->Add(s);
  }
  return h;
}

void BM_HistoryAdd(benchmark::State& state) {
  Fixture f(static_cast<int>(state.range(0)));
  auto h = Full(f);
  model::Snapshot s = f.At(5);
  int64_t t = 10000000;
  for (auto _ : state) {
    s.time = std::chrono::system_clock::time_point(milliseconds(t += 1000));
    h->Add(s);
  }
}
BENCHMARK(BM_HistoryAdd)->Arg(1)->Arg(8);

void BM_SnapshotJson(benchmark::State& state) {
  Fixture f(static_cast<int>(state.range(0)));
  model::Snapshot s = f.At(5);
  live::SnapshotJsonOptions o{"node1", kInterval, "0.1.0"};
  for (auto _ : state) benchmark::DoNotOptimize(live::RenderSnapshotPrefix(s, o));
}
BENCHMARK(BM_SnapshotJson)->Arg(1)->Arg(8);

void BM_PrometheusPage(benchmark::State& state) {
  Fixture f(static_cast<int>(state.range(0)));
  model::Snapshot s = f.At(5);
  render::PrometheusOptions o;
  o.hostname = "node1";
  auto rows = config::LoadCollectorsCsv(NVMLX_SOURCE_DIR "/etc/default-counters.csv");
  if (!rows.ok()) {
    state.SkipWithError(rows.status().message().c_str());
    return;
  }
  std::vector<config::CollectorEntry> kept;
  for (auto& r : *rows) {
    if (r.field->source == fields::Source::kDevice || r.type == config::MetricType::kLabel ||
        r.field->source == fields::Source::kProfiling) {
      kept.push_back(r);
    }
  }
  s.plan = plan::FieldPlan::Build(std::move(kept), "bench");
  std::string body;
  for (auto _ : state) {
    body.clear();
    render::RenderPrometheus(s, o, &body);
    benchmark::DoNotOptimize(body);
  }
}
BENCHMARK(BM_PrometheusPage)->Arg(1)->Arg(8);

void BM_HistoryRequest(benchmark::State& state) {
  Fixture f(static_cast<int>(state.range(0)));
  auto h = Full(f);
  std::size_t bytes = 0;
  for (auto _ : state) {
    std::string body = live::RenderHistory(
        h->Query(kMinutes), {kMinutes, std::nullopt, kMinutes, kInterval, h->BytesPerDevice()});
    bytes = body.size();
    benchmark::DoNotOptimize(body);
  }
  state.counters["body_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_HistoryRequest)->Arg(1)->Arg(8)->Unit(benchmark::kMillisecond);

// The page's poll: ?since=<its newest point>, one new point per GPU.
void BM_HistoryPoll(benchmark::State& state) {
  Fixture f(static_cast<int>(state.range(0)));
  auto h = Full(f);
  const int64_t since = (static_cast<int64_t>(h->Capacity()) - 2) * 1000;
  for (auto _ : state) {
    benchmark::DoNotOptimize(live::RenderHistory(
        h->Query(kMinutes, since), {kMinutes, since, kMinutes, kInterval, h->BytesPerDevice()}));
  }
}
BENCHMARK(BM_HistoryPoll)->Arg(1)->Arg(8);

}  // namespace

BENCHMARK_MAIN();
