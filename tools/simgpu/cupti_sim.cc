// The simulated CUPTI: our own libcupti.so.13 (the PM-sampling and profiler-host entry points the
// exporter uses, src/cupti/cupti_api.h), driven by the same scenario file as the simulated NVML
// (NVMLX_SIMGPU_SCENARIO; SCENARIO.md "PM sampling"). The exporter loads it through the very same
// dlopen path as the real libcupti (--cupti-library; under --fake-gpus the one beside the
// simulated libnvidia-ml.so.1).
//
// What it models: a chip name per GPU; a host API whose configuration takes
// ceil(metrics / metrics_per_pass) passes and rejects unknown metrics; one PM-sampling session per
// GPU (a second Enable answers HARDWARE_BUSY, as a GPU held by another profiler); samples on a
// fixed grid of the sampling interval from the session's start, each the mean of the scenario's
// gpm_* values over its interval (so the exporter's window average can be checked against the
// GPM path's); a counter-data image that holds maxSamples samples; `busy_until_s` and
// `decode_error_after` and `stall_after_s` faults; with `straddle`, records that reach the image in
// two parts, so that a decoder re-initialising the image between them loses a sample's counts while
// the next sample spans its time (what the H200 showed under load). Time: the scenario's clock from
// cuptiProfilerInitialize (NVMLX_SIMGPU_FROZEN_TIME_S freezes it, as in the simulated NVML).
//
// Thread-safety: every entry point takes one mutex.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "cupti/cupti_api.h"
#include "scenario.h"

namespace nvmlx::simgpu {
namespace {

namespace api = nvmlx::cupti::api;

struct Known {
  const char* base;  // metric name up to the first '.'
  ValueKey key;
  double scale;  // scenario unit -> metric unit (MiB/s -> B/s)
};
constexpr Known kKnown[] = {
    {"gr__cycles_active", ValueKey::kGpmGraphicsUtil, 1},
    {"sm__cycles_active", ValueKey::kGpmSmUtil, 1},
    {"sm__warps_active", ValueKey::kGpmSmOccupancy, 1},
    {"sm__pipe_tensor_cycles_active", ValueKey::kGpmAnyTensorUtil, 1},
    {"dram__cycles_active", ValueKey::kGpmDramBwUtil, 1},
    {"sm__pipe_fp64_cycles_active", ValueKey::kGpmFp64Util, 1},
    {"sm__pipe_fma_cycles_active", ValueKey::kGpmFp32Util, 1},
    {"pcie__write_bytes", ValueKey::kGpmPcieTxMibs, 1048576},
    {"pcie__read_bytes", ValueKey::kGpmPcieRxMibs, 1048576},
    {"nvltx__bytes", ValueKey::kGpmNvlinkTxMibs, 1048576},
    {"nvlrx__bytes", ValueKey::kGpmNvlinkRxMibs, 1048576},
};
constexpr size_t kNumKnown = sizeof(kKnown) / sizeof(kKnown[0]);

int KnownIndex(const std::string& metric) {
  const std::string base = metric.substr(0, metric.find('.'));
  for (size_t i = 0; i < kNumKnown; ++i) {
    if (base == kKnown[i].base) return static_cast<int>(i);
  }
  return -1;
}

struct Host {
  std::string chip;
  std::vector<std::string> metrics;
};

struct Session {
  unsigned gpu = 0;
  std::vector<std::string> metrics;
  double interval_s = 0.1;
  double next_start = 0;  // simulation time of the next sample's start
  double started_at = 0;  // simulation time of cuptiPmSamplingStart
  unsigned decodes = 0;
  bool started = false;
  // Stops so far. GH100's CUPTI 13 does not restart a stopped session: the first start after a
  // stop succeeds but every decode then answers UNKNOWN, and a second one fails
  // (docs/validation/h100-perf-round-2026-12-06.md §1). A switch must disable and enable.
  unsigned stops = 0;
  // straddle: the start of a sample lost in flight; the next sample then begins there and holds
  // only its own interval's counts (< 0: none lost).
  double lost_start = -1;
};

// The counter-data image: this header, then `capacity` records of two uint64 timestamps (ns of
// simulation time) and kNumKnown doubles.
struct ImageHeader {
  uint32_t magic;
  uint32_t capacity;
  uint32_t count;      // populated samples
  uint32_t in_flight;  // 1: the last populated sample is not complete yet (straddle)
};
constexpr uint32_t kMagic = 0x53494d43;  // "SIMC"
constexpr size_t kRecord = 16 + 8 * kNumKnown;

struct State {
  std::mutex mu;
  std::unique_ptr<Scenario> scenario;
  std::string error;
  std::chrono::steady_clock::time_point origin;
  bool frozen = false;
  double frozen_s = 0;
  std::set<unsigned> enabled;  // GPUs with a session
  long long host_objects = 0;  // cuptiProfilerHostInitialize successes since load
};

State& S() {
  static State* s = new State();  // never destroyed: entry points may run during exit
  return *s;
}

double Now(const State& s) {
  if (s.frozen) return s.frozen_s;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - s.origin).count();
}

std::string ChipOf(const GpuSpec& g) {
  if (!g.pm_sampling.chip.empty()) return g.pm_sampling.chip;
  return g.gpm ? "GH100" : "GA102";
}

const GpuSpec* GpuByChip(const State& s, const std::string& chip) {
  for (const GpuSpec& g : s.scenario->gpus) {
    if (ChipOf(g) == chip) return &g;
  }
  return nullptr;
}

bool Missing(const GpuSpec& g, const std::string& metric) {
  const std::string base = metric.substr(0, metric.find('.'));
  for (const std::string& m : g.pm_sampling.missing_metrics) {
    if (m == base || m == metric) return true;
  }
  return KnownIndex(metric) < 0;
}

// Whether a session configured with `metrics` stalls (stall_combinations; none listed: all do).
bool Stalls(const PmSamplingSpec& spec, const std::vector<std::string>& metrics) {
  if (spec.stall_combinations.empty()) return true;
  auto holds = [&](const std::string& base) {
    return std::any_of(metrics.begin(), metrics.end(),
                       [&](const std::string& m) { return m.substr(0, m.find('.')) == base; });
  };
  return std::any_of(spec.stall_combinations.begin(), spec.stall_combinations.end(),
                     [&](const std::vector<std::string>& set) {
                       return std::all_of(set.begin(), set.end(), holds);
                     });
}

// The config image carries its chip and metric list: "SIMCFG <chip>" then the names, one a line.
std::vector<std::string> MetricsOfConfig(const uint8_t* image, size_t size,
                                         std::string* chip = nullptr) {
  std::vector<std::string> out;
  std::string text(reinterpret_cast<const char*>(image), size);
  if (text.rfind("SIMCFG ", 0) != 0) return out;
  size_t pos = text.find('\n');
  if (pos == std::string::npos) return out;
  if (chip != nullptr) *chip = text.substr(7, pos - 7);
  ++pos;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    if (nl > pos) out.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return out;
}

#define NEED_INIT()                       \
  State& s = S();                         \
  std::lock_guard<std::mutex> lock(s.mu); \
  if (s.scenario == nullptr) return api::kErrorNotInitialized

// Loads the scenario once (s.mu held): what cuptiProfilerInitialize does, and what the host API
// calls do on their own, as the real host API needs no initialize (nor a GPU: pm-probe --chip).
// NOT_SUPPORTED when the scenario has no GPU with a `pm_sampling` map: a scenario written before
// PM sampling existed simulates a host without CUPTI.
int LoadScenarioLocked(State& s) {
  if (s.scenario != nullptr) return api::kSuccess;
  const char* path = std::getenv("NVMLX_SIMGPU_SCENARIO");
  ParseResult parsed =
      (path != nullptr && *path != '\0') ? LoadScenarioFile(path) : DefaultScenario();
  if (std::holds_alternative<std::string>(parsed)) return api::kErrorInvalidOperation;
  auto sc = std::make_unique<Scenario>(std::move(std::get<Scenario>(parsed)));
  if (std::none_of(sc->gpus.begin(), sc->gpus.end(),
                   [](const GpuSpec& g) { return g.pm_sampling.present; })) {
    return api::kErrorNotSupported;
  }
  if (const char* frozen = std::getenv("NVMLX_SIMGPU_FROZEN_TIME_S"); frozen && *frozen) {
    s.frozen = true;
    s.frozen_s = std::strtod(frozen, nullptr);
  }
  s.origin = std::chrono::steady_clock::now();
  s.scenario = std::move(sc);
  return api::kSuccess;
}

#define NEED_SCENARIO()                   \
  State& s = S();                         \
  std::lock_guard<std::mutex> lock(s.mu); \
  if (int rc = LoadScenarioLocked(s); rc != api::kSuccess) return rc

}  // namespace
}  // namespace nvmlx::simgpu

using namespace nvmlx::simgpu;  // NOLINT: the C entry points below
namespace api = nvmlx::cupti::api;

extern "C" {

__attribute__((visibility("default"))) int cuptiGetResultString(int rc, const char** text) {
  switch (rc) {
    case api::kSuccess:
      *text = "CUPTI_SUCCESS";
      break;
    case api::kErrorHardwareBusy:
      *text = "CUPTI_ERROR_HARDWARE_BUSY";
      break;
    case api::kErrorUnknown:
      *text = "CUPTI_ERROR_UNKNOWN";
      break;
    case api::kErrorNotSupported:
      *text = "CUPTI_ERROR_NOT_SUPPORTED";
      break;
    case api::kErrorInvalidMetricName:
      *text = "CUPTI_ERROR_INVALID_METRIC_NAME";
      break;
    default:
      *text = "CUPTI_ERROR (simulated)";
  }
  return api::kSuccess;
}

// Fails with NOT_SUPPORTED when the scenario has no GPU with a `pm_sampling` map
// (LoadScenarioLocked).
__attribute__((visibility("default"))) int cuptiProfilerInitialize(
    api::ProfilerInitializeParams* p) {
  if (p == nullptr) return api::kErrorInvalidParameter;
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  return LoadScenarioLocked(s);
}

__attribute__((visibility("default"))) int cuptiDeviceGetChipName(api::DeviceGetChipNameParams* p) {
  NEED_INIT();
  if (p == nullptr || p->deviceIndex >= s.scenario->gpus.size()) return api::kErrorInvalidDevice;
  // The string lives as long as the scenario (the process).
  static thread_local std::string name;
  name = ChipOf(s.scenario->gpus[p->deviceIndex]);
  p->pChipName = name.c_str();
  return api::kSuccess;
}

__attribute__((visibility("default"))) int cuptiPmSamplingGetCounterAvailability(
    api::PmGetCounterAvailabilityParams* p) {
  NEED_INIT();
  if (p == nullptr || p->deviceIndex >= s.scenario->gpus.size()) return api::kErrorInvalidDevice;
  if (p->pCounterAvailabilityImage == nullptr) {
    p->counterAvailabilityImageSize = 16;
  } else {
    std::memset(p->pCounterAvailabilityImage, 0, p->counterAvailabilityImageSize);
  }
  return api::kSuccess;
}

__attribute__((visibility("default"))) int cuptiProfilerHostInitialize(
    api::HostInitializeParams* p) {
  NEED_SCENARIO();
  if (p == nullptr || p->pChipName == nullptr) return api::kErrorInvalidParameter;
  if (GpuByChip(s, p->pChipName) == nullptr) return 46;  // CUPTI_ERROR_INVALID_CHIP_NAME
  p->pHostObject = reinterpret_cast<api::HostObject*>(new Host{p->pChipName, {}});
  ++s.host_objects;
  return api::kSuccess;
}

__attribute__((visibility("default"))) int cuptiProfilerHostDeinitialize(
    api::HostDeinitializeParams* p) {
  NEED_SCENARIO();
  delete reinterpret_cast<Host*>(p->pHostObject);
  return api::kSuccess;
}

__attribute__((visibility("default"))) int cuptiProfilerHostConfigAddMetrics(
    api::HostConfigAddMetricsParams* p) {
  NEED_SCENARIO();
  auto* h = reinterpret_cast<Host*>(p->pHostObject);
  const GpuSpec* g = GpuByChip(s, h->chip);
  for (size_t i = 0; i < p->numMetrics; ++i) {
    // The real host API answers INVALID_PARAMETER for a metric the chip lacks.
    if (Missing(*g, p->ppMetricNames[i])) return api::kErrorInvalidParameter;
  }
  for (size_t i = 0; i < p->numMetrics; ++i) h->metrics.emplace_back(p->ppMetricNames[i]);
  return api::kSuccess;
}

}  // extern "C"

namespace {
std::string ConfigText(const Host& h) {
  std::string text = "SIMCFG " + h.chip + "\n";
  for (const std::string& m : h.metrics) text += m + "\n";
  return text;
}
}  // namespace

extern "C" {

__attribute__((visibility("default"))) int cuptiProfilerHostGetConfigImageSize(
    api::HostGetConfigImageSizeParams* p) {
  NEED_SCENARIO();
  p->configImageSize = ConfigText(*reinterpret_cast<Host*>(p->pHostObject)).size();
  return api::kSuccess;
}

__attribute__((visibility("default"))) int cuptiProfilerHostGetConfigImage(
    api::HostGetConfigImageParams* p) {
  NEED_SCENARIO();
  const std::string text = ConfigText(*reinterpret_cast<Host*>(p->pHostObject));
  if (p->configImageSize < text.size()) return api::kErrorInvalidParameter;
  std::memcpy(p->pConfigImage, text.data(), text.size());
  return api::kSuccess;
}

__attribute__((visibility("default"))) int cuptiProfilerHostGetNumOfPasses(
    api::HostGetNumOfPassesParams* p) {
  NEED_SCENARIO();
  std::string chip;
  const std::vector<std::string> metrics =
      MetricsOfConfig(p->pConfigImage, p->configImageSize, &chip);
  const GpuSpec* g = GpuByChip(s, chip);
  if (g == nullptr) return api::kErrorInvalidParameter;
  const unsigned per_pass = g->pm_sampling.metrics_per_pass;
  p->numOfPasses = (metrics.size() + per_pass - 1) / per_pass;
  return api::kSuccess;
}

__attribute__((visibility("default"))) int cuptiPmSamplingEnable(api::PmEnableParams* p) {
  NEED_INIT();
  if (p->deviceIndex >= s.scenario->gpus.size()) return api::kErrorInvalidDevice;
  const unsigned gpu = static_cast<unsigned>(p->deviceIndex);
  const PmSamplingSpec& spec = s.scenario->gpus[gpu].pm_sampling;
  if (spec.busy_until_s < 0 || Now(s) < spec.busy_until_s) return api::kErrorHardwareBusy;
  if (!s.enabled.insert(gpu).second) return api::kErrorHardwareBusy;  // one session per GPU
  auto* session = new Session();
  session->gpu = gpu;
  p->pPmSamplingObject = reinterpret_cast<api::PmSamplingObject*>(session);
  return api::kSuccess;
}

__attribute__((visibility("default"))) int cuptiPmSamplingDisable(api::PmObjectParams* p) {
  NEED_INIT();
  auto* session = reinterpret_cast<Session*>(p->pPmSamplingObject);
  if (session == nullptr) return api::kErrorInvalidParameter;
  s.enabled.erase(session->gpu);
  delete session;
  return api::kSuccess;
}

}  // extern "C"

namespace {
// cuptiPmSamplingSetConfig's work under the state's lock; *delay_ms: the GPU's set_config_ms,
// slept by the caller after the lock is released (other GPUs' calls are not held up).
int SetConfigLocked(api::PmSetConfigParams* p, unsigned* delay_ms) {
  NEED_INIT();
  auto* session = reinterpret_cast<Session*>(p->pPmSamplingObject);
  session->metrics = MetricsOfConfig(p->pConfig, p->configSize);
  if (session->metrics.empty() || p->samplingInterval == 0) return api::kErrorInvalidParameter;
  // Both triggers count nanoseconds here (the sysclk one at the exporter's assumed 1 GHz).
  session->interval_s = static_cast<double>(p->samplingInterval) / 1e9;
  *delay_ms = s.scenario->gpus[session->gpu].pm_sampling.set_config_ms;
  return api::kSuccess;
}
}  // namespace

extern "C" {

__attribute__((visibility("default"))) int cuptiPmSamplingSetConfig(api::PmSetConfigParams* p) {
  unsigned delay_ms = 0;
  const int rc = SetConfigLocked(p, &delay_ms);
  if (delay_ms != 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
  return rc;
}

__attribute__((visibility("default"))) int cuptiPmSamplingStart(api::PmObjectParams* p) {
  NEED_INIT();
  auto* session = reinterpret_cast<Session*>(p->pPmSamplingObject);
  if (session->stops > 1) return api::kErrorUnknown;
  session->started = true;
  session->next_start = Now(s);
  session->started_at = session->next_start;
  return api::kSuccess;
}

__attribute__((visibility("default"))) int cuptiPmSamplingStop(api::PmObjectParams* p) {
  NEED_INIT();
  auto* session = reinterpret_cast<Session*>(p->pPmSamplingObject);
  session->started = false;
  ++session->stops;
  return api::kSuccess;
}

__attribute__((visibility("default"))) int cuptiPmSamplingGetCounterDataSize(
    api::PmGetCounterDataSizeParams* p) {
  NEED_INIT();
  p->counterDataSize = sizeof(ImageHeader) + p->maxSamples * kRecord;
  return api::kSuccess;
}

__attribute__((visibility("default"))) int cuptiPmSamplingCounterDataImageInitialize(
    api::PmCounterDataImageInitializeParams* p) {
  NEED_INIT();
  if (p->counterDataSize < sizeof(ImageHeader)) return api::kErrorInvalidParameter;
  // Re-initialising over a sample in flight loses the part of it already decoded.
  ImageHeader old;
  std::memcpy(&old, p->pCounterData, sizeof old);
  auto* session = reinterpret_cast<Session*>(p->pPmSamplingObject);
  if (session != nullptr && old.magic == kMagic && old.in_flight != 0 && old.count > 0) {
    uint64_t start_ns = 0;
    std::memcpy(&start_ns, p->pCounterData + sizeof(ImageHeader) + (old.count - 1) * kRecord,
                sizeof start_ns);
    session->lost_start = static_cast<double>(start_ns) / 1e9;
  }
  ImageHeader h{kMagic, static_cast<uint32_t>((p->counterDataSize - sizeof(ImageHeader)) / kRecord),
                0, 0};
  std::memcpy(p->pCounterData, &h, sizeof h);
  return api::kSuccess;
}

__attribute__((visibility("default"))) int cuptiPmSamplingDecodeData(api::PmDecodeDataParams* p) {
  NEED_INIT();
  auto* session = reinterpret_cast<Session*>(p->pPmSamplingObject);
  if (session == nullptr || !session->started) return api::kErrorInvalidOperation;
  if (session->stops > 0) return api::kErrorUnknown;  // restarted after a stop (above)
  ImageHeader h;
  std::memcpy(&h, p->pCounterDataImage, sizeof h);
  if (h.magic != kMagic) return api::kErrorInvalidParameter;
  const PmSamplingSpec& spec = s.scenario->gpus[session->gpu].pm_sampling;
  ++session->decodes;
  if (spec.decode_error_after != 0 && session->decodes == spec.decode_error_after) {
    return api::kErrorUnknown;
  }
  const GpuSpec& g = s.scenario->gpus[session->gpu];
  const double now = Now(s);
  p->decodeStopReason = api::kDecodeStopEndOfRecords;
  p->overflow = 0;
  h.in_flight = 0;  // the rest of the sample in flight arrives now
  const uint32_t before = h.count;
  // stall_after_s: no sample completes after that long (one stays in flight), in every session
  // or only in those whose configuration holds one of stall_combinations.
  const double until = spec.stall_after_s > 0 && Stalls(spec, session->metrics)
                           ? std::min(now, session->started_at + spec.stall_after_s)
                           : now;
  while (session->next_start + session->interval_s <= until) {
    if (h.count >= h.capacity) {
      p->decodeStopReason = api::kDecodeStopCounterDataFull;
      break;
    }
    const double t1 = session->next_start, t2 = t1 + session->interval_s;
    // After a lost sample: this one spans its time too, with only its own interval's counts.
    const double from = session->lost_start >= 0 ? session->lost_start : t1;
    session->lost_start = -1;
    uint8_t* rec = p->pCounterDataImage + sizeof(ImageHeader) + h.count * kRecord;
    const uint64_t ts[2] = {static_cast<uint64_t>(from * 1e9), static_cast<uint64_t>(t2 * 1e9)};
    std::memcpy(rec, ts, sizeof ts);
    for (size_t k = 0; k < kNumKnown; ++k) {
      const double v =
          g.value(kKnown[k].key).Average(t1, t2) * kKnown[k].scale * (t2 - t1) / (t2 - from);
      std::memcpy(rec + 16 + 8 * k, &v, sizeof v);
    }
    ++h.count;
    session->next_start = t2;
  }
  if (spec.straddle && h.count > before) h.in_flight = 1;
  std::memcpy(p->pCounterDataImage, &h, sizeof h);
  return api::kSuccess;
}

__attribute__((visibility("default"))) int cuptiPmSamplingGetCounterDataInfo(
    api::PmGetCounterDataInfoParams* p) {
  NEED_INIT();
  ImageHeader h;
  std::memcpy(&h, p->pCounterDataImage, sizeof h);
  if (h.magic != kMagic) return api::kErrorInvalidParameter;
  p->numTotalSamples = h.capacity;
  p->numPopulatedSamples = h.count;
  p->numCompletedSamples = h.count - h.in_flight;
  return api::kSuccess;
}

__attribute__((visibility("default"))) int cuptiPmSamplingCounterDataGetSampleInfo(
    api::PmGetSampleInfoParams* p) {
  NEED_INIT();
  ImageHeader h;
  std::memcpy(&h, p->pCounterDataImage, sizeof h);
  if (p->sampleIndex >= h.count) return api::kErrorInvalidParameter;
  uint64_t ts[2];
  std::memcpy(ts, p->pCounterDataImage + sizeof(ImageHeader) + p->sampleIndex * kRecord, sizeof ts);
  p->startTimestamp = ts[0];
  p->endTimestamp = ts[1];
  return api::kSuccess;
}

__attribute__((visibility("default"))) int cuptiProfilerHostEvaluateToGpuValues(
    api::HostEvaluateToGpuValuesParams* p) {
  NEED_SCENARIO();
  ImageHeader h;
  std::memcpy(&h, p->pCounterDataImage, sizeof h);
  if (p->rangeIndex >= h.count) return api::kErrorInvalidParameter;
  const uint8_t* rec = p->pCounterDataImage + sizeof(ImageHeader) + p->rangeIndex * kRecord;
  for (size_t i = 0; i < p->numMetrics; ++i) {
    const int k = KnownIndex(p->ppMetricNames[i]);
    if (k < 0) return api::kErrorInvalidMetricName;
    std::memcpy(&p->pMetricValues[i], rec + 16 + 8 * k, sizeof(double));
  }
  return api::kSuccess;
}

// Not CUPTI: a test control (dlsym it from the same library). Restarts the simulated clock from
// zero, so that `busy_until_s` and the value functions count from now: each test of one process
// gets the scenario's start again. Sessions still open keep running.
__attribute__((visibility("default"))) int nvmlxSimCuptiRestartClock() {
  NEED_INIT();
  s.origin = std::chrono::steady_clock::now();
  return api::kSuccess;
}

// Not CUPTI: a test control. How many host objects cuptiProfilerHostInitialize made since load
// (the reader keeps one per configuration instead of one per session).
__attribute__((visibility("default"))) long long nvmlxSimCuptiHostObjects() {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.host_objects;
}

}  // extern "C"
