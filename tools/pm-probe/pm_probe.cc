// pm-probe: prints every PM sample CUPTI delivers for a list of metrics on one GPU, one line per
// sample, so that what the exporter averages (docs/pm-sampling.md) can be looked at raw on a real
// GPU. It goes through the exporter's own loader and session (cupti/cupti.h).
//
//   pm-probe --cupti PATH [--device N] [--interval-ms 500] [--decode-ms 1000] [--seconds 20]
//            [--max-samples 64] [--fresh-image] METRIC...
//   pm-probe --cupti PATH [--device N] --switch N --other METRIC[,METRIC...] [--keep]
//            [--dwell-ms 2000] [--hw-buffer-kib 4096] METRIC...   (switch_bench.h)
//
// --fresh-image re-initialises the counter-data image after every decode, as the first
// implementation did (PmSampler::Options::fresh_image_each_decode).
//
// Metrics the chip does not know are reported and left out; metrics are then dropped from the
// end until the configuration fits one pass (PM sampling accepts one). Output (stdout, CSV):
// decode,t_ms,sample,start_ms,dur_ms,<metric>... with times relative to the first sample.
#include <dlfcn.h>
#include <malloc.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "chip_plan.h"
#include "cupti/cupti.h"
#include "switch_bench.h"
#include "util/cpu_time.h"

namespace {

// VmRSS, RssAnon and RssFile of this process, to stderr: which step of the setup costs the memory.
void PrintRss(const char* stage) {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return;
  char line[256];
  std::string out;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    const std::string l = line;
    if (l.rfind("VmRSS:", 0) == 0 || l.rfind("RssAnon:", 0) == 0 || l.rfind("RssFile:", 0) == 0) {
      out += " " + l.substr(0, l.size() - 1);
    }
  }
  std::fclose(f);
  std::fprintf(stderr, "pm-probe: rss %s:%s\n", stage, out.c_str());
}

int Usage() {
  std::fprintf(stderr,
               "usage: pm-probe --cupti PATH [--device N] [--interval-ms MS] [--decode-ms MS] "
               "[--seconds S] [--max-samples N] [--fresh-image] METRIC...\n"
               "       pm-probe --cupti PATH --chip NAME [METRIC...]   (no GPU needed)\n"
               "       pm-probe --cupti PATH [--device N] --switch N --other M[,M...] [--keep] "
               "[--dwell-ms MS] [--hw-buffer-kib K] METRIC...\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string cupti_path;
  size_t device = 0;
  long interval_ms = 500, decode_ms = 1000, seconds = 20, max_samples = 64;
  bool fresh_image = false;
  std::string chip_only;  // --chip: the host API's view of a chip, no GPU (chip_plan.h)
  std::vector<std::string> metrics;
  nvmlx::pmprobe::SwitchBench bench;
  long ctx_flags = -1;
  bool retain_ctx = false;
  bench.switches = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (a == "--cupti" && (v = value())) {
      cupti_path = v;
    } else if (a == "--device" && (v = value())) {
      device = std::strtoul(v, nullptr, 10);
    } else if (a == "--interval-ms" && (v = value())) {
      interval_ms = std::strtol(v, nullptr, 10);
    } else if (a == "--decode-ms" && (v = value())) {
      decode_ms = std::strtol(v, nullptr, 10);
    } else if (a == "--fresh-image") {
      fresh_image = true;
    } else if (a == "--max-samples" && (v = value())) {
      max_samples = std::strtol(v, nullptr, 10);
    } else if (a == "--seconds" && (v = value())) {
      seconds = std::strtol(v, nullptr, 10);
    } else if (a == "--switch" && (v = value())) {
      bench.switches = std::strtoul(v, nullptr, 10);
    } else if (a == "--other" && (v = value())) {
      for (std::string rest = v; !rest.empty();) {
        const size_t comma = rest.find(',');
        bench.second.push_back(rest.substr(0, comma));
        rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
      }
    } else if (a == "--keep") {
      bench.keep_enabled = true;
    } else if (a == "--ctx-flags" && (v = value())) {
      ctx_flags = std::strtol(v, nullptr, 10);
    } else if (a == "--retain-ctx") {
      retain_ctx = true;
    } else if (a == "--keep-drain") {
      bench.keep_enabled = true;
      bench.steps.decode_before_config = true;
    } else if (a == "--keep-no-config") {
      bench.keep_enabled = true;
      bench.steps.set_config = false;
    } else if (a == "--hw-buffer-alt-kib" && (v = value())) {
      bench.alternate_buffer_bytes = std::strtoul(v, nullptr, 10) << 10;
    } else if (a == "--dwell-ms" && (v = value())) {
      bench.dwell_ms = std::strtol(v, nullptr, 10);
    } else if (a == "--hw-buffer-kib" && (v = value())) {
      bench.hardware_buffer_bytes = std::strtoul(v, nullptr, 10) << 10;
    } else if (a == "--chip" && (v = value())) {
      chip_only = v;
    } else if (a.rfind("--", 0) == 0) {
      return Usage();
    } else {
      metrics.push_back(a);
    }
  }
  if (!cupti_path.empty() && !chip_only.empty()) {
    auto lib = nvmlx::cupti::Library::LoadHostOnly(cupti_path);
    if (!lib.ok()) {
      std::fprintf(stderr, "pm-probe: %s\n", lib.status().ToString().c_str());
      return 1;
    }
    return nvmlx::pmprobe::PrintChipPlan(**lib, chip_only, std::move(metrics));
  }
  if (cupti_path.empty() || metrics.empty() || interval_ms <= 0 || decode_ms <= 0) return Usage();

  PrintRss("start");
  // The driver alone (libnvperf_host and CUPTI not mapped yet): what cuInit costs.
  if (void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL); cuda != nullptr) {
    using InitFn = int (*)(unsigned);
    if (auto init = reinterpret_cast<InitFn>(dlsym(cuda, "cuInit")); init != nullptr) (void)init(0);
    PrintRss("cuInit");
    // --ctx-flags / --retain-ctx (experiments on where a switch's CPU goes): the primary
    // context's scheduling flags set before CUPTI uses it, or the context held for the run.
    using DeviceGetFn = int (*)(int*, int);
    using SetFlagsFn = int (*)(int, unsigned);
    using RetainFn = int (*)(void**, int);
    auto device_get = reinterpret_cast<DeviceGetFn>(dlsym(cuda, "cuDeviceGet"));
    int dev = 0;
    if (device_get != nullptr && device_get(&dev, static_cast<int>(device)) == 0) {
      if (ctx_flags >= 0) {
        auto set = reinterpret_cast<SetFlagsFn>(dlsym(cuda, "cuDevicePrimaryCtxSetFlags_v2"));
        std::fprintf(stderr, "pm-probe: primary context flags %ld: %d\n", ctx_flags,
                     set != nullptr ? set(dev, static_cast<unsigned>(ctx_flags)) : -1);
      }
      if (retain_ctx) {
        auto retain = reinterpret_cast<RetainFn>(dlsym(cuda, "cuDevicePrimaryCtxRetain"));
        void* ctx = nullptr;
        std::fprintf(stderr, "pm-probe: primary context retained: %d\n",
                     retain != nullptr ? retain(&ctx, dev) : -1);
        PrintRss("retained");
      }
    }
  }
  // Mapped first, so that Load() below finds them mapped: what mapping alone costs.
  if (const size_t slash = cupti_path.rfind('/'); slash != std::string::npos) {
    (void)dlopen((cupti_path.substr(0, slash + 1) + "libnvperf_host.so").c_str(),
                 RTLD_NOW | RTLD_GLOBAL);
  }
  (void)dlopen(cupti_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  PrintRss("mapped");
  auto lib = nvmlx::cupti::Library::Load(cupti_path);
  PrintRss("initialized");
  if (!lib.ok()) {
    std::fprintf(stderr, "pm-probe: %s\n", lib.status().ToString().c_str());
    return 1;
  }
  auto chip = (*lib)->ChipName(device);
  if (!chip.ok()) {
    std::fprintf(stderr, "pm-probe: %s\n", chip.status().ToString().c_str());
    return 1;
  }
  PrintRss("chip");
  auto availability = (*lib)->CounterAvailability(device);
  std::vector<uint8_t> avail = availability.ok() ? *availability : std::vector<uint8_t>{};
  std::fprintf(stderr, "pm-probe: chip %s, availability image %zu bytes\n", chip->c_str(),
               avail.size());
  PrintRss("loaded");
  std::vector<std::string> known;
  for (const std::string& m : metrics) {
    auto c = (*lib)->BuildConfig(*chip, avail, {m});
    if (c.ok()) {
      known.push_back(m);
    } else {
      std::fprintf(stderr, "pm-probe: left out %s: %s\n", m.c_str(), c.status().ToString().c_str());
    }
  }
  nvmlx::Result<nvmlx::cupti::Config> config = nvmlx::Internal("no configuration built");
  while (!known.empty()) {
    config = (*lib)->BuildConfig(*chip, avail, known);
    if (config.ok() && config->passes == 1) break;
    std::fprintf(stderr, "pm-probe: %s: dropping %s\n",
                 config.ok() ? (std::to_string(config->passes) + " passes").c_str()
                             : config.status().ToString().c_str(),
                 known.back().c_str());
    known.pop_back();
  }
  if (known.empty()) {
    std::fprintf(stderr, "pm-probe: no metric left\n");
    return 1;
  }
  if (bench.switches > 0) {
    if (bench.second.empty()) return Usage();
    bench.first = known;
    bench.base.device_index = device;
    bench.base.chip = *chip;
    bench.base.availability = avail;
    bench.base.interval_ns = static_cast<uint64_t>(interval_ms) * 1'000'000;
    bench.base.sysclk_trigger = chip->rfind("TU", 0) == 0 || *chip == "GA100";
    bench.base.max_samples = static_cast<uint32_t>(max_samples);
    const int rc = nvmlx::pmprobe::RunSwitchBench(**lib, bench);
    PrintRss("end");  // what the sessions left resident (with --retain-ctx: the context's share)
    return rc;
  }
  PrintRss("configured");
  malloc_trim(0);
  PrintRss("configured+trim");
  nvmlx::cupti::PmSampler::Options o;
  o.device_index = device;
  o.chip = *chip;
  o.availability = avail;
  o.metrics = known;
  o.config = std::move(config).value();
  o.interval_ns = static_cast<uint64_t>(interval_ms) * 1'000'000;
  o.sysclk_trigger = chip->rfind("TU", 0) == 0 || *chip == "GA100";
  o.keep_samples = true;
  o.fresh_image_each_decode = fresh_image;
  o.max_samples = static_cast<uint32_t>(max_samples);
  auto sampler = nvmlx::cupti::PmSampler::Start(**lib, std::move(o));
  if (!sampler.ok()) {
    std::fprintf(stderr, "pm-probe: %s\n", sampler.status().ToString().c_str());
    return 1;
  }
  PrintRss("started");
  std::printf("decode,t_ms,sample,start_ms,dur_ms");
  for (const std::string& m : known) std::printf(",%s", m.c_str());
  std::printf("\n");
  const auto begin = std::chrono::steady_clock::now();
  uint64_t first_ns = 0;
  for (int d = 0; std::chrono::steady_clock::now() - begin < std::chrono::seconds(seconds); ++d) {
    std::this_thread::sleep_for(std::chrono::milliseconds(decode_ms));
    const uint64_t cpu0 = nvmlx::util::ThreadCpuNs();
    auto w = (*sampler)->Decode();
    const double cpu_ms = double(nvmlx::util::ThreadCpuNs() - cpu0) / 1e6;
    const long t_ms = static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                            std::chrono::steady_clock::now() - begin)
                                            .count());
    if (!w.ok()) {
      std::printf("# decode %d at %ld ms: %s\n", d, t_ms, w.status().ToString().c_str());
      continue;
    }
    std::printf(
        "# decode %d: %zu samples, %.2f ms CPU (decode %.2f, evaluate %.2f, init %.2f); image "
        "populated %zu completed %zu stop %d resets %zu%s\n",
        d, w->detail.size(), cpu_ms, double(w->cpu_decode_ns) / 1e6,
        double(w->cpu_evaluate_ns) / 1e6, double(w->cpu_init_ns) / 1e6, w->populated, w->completed,
        w->stop_reason, w->resets, w->overflow ? ", hardware buffer overflow" : "");
    for (size_t s = 0; s < w->detail.size(); ++s) {
      const auto& sv = w->detail[s];
      if (first_ns == 0) first_ns = sv.start_ns;
      std::printf("%d,%ld,%zu,%.3f,%.3f", d, t_ms, s,
                  (double(sv.start_ns) - double(first_ns)) / 1e6,
                  (double(sv.end_ns) - double(sv.start_ns)) / 1e6);
      for (double v : sv.values) std::printf(",%.6g", v);
      std::printf("\n");
    }
    std::fflush(stdout);
  }
  PrintRss("end");
  return 0;
}
