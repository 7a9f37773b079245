#include "switch_bench.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>
#include <utility>

#include "util/cpu_time.h"

namespace nvmlx::pmprobe {
namespace {

double Ms(uint64_t ns) { return double(ns) / 1e6; }

struct Prepared {
  cupti::PmSampler::Options options;
  std::shared_ptr<const cupti::PmHost> host;
};

Result<Prepared> Prepare(const cupti::Library& lib, const SwitchBench& bench,
                         const std::vector<std::string>& metrics) {
  Result<cupti::Config> config = lib.BuildConfig(bench.base.chip, bench.base.availability, metrics);
  if (!config.ok()) return config.status();
  if (config->passes != 1) {
    return InvalidArgument(std::to_string(config->passes) + " passes: PM sampling takes one");
  }
  Result<std::shared_ptr<cupti::PmHost>> host =
      cupti::PmHost::Create(lib, bench.base.chip, bench.base.availability, metrics);
  if (!host.ok()) return host.status();
  Prepared p;
  p.options = bench.base;
  p.options.metrics = metrics;
  p.options.config = std::move(config).value();
  p.options.hardware_buffer_bytes = bench.hardware_buffer_bytes;
  if (&metrics == &bench.second && bench.alternate_buffer_bytes != 0) {
    p.options.hardware_buffer_bytes = bench.alternate_buffer_bytes;
  }
  p.host = std::move(host).value();
  return p;
}

void PrintDecode(cupti::PmSampler* sampler) {
  Result<cupti::PmSampler::Window> w = sampler->Decode();
  if (!w.ok()) {
    std::printf(",decode failed: %s\n", w.status().ToString().c_str());
    return;
  }
  std::printf(",%zu", w->samples);
  for (double m : w->means) std::printf(",%.4g", m);
  std::printf("\n");
}

}  // namespace

int RunSwitchBench(const cupti::Library& lib, const SwitchBench& bench) {
  Result<Prepared> configs[2] = {Prepare(lib, bench, bench.first),
                                 Prepare(lib, bench, bench.second)};
  for (const Result<Prepared>& c : configs) {
    if (!c.ok()) {
      std::fprintf(stderr, "pm-probe: %s\n", c.status().ToString().c_str());
      return 1;
    }
  }
  Result<std::unique_ptr<cupti::PmSampler>> first =
      cupti::PmSampler::Start(lib, configs[0]->options, configs[0]->host);
  if (!first.ok()) {
    std::fprintf(stderr, "pm-probe: %s\n", first.status().ToString().c_str());
    return 1;
  }
  std::unique_ptr<cupti::PmSampler> sampler = std::move(first).value();
  std::printf(
      "mode,switch,config,cpu_teardown_ms,cpu_enable_ms,cpu_stop_ms,cpu_set_config_ms,"
      "cpu_counter_data_ms,cpu_start_ms,cpu_total_ms,wall_ms,samples,means...\n");
  const char* mode = bench.keep_enabled ? "keep" : "restart";
  for (size_t i = 1; i <= bench.switches; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(bench.dwell_ms));
    std::printf("%s,%zu,%zu,,,,,,,,,", mode, i - 1, (i - 1) % 2);
    PrintDecode(sampler.get());  // the dwell's values, before the switch
    const Prepared& next = *configs[i % 2];
    const auto wall0 = std::chrono::steady_clock::now();
    const uint64_t cpu0 = util::ThreadCpuNs();
    uint64_t teardown_ns = 0;
    Status switched = Status::Ok();
    if (bench.keep_enabled) {
      switched = sampler->Reconfigure(next.options, next.host, bench.steps);
    } else {
      sampler.reset();
      teardown_ns = util::ThreadCpuNs() - cpu0;
      Result<std::unique_ptr<cupti::PmSampler>> s =
          cupti::PmSampler::Start(lib, next.options, next.host);
      if (s.ok()) sampler = std::move(s).value();
      switched = s.status();
    }
    const uint64_t cpu_total = util::ThreadCpuNs() - cpu0;
    const double wall =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall0).count();
    if (!switched.ok()) {
      std::fprintf(stderr, "pm-probe: switch %zu: %s\n", i, switched.ToString().c_str());
      return 1;
    }
    const cupti::PmSampler::StartCost& c = sampler->start_cost();
    std::printf("%s,%zu,%zu,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,,\n", mode, i, i % 2,
                Ms(teardown_ns), Ms(c.enable_ns), Ms(c.stop_ns), Ms(c.set_config_ns),
                Ms(c.counter_data_ns), Ms(c.start_ns), Ms(cpu_total), wall);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace nvmlx::pmprobe
