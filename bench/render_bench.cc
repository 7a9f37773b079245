// Rendering cost per series (Google Benchmark). Baseline in the same binary: a naive renderer
// of the same series through std::ostringstream with a per-series label rebuild — the shape of
// dcgm-exporter's text/template path. bench/run.sh reports the ratio. BM_RenderPrometheus is the
// whole Snapshot -> page step as the daemon runs it (series model, reused, + text writer);
// BM_BuildSeries and
// BM_WritePrometheus are its two halves. The EMF renderer is
// measured on the same snapshots (every metric selected, and the built-in selection), next to
// the Prometheus renderer, per series and per document.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "config/collectors_csv.h"
#include "fields/catalog.h"
#include "fields/field_roles.h"
#include "model/snapshot.h"
#include "plan/field_plan.h"
#include "render/emf.h"
#include "render/prometheus.h"
#include "render/series.h"

namespace {

using nvmlx::model::DeviceIdentity;
using nvmlx::model::DeviceSnapshot;
using nvmlx::model::Snapshot;

struct Fixture {
  std::vector<nvmlx::config::CollectorEntry> entries;  // the rows the daemon would collect
  nvmlx::render::PrometheusOptions options;
  Snapshot snapshot;
  size_t series = 0;
};

Fixture MakeFixture(int gpus) {
  Fixture fx;
  auto rows = nvmlx::config::LoadCollectorsCsv(NVMLX_SOURCE_DIR "/etc/dcp-metrics-included.csv");
  if (!rows.ok()) {
    std::fprintf(stderr, "%s\n", rows.status().ToString().c_str());
    std::abort();
  }
  for (auto& r : *rows) {
    if ((r.field->source == nvmlx::fields::Source::kDevice ||
         r.type == nvmlx::config::MetricType::kLabel ||
         r.field->source == nvmlx::fields::Source::kProfiling) &&
        nvmlx::fields::UncollectedReason(*r.field, r.type == nvmlx::config::MetricType::kLabel)
            .empty()) {
      fx.entries.push_back(r);
    }
  }
  fx.snapshot.plan = nvmlx::plan::FieldPlan::Build(fx.entries, "bench");
  fx.options.hostname = "gpu-node-17";
  fx.options.build = {"0.1.0", "bench", "/usr/lib/libnvidia-ml.so.1", "580.159.04"};
  auto ids = std::make_shared<std::vector<DeviceIdentity>>();
  for (int g = 0; g < gpus; ++g) {
    DeviceIdentity id;
    id.index = g;
    id.uuid = "GPU-bc2976c1-0000-0000-0000-00000000000" + std::to_string(g);
    id.pci_bus_id = "00000000:0" + std::to_string(g) + ":00.0";
    id.model_name = "NVIDIA H200";
    id.label_values = {{1, "580.159.04"}};
    ids->push_back(id);
  }
  fx.snapshot.identities = ids;
  fx.snapshot.time = std::chrono::system_clock::now();
  for (int g = 0; g < gpus; ++g) {
    DeviceSnapshot d;
    d.identity = &(*ids)[g];
    for (const auto& e : fx.entries) {
      if (e.type == nvmlx::config::MetricType::kLabel) continue;
      if (e.field->kind == nvmlx::fields::ValueKind::kDouble) {
        d.samples.push_back({e.field->id, 0.5 + g});
      } else {
        d.samples.push_back({e.field->id, int64_t{1000 + g}});
      }
      ++fx.series;
    }
    std::sort(d.samples.begin(), d.samples.end(),
              [](const auto& a, const auto& b) { return a.field_id < b.field_id; });
    fx.snapshot.devices.push_back(std::move(d));
  }
  return fx;
}

void BM_RenderPrometheus(benchmark::State& state) {
  Fixture fx = MakeFixture(static_cast<int>(state.range(0)));
  std::string out;
  // The daemon's path (app/daemon.cc): one SeriesModel kept across collections, rebuilt from
  // each snapshot, then written.
  nvmlx::render::SeriesModel model;
  for (auto _ : state) {
    nvmlx::render::BuildSeries(fx.snapshot, fx.options, &model);
    nvmlx::render::RenderPrometheus(model, &out);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["series"] = static_cast<double>(fx.series);
  state.counters["bytes"] = static_cast<double>(out.size());
}
BENCHMARK(BM_RenderPrometheus)->Arg(1)->Arg(8)->Arg(64);

nvmlx::render::SeriesOptions SeriesFor(const Fixture& fx) {
  nvmlx::render::SeriesOptions s;
  s.hostname = fx.options.hostname;
  return s;
}

nvmlx::render::EmfOptions EmfBenchOptions() {
  nvmlx::render::EmfOptions o;
  o.log_group_name = "/aws/containerinsights/bench/prometheus";
  o.counters_as_delta = false;
  o.extra_labels = {{"ClusterName", "bench"},
                    {"NodeName", "gpu-node-17"},
                    {"Service", "nvidia-dcgm-exporter"},
                    {"job", "kubernetes-pod-dcgm-exporter"}};
  return o;
}

// Every metric selected: the same series as the Prometheus page, one directive per label set.
nvmlx::render::EmfRules SelectAll() {
  auto rules = nvmlx::render::ParseEmfRules(
      "metric_declaration: [{source_labels: [gpu], dimensions: [[ClusterName, NodeName, gpu]], "
      "metric_selectors: ['.*']}]",
      "bench", nullptr);
  if (!rules.ok()) std::abort();
  return *rules;
}

void RunEmf(benchmark::State& state, nvmlx::render::EmfRules rules) {
  Fixture fx = MakeFixture(static_cast<int>(state.range(0)));
  nvmlx::render::EmfRenderer r(std::move(rules), EmfBenchOptions());
  const nvmlx::render::SeriesOptions series = SeriesFor(fx);
  nvmlx::render::SeriesModel model;
  std::vector<std::string> docs;
  size_t bytes = 0, metrics = 0;
  for (auto _ : state) {
    // Builds the model too, as this benchmark measured before the model was shared.
    docs.clear();
    nvmlx::render::BuildSeries(fx.snapshot, series, &model);
    r.Render(model, fx.snapshot.time, &docs);
    benchmark::DoNotOptimize(docs.data());
  }
  for (const auto& d : docs) {
    bytes += d.size();
    for (size_t at = d.find("{\"Name\":"); at != std::string::npos;
         at = d.find("{\"Name\":", at + 1)) {
      ++metrics;
    }
  }
  state.counters["series"] = static_cast<double>(metrics);  // metrics sent per render
  state.counters["documents"] = static_cast<double>(docs.size());
  state.counters["bytes"] = static_cast<double>(bytes);
}

void BM_RenderEmfAll(benchmark::State& state) { RunEmf(state, SelectAll()); }
BENCHMARK(BM_RenderEmfAll)->Arg(1)->Arg(8)->Arg(64);

void BM_RenderEmfDefaultRules(benchmark::State& state) {
  RunEmf(state, nvmlx::render::DefaultEmfRules(true));
}
BENCHMARK(BM_RenderEmfDefaultRules)->Arg(1)->Arg(8)->Arg(64);

// The shared series step alone (part of every render), into a reused model as the daemon does.
void BM_BuildSeries(benchmark::State& state) {
  Fixture fx = MakeFixture(static_cast<int>(state.range(0)));
  nvmlx::render::SeriesModel model;
  for (auto _ : state) {
    nvmlx::render::BuildSeries(fx.snapshot, fx.options, &model);
    benchmark::DoNotOptimize(model.families.data());
  }
  state.counters["series"] = static_cast<double>(fx.series);
}
BENCHMARK(BM_BuildSeries)->Arg(1)->Arg(8)->Arg(64);

// The Prometheus text writer alone, from a built model.
void BM_WritePrometheus(benchmark::State& state) {
  Fixture fx = MakeFixture(static_cast<int>(state.range(0)));
  nvmlx::render::SeriesModel model;
  nvmlx::render::BuildSeries(fx.snapshot, fx.options, &model);
  std::string out;
  for (auto _ : state) {
    nvmlx::render::RenderPrometheus(model, &out);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["series"] = static_cast<double>(fx.series);
}
BENCHMARK(BM_WritePrometheus)->Arg(1)->Arg(8)->Arg(64);

void BM_NaiveOstreamRender(benchmark::State& state) {
  Fixture fx = MakeFixture(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    std::ostringstream os;
    for (const auto& e : fx.entries) {
      if (e.type == nvmlx::config::MetricType::kLabel) continue;
      os << "# HELP " << e.name << " " << e.help << "\n# TYPE " << e.name << " gauge\n";
      for (const auto& d : fx.snapshot.devices) {
        for (const auto& s : d.samples) {
          if (s.field_id != e.field->id) continue;
          std::ostringstream labels;
          labels << "gpu=\"" << d.identity->index << "\",UUID=\"" << d.identity->uuid
                 << "\",pci_bus_id=\"" << d.identity->pci_bus_id << "\",device=\"nvidia"
                 << d.identity->index << "\",modelName=\"" << d.identity->model_name
                 << "\",Hostname=\"" << fx.options.hostname << "\",DCGM_FI_DRIVER_VERSION=\""
                 << d.identity->label_values[0].second << "\"";
          os << e.name << "{" << labels.str() << "} ";
          if (const auto* i = std::get_if<int64_t>(&s.value)) {
            os << *i;
          } else {
            char buf[64];
            std::snprintf(buf, sizeof(buf), "%f", std::get<double>(s.value));
            os << buf;
          }
          os << "\n";
        }
      }
    }
    std::string out = os.str();
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["series"] = static_cast<double>(fx.series);
}
BENCHMARK(BM_NaiveOstreamRender)->Arg(1)->Arg(8)->Arg(64);

}  // namespace

BENCHMARK_MAIN();
