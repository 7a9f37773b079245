// cupti::Library: CUPTI's PM-sampling and profiler-host API, dlopen()ed at run time like NVML
// (nvml/nvml.h), and PmSampler, one GPU's PM-sampling session. This folder is the only code that
// touches CUPTI; it sits beside nvml/ (docs/architecture.md) and depends on util/ only.
//
// Loading (docs/pm-sampling.md §2): libcupti.so.13 (--cupti-library) dlopen()s libnvperf_host.so
// itself, by name. When a libnvperf_host.so lies beside the given libcupti (the pip wheel
// nvidia-cuda-cupti, a toolkit's lib/ or extras/CUPTI/lib64/), Load() maps it first (RTLD_GLOBAL)
// so that CUPTI's own lookup finds that copy instead of depending on LD_LIBRARY_PATH. CUPTI numbers
// GPUs as CUDA does; CudaIndexFor() maps an NVML PCI bus id to that number through libcuda.so.1
// (cuDeviceGetPCIBusId) when it can be loaded, and otherwise assumes NVML's order.
//
// Thread-safety: a Library is immutable after Load() and its methods may be called from any
// thread (CUPTI's own calls are made per GPU from that GPU's worker). A PmSampler is used by one
// thread at a time. The Library must outlive every PmSampler.
#ifndef NVML_EXPORTER_CUPTI_CUPTI_H_
#define NVML_EXPORTER_CUPTI_CUPTI_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cupti/cupti_api.h"
#include "util/status.h"

namespace nvmlx::cupti {

// CUPTI result -> Status: HARDWARE_BUSY -> UNAVAILABLE (another profiler holds the counters),
// INSUFFICIENT_PRIVILEGES -> NO_PERMISSION, NOT_SUPPORTED / MIG / invalid chip -> NOT_SUPPORTED,
// INVALID_METRIC_NAME -> NOT_FOUND, everything else (UNKNOWN included) -> INTERNAL. The message
// names the function, CUPTI's text and the number.
Status FromCuptiResult(api::CUptiResult rc, std::string_view function,
                       api::GetResultStringFn result_string);

// A metric configuration built by the host API for one chip.
struct Config {
  std::vector<uint8_t> image;
  size_t passes = 0;  // PM sampling accepts 1 only
};

class Library {
 public:
  // Loads `path` (and libnvperf_host.so beside it, when there) and calls cuptiProfilerInitialize.
  // Errors: NOT_FOUND when dlopen or a symbol fails, else CUPTI's error.
  static Result<std::unique_ptr<Library>> Load(const std::string& path);
  // The same without a driver: no CUDA, no cuptiProfilerInitialize (which needs one). Only the
  // profiler host API works then (BuildConfig: which metrics a chip has, how many passes);
  // tools/pm-probe --chip reads chips no GPU here has through it.
  static Result<std::unique_ptr<Library>> LoadHostOnly(const std::string& path);
  ~Library();
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  // The CUDA device index of the GPU at `pci_bus_id` (NVML's "DDDDDDDD:BB:DD.F" form), or
  // `nvml_index` when libcuda.so.1 is absent or does not know the GPU.
  size_t CudaIndexFor(std::string_view pci_bus_id, unsigned nvml_index) const;
  // "GA102", "GH100", ...
  Result<std::string> ChipName(size_t device_index) const;
  // The counter-availability image of the GPU (which counters this GPU and driver expose).
  Result<std::vector<uint8_t>> CounterAvailability(size_t device_index) const;
  // A PM-sampling configuration of `metrics` for `chip` (host-side only; no GPU involved).
  // NOT_FOUND when a metric does not exist on that chip.
  Result<Config> BuildConfig(const std::string& chip, const std::vector<uint8_t>& availability,
                             const std::vector<std::string>& metrics) const;

  const std::string& path() const { return path_; }
  Status Check(api::CUptiResult rc, std::string_view function) const {
    return FromCuptiResult(rc, function, result_string_);
  }

#define NVMLX_CUPTI_MEMBER(name, P) api::CUptiResult (*name)(api::P*) = nullptr;
  NVMLX_CUPTI_FOR_EACH_FUNCTION(NVMLX_CUPTI_MEMBER)
#undef NVMLX_CUPTI_MEMBER

 private:
  Library() = default;
  void LoadCuda();

  std::string path_;
  void* nvperf_handle_ = nullptr;
  void* handle_ = nullptr;
  void* cuda_handle_ = nullptr;
  api::GetResultStringFn result_string_ = nullptr;
  // From libcuda.so.1, in CUDA order: each device's PCI (domain, bus, device).
  struct PciAddress {
    unsigned domain = 0, bus = 0, device = 0;
  };
  std::vector<PciAddress> cuda_devices_;
};

// The host half of a PM-sampling configuration: CUPTI's host object for `chip` with the metrics
// added, which evaluates the counter data of a session of that configuration. Creating one loads
// the chip's metric tables, the costly part of starting a session, so a reader that alternates
// configurations keeps one per configuration for its life instead of one per session. Not
// thread-safe: the sessions that use it are on one collector thread.
class PmHost {
 public:
  static Result<std::shared_ptr<PmHost>> Create(const Library& lib, const std::string& chip,
                                                const std::vector<uint8_t>& availability,
                                                const std::vector<std::string>& metrics);
  ~PmHost();
  PmHost(const PmHost&) = delete;
  PmHost& operator=(const PmHost&) = delete;

  api::HostObject* object() const { return host_; }
  // The metric names, in the order they were added (and are evaluated in).
  const std::vector<const char*>& metric_names() const { return names_; }

 private:
  PmHost(const Library& lib, std::vector<std::string> metrics);

  const Library& lib_;
  const std::vector<std::string> metrics_;
  std::vector<const char*> names_;  // into metrics_
  api::HostObject* host_ = nullptr;
};

// One GPU's PM-sampling session: enabled and started by Start(), stopped and disabled by the
// destructor. Decode() drains the hardware buffer and returns the duration-weighted mean of every
// metric over the samples completed since the previous Decode(). Not thread-safe: one collector
// thread owns it.
class PmSampler {
 public:
  struct Options {
    size_t device_index = 0;  // CUDA numbering
    std::string chip;
    std::vector<uint8_t> availability;
    std::vector<std::string> metrics;  // as in the config
    Config config;
    uint64_t interval_ns = 100'000'000;
    // Turing and GA100 lack the GPU-time trigger: the interval is then counted in sys clocks
    // (kAssumedSysclkHz per second; the window uses the samples' own timestamps either way).
    bool sysclk_trigger = false;
    uint32_t max_samples = 64;  // counter-data image capacity
    size_t hardware_buffer_bytes = 4u << 20;
    // Keep every sample's own values in Window::detail (tools/pm-probe: what one decode holds).
    bool keep_samples = false;
    // Re-initialise the counter-data image after every decode, dropping a sample whose records
    // were only partly decoded (the first implementation; tools/pm-probe --fresh-image compares).
    bool fresh_image_each_decode = false;
    // Leave the session's first samples out of every mean (Window::settling counts them): on an
    // H100 the PCIe counters read ~0 in the first second of every session (two 500 ms samples)
    // while the other metrics were already right (docs/validation/h200-pm-sampling.md run 9).
    uint32_t settle_samples = 0;
  };
  // This thread's CPU time in each step of Start() or Reconfigure() (where a configuration
  // switch's cost goes); stop_ns is Reconfigure's stop of the previous configuration.
  struct StartCost {
    uint64_t host_ns = 0, enable_ns = 0, stop_ns = 0, set_config_ns = 0, counter_data_ns = 0,
             start_ns = 0;
  };
  static constexpr double kAssumedSysclkHz = 1.0e9;

  struct SampleValues {
    uint64_t start_ns = 0, end_ns = 0;
    std::vector<double> values;  // per metric, as CUPTI evaluated them
  };
  struct Window {
    std::vector<double> means;  // per metric, in Options::metrics order (NaN: no finite value)
    size_t samples = 0;         // samples averaged (0: none completed since the last call)
    uint64_t start_ns = 0, end_ns = 0;
    uint64_t covered_ns = 0;           // the averaged samples' durations, summed
    bool overflow = false;             // the hardware buffer overflowed (oldest records lost)
    size_t non_finite = 0;             // values left out of their metric's mean (NaN or infinite)
    std::vector<SampleValues> detail;  // with Options::keep_samples only
    // This thread's CPU time in each step (tools/pm-probe: where a collection's cost goes).
    uint64_t cpu_decode_ns = 0, cpu_evaluate_ns = 0, cpu_init_ns = 0;
    // The image after the last decode: samples with records in it, and those complete; a
    // populated sample not yet complete is kept for the next Decode().
    size_t populated = 0, completed = 0;
    int stop_reason = -1;  // CUpti_PmSampling_DecodeStopReason of the last decode
    size_t resets = 0;     // counter-data image re-initialisations in this call
    size_t settling = 0;   // completed samples left out as the session's first (settle_samples)
  };

  // `host`: the configuration's PmHost (see above), or null to build one for this session.
  static Result<std::unique_ptr<PmSampler>> Start(const Library& lib, Options options,
                                                  std::shared_ptr<const PmHost> host = nullptr);
  ~PmSampler();
  PmSampler(const PmSampler&) = delete;
  PmSampler& operator=(const PmSampler&) = delete;

  // Switches the session to another configuration of the same GPU without giving the counters
  // up: stop, the new configuration, a new counter-data image, start (`steps` varies this for
  // pm-probe). It would skip the disable and the fresh session's set-up, ~95 % of a switch's CPU
  // on GH100, but that CUPTI (13.0, driver 580) does not support it: the next decode crashes or
  // answers UNKNOWN, and a second start fails (docs/validation/h100-perf-round-2026-12-06.md §1).
  // So the exporter never calls it; it stays for `pm-probe --switch --keep` to re-check a newer
  // CUPTI or another chip. On failure the session is left stopped (the destructor disables it).
  // `options.device_index` must be this session's.
  struct ReconfigureSteps {
    bool decode_before_config = false;  // drain the hardware buffer after the stop
    bool set_config = true;             // false: the same configuration restarted
  };
  Status Reconfigure(Options options, std::shared_ptr<const PmHost> host, ReconfigureSteps steps);
  Status Reconfigure(Options options, std::shared_ptr<const PmHost> host) {
    return Reconfigure(std::move(options), std::move(host), ReconfigureSteps());
  }

  Result<Window> Decode();
  size_t counter_data_bytes() const { return counter_data_.size(); }
  const StartCost& start_cost() const { return start_cost_; }

 private:
  PmSampler(const Library& lib, Options options) : lib_(lib), options_(std::move(options)) {}
  // The steps shared by Start and Reconfigure: options_' configuration set on the enabled
  // object, its counter-data image, and the start.
  Status ConfigureAndStart(bool set_config = true);
  Status InitCounterData();

  const Library& lib_;
  Options options_;
  std::shared_ptr<const PmHost> host_;
  api::PmSamplingObject* object_ = nullptr;
  bool started_ = false;
  std::vector<uint8_t> counter_data_;
  // Samples [0, next_sample_) of the image are already averaged into an earlier window.
  size_t next_sample_ = 0;
  size_t samples_seen_ = 0;  // completed samples of this session so far, settling ones included
  StartCost start_cost_;
  std::vector<const char*> metric_names_;  // host_'s (CUPTI takes them non-const)
};

}  // namespace nvmlx::cupti

#endif  // NVML_EXPORTER_CUPTI_CUPTI_H_
