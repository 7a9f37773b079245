// nvml_floor: the NVML floor of a collectors file. It makes the raw NVML calls behind the file's
// DEV fields, and one GPM sample (plus the one metrics call that turns two samples into values)
// per GPU when the file has PROF fields, in a loop, and prints the CPU and wall time per sweep as
// one JSON line. It is the baseline the daemon's CPU per collection is compared with
// (bench/gpu.sh, bench/collect_overhead.sh): whatever the daemon spends above it is our own.
//
// The catalog (fields/) only decides which call a field needs; the loop is the minimal sequence:
// per GPU one nvmlDeviceGetFieldValues with every distinct (field id, scope) of the batched
// fields, then each dedicated call once (fields that share a call, such as FB_FREE/USED/TOTAL,
// share it through the per-sweep ReadContext memo), then the GPM sample. No threads, no
// snapshot, no render, no Xid events, no health reads, no clock-event bitmask: only what the
// DEV and PROF rows themselves need. NVML is dlopen()ed through nvml::Library, as the daemon
// does, so the simulated GPUs (tools/simgpu) and a real driver both work.
//
// Usage: nvml_floor -f FILE.csv [-n SWEEPS] [-c INTERVAL_MS] [--nvml-library PATH]
//                   [--no-gpm] [--breakdown] [--split]
//   -c: sleep so that sweeps start every INTERVAL_MS (as the daemon's -c); 0 (default): back to
//       back. --breakdown: per call kind, the CPU of this thread per sweep (µs), in the JSON.
//   --split: the kSlow batched fields (fields/catalog.h) in a second nvmlDeviceGetFieldValues,
//       as the daemon's slow reader makes it: the floor of the daemon's own call pattern (its one
//       call more per GPU and collection is what bench/nvml_calls.sh finds beside this floor).
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "config/collectors_csv.h"
#include "fields/catalog.h"
#include "nvml/nvml.h"
#include "util/cpu_time.h"

namespace {

using nvmlx::fields::FieldDef;
using nvmlx::fields::Source;

double ProcessCpuMs() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
         (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}

long RssKib() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  long kib = -1;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::sscanf(line, "VmRSS: %ld", &kib) == 1) break;
  }
  std::fclose(f);
  return kib;
}

// What one GPU's sweep calls.
struct Gpu {
  nvmlx::nvml::Device handle = nullptr;
  std::vector<nvmlFieldValue_t> request;  // distinct (fieldId, scopeId)
  std::vector<nvmlFieldValue_t> slow_request;  // --split: the kSlow fields' own call
  std::vector<const FieldDef*> dedicated;
  bool gpm = false;
  nvmlx::nvml::GpmSample samples[2];
  int current = 0;
  bool primed = false;
};

void AddSlot(std::vector<nvmlFieldValue_t>* request, unsigned field_id, unsigned scope) {
  for (const nvmlFieldValue_t& fv : *request) {
    if (fv.fieldId == field_id && fv.scopeId == scope) return;
  }
  nvmlFieldValue_t fv{};
  fv.fieldId = field_id;
  fv.scopeId = scope;
  request->push_back(fv);
}

int Usage(const char* why) {
  std::fprintf(stderr,
               "nvml_floor: %s\nusage: nvml_floor -f FILE.csv [-n SWEEPS] [-c INTERVAL_MS] "
               "[--nvml-library PATH] [--no-gpm] [--breakdown] [--split]\n",
               why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string csv;
  std::string library = "libnvidia-ml.so.1";
  long sweeps = 100;
  long interval_ms = 0;
  bool want_gpm = true;
  bool breakdown = false;
  bool split = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (a == "-f" && (v = next())) {
      csv = v;
    } else if (a == "-n" && (v = next())) {
      sweeps = std::strtol(v, nullptr, 10);
    } else if (a == "-c" && (v = next())) {
      interval_ms = std::strtol(v, nullptr, 10);
    } else if (a == "--nvml-library" && (v = next())) {
      library = v;
    } else if (a == "--split") {
      split = true;
    } else if (a == "--no-gpm") {
      want_gpm = false;
    } else if (a == "--breakdown") {
      breakdown = true;
    } else {
      return Usage(("unknown or incomplete argument: " + a).c_str());
    }
  }
  if (csv.empty()) return Usage("-f FILE.csv is required");
  if (sweeps < 1 || interval_ms < 0) return Usage("-n must be >= 1 and -c >= 0");

  auto entries = nvmlx::config::LoadCollectorsCsv(csv);
  if (!entries.ok()) {
    std::fprintf(stderr, "nvml_floor: %s\n", entries.status().ToString().c_str());
    return 2;
  }
  // The fields, once each (a file may name one field twice under two names).
  std::vector<const FieldDef*> batched, dedicated;
  std::vector<unsigned> gpm_ids;
  for (const auto& e : *entries) {
    const FieldDef* f = e.field;
    if (f == nullptr || !f->skip_reason.empty()) continue;
    if (f->source == Source::kDevice && f->nvml_field_id > 0 && f->convert != nullptr) {
      if (std::find(batched.begin(), batched.end(), f) == batched.end()) batched.push_back(f);
    } else if (f->source == Source::kDevice && f->read != nullptr) {
      if (std::find(dedicated.begin(), dedicated.end(), f) == dedicated.end()) {
        dedicated.push_back(f);
      }
    } else if (f->source == Source::kProfiling && f->gpm_metric_id > 0 && want_gpm) {
      if (std::find(gpm_ids.begin(), gpm_ids.end(), f->gpm_metric_id) == gpm_ids.end()) {
        gpm_ids.push_back(f->gpm_metric_id);
      }
    }
  }
  std::sort(gpm_ids.begin(), gpm_ids.end());

  const long rss_before = RssKib();
  auto loaded = nvmlx::nvml::Library::Load(library);
  if (!loaded.ok()) {
    std::fprintf(stderr, "nvml_floor: %s\n", loaded.status().ToString().c_str());
    return 1;
  }
  const nvmlx::nvml::Library& lib = **loaded;
  const long rss_init = RssKib();
  auto count = lib.DeviceCount();
  if (!count.ok()) {
    std::fprintf(stderr, "nvml_floor: %s\n", count.status().ToString().c_str());
    return 1;
  }
  std::vector<Gpu> gpus(*count);
  size_t gpm_gpus = 0;
  for (unsigned i = 0; i < *count; ++i) {
    Gpu& g = gpus[i];
    auto h = lib.DeviceByIndex(i);
    if (!h.ok()) {
      std::fprintf(stderr, "nvml_floor: GPU %u: %s\n", i, h.status().ToString().c_str());
      return 1;
    }
    g.handle = *h;
    for (const FieldDef* f : batched) {
      std::vector<nvmlFieldValue_t>* r =
          split && f->cost == nvmlx::fields::Cost::kSlow ? &g.slow_request : &g.request;
      AddSlot(r, f->nvml_field_id, f->nvml_scope_id);
      if (f->rate_partner_field_id > 0) AddSlot(r, f->rate_partner_field_id, f->nvml_scope_id);
    }
    g.dedicated = dedicated;
    if (!gpm_ids.empty()) {
      auto supported = lib.GpmSupported(g.handle);
      if (supported.ok() && *supported) {
        auto a = lib.GpmSampleAlloc();
        auto b = lib.GpmSampleAlloc();
        if (a.ok() && b.ok()) {
          g.samples[0] = std::move(a).value();
          g.samples[1] = std::move(b).value();
          g.gpm = true;
          ++gpm_gpus;
        }
      }
    }
  }

  // Per call kind: this thread's CPU, summed over the sweeps (only with --breakdown, whose own
  // clock reads are then part of the total).
  std::map<std::string, double> cost_us;
  size_t failed_calls = 0;
  auto timed = [&](const std::string& kind, auto&& fn) {
    if (!breakdown) return fn();
    const uint64_t t0 = nvmlx::util::ThreadCpuNs();
    auto r = fn();
    cost_us[kind] += double(nvmlx::util::ThreadCpuNs() - t0) / 1e3;
    return r;
  };
  std::vector<nvmlFieldValue_t> values;
  auto sweep = [&] {
    for (Gpu& g : gpus) {
      if (!g.request.empty()) {
        values = g.request;
        nvmlx::Status st = timed("nvmlDeviceGetFieldValues", [&] {
          return lib.FieldValues(g.handle, values.data(), static_cast<int>(values.size()));
        });
        if (!st.ok()) ++failed_calls;
      }
      if (!g.slow_request.empty()) {
        values = g.slow_request;
        nvmlx::Status st = timed("nvmlDeviceGetFieldValues (slow fields)", [&] {
          return lib.FieldValues(g.handle, values.data(), static_cast<int>(values.size()));
        });
        if (!st.ok()) ++failed_calls;
      }
      nvmlx::fields::ReadContext ctx{lib,          g.handle,     std::nullopt,
                                     std::nullopt, std::nullopt, std::nullopt};
      for (const FieldDef* f : g.dedicated) {
        auto v = timed(std::string(f->name), [&] { return f->read(ctx); });
        if (!v.ok()) ++failed_calls;
      }
      if (g.gpm) {
        const int next = g.primed ? 1 - g.current : g.current;
        nvmlx::Status st =
            timed("nvmlGpmSampleGet", [&] { return lib.GpmSampleGet(g.handle, g.samples[next]); });
        if (!st.ok()) {
          ++failed_calls;
        } else if (!g.primed) {
          g.primed = true;
        } else {
          for (size_t b = 0; b < gpm_ids.size(); b += nvmlx::nvml::kGpmMaxMetricsPerCall) {
            const size_t n = std::min(nvmlx::nvml::kGpmMaxMetricsPerCall, gpm_ids.size() - b);
            auto m = timed("nvmlGpmMetricsGet", [&] {
              return lib.GpmMetricsGet(g.samples[g.current], g.samples[next],
                                       std::span<const unsigned>(gpm_ids.data() + b, n));
            });
            if (!m.ok()) ++failed_calls;
          }
          g.current = next;
        }
      }
    }
  };

  sweep();  // warm-up: first calls fault pages in, GPM's priming sample
  cost_us.clear();
  failed_calls = 0;
  const double cpu0 = ProcessCpuMs();
  const auto wall0 = std::chrono::steady_clock::now();
  double busy_wall_ms = 0;
  auto next_start = wall0;
  for (long s = 0; s < sweeps; ++s) {
    if (interval_ms > 0) {
      std::this_thread::sleep_until(next_start);
      next_start += std::chrono::milliseconds(interval_ms);
    }
    const auto t0 = std::chrono::steady_clock::now();
    sweep();
    busy_wall_ms +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  const double cpu_ms = ProcessCpuMs() - cpu0;
  const double total_wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall0).count();

  std::printf(
      "{\"tool\":\"nvml_floor\",\"csv\":\"%s\",\"gpus\":%zu,\"gpm_gpus\":%zu,\"sweeps\":%ld,"
      "\"interval_ms\":%ld,\"split\":%s,\"batched_values\":%zu,\"slow_batched_values\":%zu,"
      "\"dedicated_fields\":%zu,\"gpm_metrics\":%zu,"
      "\"cpu_ms_per_sweep\":%.4f,\"wall_ms_per_sweep\":%.4f,\"total_wall_ms\":%.1f,"
      "\"failed_calls_per_sweep\":%.2f,\"rss_before_init_kib\":%ld,\"rss_after_init_kib\":%ld,"
      "\"rss_end_kib\":%ld",
      csv.c_str(), gpus.size(), gpm_gpus, sweeps, interval_ms, split ? "true" : "false",
      gpus.empty() ? size_t{0} : gpus[0].request.size(),
      gpus.empty() ? size_t{0} : gpus[0].slow_request.size(), dedicated.size(), gpm_ids.size(),
      cpu_ms / sweeps, busy_wall_ms / sweeps, total_wall_ms,
      static_cast<double>(failed_calls) / sweeps, rss_before, rss_init, RssKib());
  if (breakdown) {
    std::printf(",\"thread_cpu_us_per_sweep\":{");
    bool first = true;
    for (const auto& [kind, us] : cost_us) {
      std::printf("%s\"%s\":%.2f", first ? "" : ",", kind.c_str(), us / sweeps);
      first = false;
    }
    std::printf("}");
  }
  std::printf("}\n");
  return 0;
}
