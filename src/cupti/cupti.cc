#include "cupti/cupti.h"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <utility>

#include "util/cpu_time.h"
#include "util/log.h"

namespace nvmlx::cupti {
namespace {

StatusCode CodeFor(api::CUptiResult rc) {
  switch (rc) {
    case api::kSuccess:
      return StatusCode::kOk;
    case api::kErrorHardwareBusy:
      return StatusCode::kUnavailable;
    case api::kErrorInsufficientPrivileges:
      return StatusCode::kNoPermission;
    case api::kErrorNotSupported:
    case api::kErrorMigDeviceNotSupported:
    case 33:  // CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED
    case 41:  // CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED
    case 42:  // CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED
    case 46:  // CUPTI_ERROR_INVALID_CHIP_NAME
      return StatusCode::kNotSupported;
    case api::kErrorInvalidMetricName:
      return StatusCode::kNotFound;
    case api::kErrorInvalidParameter:
      return StatusCode::kInvalidArgument;
    default:
      return StatusCode::kInternal;
  }
}

// "DDDDDDDD:BB:DD.F" or "DDDD:BB:DD.F" (hex).
bool ParsePci(std::string_view id, unsigned* domain, unsigned* bus, unsigned* device) {
  std::string s(id);
  unsigned fn = 0;
  return std::sscanf(s.c_str(), "%x:%x:%x.%x", domain, bus, device, &fn) == 4;
}

}  // namespace

Status FromCuptiResult(api::CUptiResult rc, std::string_view function,
                       api::GetResultStringFn result_string) {
  if (rc == api::kSuccess) return Status::Ok();
  const char* text = nullptr;
  if (result_string != nullptr) (void)result_string(rc, &text);
  std::string msg(function);
  msg += ": ";
  msg += (text != nullptr && *text != '\0') ? text : "CUPTI error";
  msg += " (" + std::to_string(rc) + ")";
  return Status(CodeFor(rc), std::move(msg));
}

Result<std::unique_ptr<Library>> Library::Load(const std::string& path) {
  Result<std::unique_ptr<Library>> lib = LoadHostOnly(path);
  if (!lib.ok()) return lib;
  (*lib)->LoadCuda();
  api::ProfilerInitializeParams p{};
  p.structSize = api::kProfilerInitializeParamsSize;
  NVMLX_RETURN_IF_ERROR(
      (*lib)->Check((*lib)->cuptiProfilerInitialize(&p), "cuptiProfilerInitialize"));
  return lib;
}

Result<std::unique_ptr<Library>> Library::LoadHostOnly(const std::string& path) {
  std::unique_ptr<Library> lib(new Library());
  lib->path_ = path;
  if (const size_t slash = path.rfind('/'); slash != std::string::npos) {
    const std::string nvperf = path.substr(0, slash + 1) + "libnvperf_host.so";
    // Optional: without it CUPTI searches the dynamic linker path itself.
    lib->nvperf_handle_ = dlopen(nvperf.c_str(), RTLD_NOW | RTLD_GLOBAL);
  }
  lib->handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib->handle_ == nullptr) {
    const char* err = dlerror();
    return NotFound("cannot load CUPTI library " + path + ": " + (err ? err : "dlopen failed"));
  }
#define NVMLX_CUPTI_RESOLVE(name, P)                                                       \
  lib->name = reinterpret_cast<api::CUptiResult (*)(api::P*)>(dlsym(lib->handle_, #name)); \
  if (lib->name == nullptr) return NotFound(path + ": no symbol " #name " (CUDA 12.6+ needed)");
  NVMLX_CUPTI_FOR_EACH_FUNCTION(NVMLX_CUPTI_RESOLVE)
#undef NVMLX_CUPTI_RESOLVE
  lib->result_string_ =
      reinterpret_cast<api::GetResultStringFn>(dlsym(lib->handle_, "cuptiGetResultString"));
  return lib;
}

Library::~Library() {
  // Left mapped on purpose: CUPTI registers atexit handlers and threads inside the process, and
  // unmapping it under them crashes at exit. The handles are process-lifetime like the Library.
}

void Library::LoadCuda() {
  cuda_handle_ = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (cuda_handle_ == nullptr) return;
  using InitFn = int (*)(unsigned);
  using CountFn = int (*)(int*);
  using GetFn = int (*)(int*, int);
  using BusIdFn = int (*)(char*, int, int);
  auto init = reinterpret_cast<InitFn>(dlsym(cuda_handle_, "cuInit"));
  auto count = reinterpret_cast<CountFn>(dlsym(cuda_handle_, "cuDeviceGetCount"));
  auto get = reinterpret_cast<GetFn>(dlsym(cuda_handle_, "cuDeviceGet"));
  auto bus_id = reinterpret_cast<BusIdFn>(dlsym(cuda_handle_, "cuDeviceGetPCIBusId"));
  int n = 0;
  if (init == nullptr || count == nullptr || get == nullptr || bus_id == nullptr || init(0) != 0 ||
      count(&n) != 0) {
    return;
  }
  for (int i = 0; i < n; ++i) {
    int dev = 0;
    char buf[32] = {};
    PciAddress a;
    if (get(&dev, i) != 0 || bus_id(buf, sizeof buf, dev) != 0 ||
        !ParsePci(buf, &a.domain, &a.bus, &a.device)) {
      cuda_devices_.clear();  // a partial table would map wrongly: fall back to NVML's order
      return;
    }
    cuda_devices_.push_back(a);
  }
}

size_t Library::CudaIndexFor(std::string_view pci_bus_id, unsigned nvml_index) const {
  PciAddress want;
  if (!ParsePci(pci_bus_id, &want.domain, &want.bus, &want.device)) return nvml_index;
  for (size_t i = 0; i < cuda_devices_.size(); ++i) {
    const PciAddress& a = cuda_devices_[i];
    if (a.domain == want.domain && a.bus == want.bus && a.device == want.device) return i;
  }
  return nvml_index;
}

Result<std::string> Library::ChipName(size_t device_index) const {
  api::DeviceGetChipNameParams p{};
  p.structSize = api::kDeviceGetChipNameParamsSize;
  p.deviceIndex = device_index;
  NVMLX_RETURN_IF_ERROR(Check(cuptiDeviceGetChipName(&p), "cuptiDeviceGetChipName"));
  if (p.pChipName == nullptr) return Internal("cuptiDeviceGetChipName: no name");
  return std::string(p.pChipName);
}

Result<std::vector<uint8_t>> Library::CounterAvailability(size_t device_index) const {
  api::PmGetCounterAvailabilityParams p{};
  p.structSize = api::kPmGetCounterAvailabilityParamsSize;
  p.deviceIndex = device_index;
  NVMLX_RETURN_IF_ERROR(
      Check(cuptiPmSamplingGetCounterAvailability(&p), "cuptiPmSamplingGetCounterAvailability"));
  std::vector<uint8_t> image(p.counterAvailabilityImageSize);
  p.pCounterAvailabilityImage = image.data();
  NVMLX_RETURN_IF_ERROR(
      Check(cuptiPmSamplingGetCounterAvailability(&p), "cuptiPmSamplingGetCounterAvailability"));
  return image;
}

Result<Config> Library::BuildConfig(const std::string& chip,
                                    const std::vector<uint8_t>& availability,
                                    const std::vector<std::string>& metrics) const {
  api::HostInitializeParams init{};
  init.structSize = api::kHostInitializeParamsSize;
  init.profilerType = api::kProfilerTypePmSampling;
  init.pChipName = chip.c_str();
  init.pCounterAvailabilityImage = availability.empty() ? nullptr : availability.data();
  NVMLX_RETURN_IF_ERROR(Check(cuptiProfilerHostInitialize(&init), "cuptiProfilerHostInitialize"));
  api::HostObject* host = init.pHostObject;
  auto build = [&]() -> Result<Config> {
    std::vector<const char*> names;
    for (const std::string& m : metrics) names.push_back(m.c_str());
    api::HostConfigAddMetricsParams add{};
    add.structSize = api::kHostConfigAddMetricsParamsSize;
    add.pHostObject = host;
    add.ppMetricNames = names.data();
    add.numMetrics = names.size();
    NVMLX_RETURN_IF_ERROR(
        Check(cuptiProfilerHostConfigAddMetrics(&add), "cuptiProfilerHostConfigAddMetrics"));
    api::HostGetConfigImageSizeParams size{};
    size.structSize = api::kHostGetConfigImageSizeParamsSize;
    size.pHostObject = host;
    NVMLX_RETURN_IF_ERROR(
        Check(cuptiProfilerHostGetConfigImageSize(&size), "cuptiProfilerHostGetConfigImageSize"));
    Config config;
    config.image.resize(size.configImageSize);
    api::HostGetConfigImageParams get{};
    get.structSize = api::kHostGetConfigImageParamsSize;
    get.pHostObject = host;
    get.configImageSize = config.image.size();
    get.pConfigImage = config.image.data();
    NVMLX_RETURN_IF_ERROR(
        Check(cuptiProfilerHostGetConfigImage(&get), "cuptiProfilerHostGetConfigImage"));
    api::HostGetNumOfPassesParams passes{};
    passes.structSize = api::kHostGetNumOfPassesParamsSize;
    passes.configImageSize = config.image.size();
    passes.pConfigImage = config.image.data();
    NVMLX_RETURN_IF_ERROR(
        Check(cuptiProfilerHostGetNumOfPasses(&passes), "cuptiProfilerHostGetNumOfPasses"));
    config.passes = passes.numOfPasses;
    return config;
  };
  Result<Config> config = build();
  api::HostDeinitializeParams deinit{};
  deinit.structSize = api::kHostDeinitializeParamsSize;
  deinit.pHostObject = host;
  (void)cuptiProfilerHostDeinitialize(&deinit);
  return config;
}

PmHost::PmHost(const Library& lib, std::vector<std::string> metrics)
    : lib_(lib), metrics_(std::move(metrics)) {
  for (const std::string& m : metrics_) names_.push_back(m.c_str());
}

Result<std::shared_ptr<PmHost>> PmHost::Create(const Library& lib, const std::string& chip,
                                               const std::vector<uint8_t>& availability,
                                               const std::vector<std::string>& metrics) {
  std::shared_ptr<PmHost> h(new PmHost(lib, metrics));
  api::HostInitializeParams init{};
  init.structSize = api::kHostInitializeParamsSize;
  init.profilerType = api::kProfilerTypePmSampling;
  init.pChipName = chip.c_str();
  init.pCounterAvailabilityImage = availability.empty() ? nullptr : availability.data();
  NVMLX_RETURN_IF_ERROR(
      lib.Check(lib.cuptiProfilerHostInitialize(&init), "cuptiProfilerHostInitialize"));
  h->host_ = init.pHostObject;
  // The host object evaluates counter data of the metrics it was configured with.
  api::HostConfigAddMetricsParams add{};
  add.structSize = api::kHostConfigAddMetricsParamsSize;
  add.pHostObject = h->host_;
  add.ppMetricNames = h->names_.data();
  add.numMetrics = h->names_.size();
  NVMLX_RETURN_IF_ERROR(
      lib.Check(lib.cuptiProfilerHostConfigAddMetrics(&add), "cuptiProfilerHostConfigAddMetrics"));
  return h;
}

PmHost::~PmHost() {
  if (host_ == nullptr) return;
  api::HostDeinitializeParams d{};
  d.structSize = api::kHostDeinitializeParamsSize;
  d.pHostObject = host_;
  (void)lib_.cuptiProfilerHostDeinitialize(&d);
}

Result<std::unique_ptr<PmSampler>> PmSampler::Start(const Library& lib, Options options,
                                                    std::shared_ptr<const PmHost> host) {
  std::unique_ptr<PmSampler> s(new PmSampler(lib, std::move(options)));
  const Options& o = s->options_;
  uint64_t cpu = util::ThreadCpuNs();
  if (host == nullptr) {
    Result<std::shared_ptr<PmHost>> built = PmHost::Create(lib, o.chip, o.availability, o.metrics);
    if (!built.ok()) return built.status();
    host = std::move(built).value();
  }
  s->host_ = std::move(host);
  s->start_cost_.host_ns = util::ThreadCpuNs() - cpu;
  s->metric_names_ = s->host_->metric_names();

  cpu = util::ThreadCpuNs();
  api::PmEnableParams enable{};
  enable.structSize = api::kPmEnableParamsSize;
  enable.deviceIndex = o.device_index;
  NVMLX_RETURN_IF_ERROR(lib.Check(lib.cuptiPmSamplingEnable(&enable), "cuptiPmSamplingEnable"));
  s->object_ = enable.pPmSamplingObject;
  s->start_cost_.enable_ns = util::ThreadCpuNs() - cpu;

  NVMLX_RETURN_IF_ERROR(s->ConfigureAndStart());
  return s;
}

Status PmSampler::ConfigureAndStart(bool set_config) {
  const Options& o = options_;
  std::vector<const char*>& names = metric_names_;
  uint64_t cpu = util::ThreadCpuNs();
  api::PmSetConfigParams config{};
  config.structSize = api::kPmSetConfigParamsSize;
  config.pPmSamplingObject = object_;
  config.configSize = o.config.image.size();
  config.pConfig = o.config.image.data();
  config.hardwareBufferSize = o.hardware_buffer_bytes;
  if (o.sysclk_trigger) {
    config.samplingInterval =
        static_cast<uint64_t>(static_cast<double>(o.interval_ns) * kAssumedSysclkHz / 1e9);
    config.triggerMode = api::kTriggerGpuSysclkInterval;
    config.hwBufferAppendMode = api::kAppendKeepOldest;  // Turing has no KEEP_LATEST
  } else {
    config.samplingInterval = o.interval_ns;
    config.triggerMode = api::kTriggerGpuTimeInterval;
    config.hwBufferAppendMode = api::kAppendKeepLatest;
  }
  if (set_config) {
    NVMLX_RETURN_IF_ERROR(
        lib_.Check(lib_.cuptiPmSamplingSetConfig(&config), "cuptiPmSamplingSetConfig"));
  }
  start_cost_.set_config_ns = util::ThreadCpuNs() - cpu;

  cpu = util::ThreadCpuNs();
  api::PmGetCounterDataSizeParams size{};
  size.structSize = api::kPmGetCounterDataSizeParamsSize;
  size.pPmSamplingObject = object_;
  size.pMetricNames = names.data();
  size.numMetrics = names.size();
  size.maxSamples = o.max_samples;
  NVMLX_RETURN_IF_ERROR(lib_.Check(lib_.cuptiPmSamplingGetCounterDataSize(&size),
                                   "cuptiPmSamplingGetCounterDataSize"));
  counter_data_.resize(size.counterDataSize);
  NVMLX_RETURN_IF_ERROR(InitCounterData());
  start_cost_.counter_data_ns = util::ThreadCpuNs() - cpu;

  cpu = util::ThreadCpuNs();
  api::PmObjectParams start{};
  start.structSize = api::kPmObjectParamsSize;
  start.pPmSamplingObject = object_;
  NVMLX_RETURN_IF_ERROR(lib_.Check(lib_.cuptiPmSamplingStart(&start), "cuptiPmSamplingStart"));
  started_ = true;
  start_cost_.start_ns = util::ThreadCpuNs() - cpu;
  return Status::Ok();
}

Status PmSampler::Reconfigure(Options options, std::shared_ptr<const PmHost> host,
                              ReconfigureSteps steps) {
  if (object_ == nullptr || host == nullptr || options.device_index != options_.device_index) {
    return InvalidArgument("PM sampling: reconfigure needs an enabled session of the same GPU");
  }
  start_cost_ = StartCost{};
  uint64_t cpu = util::ThreadCpuNs();
  if (started_) {
    api::PmObjectParams stop{};
    stop.structSize = api::kPmObjectParamsSize;
    stop.pPmSamplingObject = object_;
    started_ = false;  // a failed stop leaves nothing to stop again: the destructor disables
    NVMLX_RETURN_IF_ERROR(lib_.Check(lib_.cuptiPmSamplingStop(&stop), "cuptiPmSamplingStop"));
  }
  if (steps.decode_before_config) (void)Decode();
  start_cost_.stop_ns = util::ThreadCpuNs() - cpu;
  options_ = std::move(options);
  host_ = std::move(host);
  metric_names_ = host_->metric_names();
  next_sample_ = 0;
  samples_seen_ = 0;
  return ConfigureAndStart(steps.set_config);
}

PmSampler::~PmSampler() {
  api::PmObjectParams p{};
  p.structSize = api::kPmObjectParamsSize;
  p.pPmSamplingObject = object_;
  if (started_) (void)lib_.cuptiPmSamplingStop(&p);
  if (object_ != nullptr) (void)lib_.cuptiPmSamplingDisable(&p);
  // host_ (shared) is deinitialised by its last owner.
}

Status PmSampler::InitCounterData() {
  api::PmCounterDataImageInitializeParams p{};
  p.structSize = api::kPmCounterDataImageInitializeParamsSize;
  p.pPmSamplingObject = object_;
  p.counterDataSize = counter_data_.size();
  p.pCounterData = counter_data_.data();
  return lib_.Check(lib_.cuptiPmSamplingCounterDataImageInitialize(&p),
                    "cuptiPmSamplingCounterDataImageInitialize");
}

Result<PmSampler::Window> PmSampler::Decode() {
  Window w;
  std::vector<const char*>& metric_names = metric_names_;
  w.means.assign(metric_names.size(), 0.0);
  // Per metric: a sample whose value is not finite (seen: none yet; CUPTI documents NaN for
  // metrics it cannot evaluate) is left out of that metric's mean instead of poisoning it.
  std::vector<double> weight(metric_names.size(), 0.0);
  std::vector<double> values(metric_names.size());
  // The image keeps what was decoded until every sample in it is complete: a sample whose records
  // are only partly in the hardware buffer at this decode stays populated-but-incomplete and
  // completes at the next one. Re-initialising after every decode, as CUPTI's own sample does,
  // would drop the part already decoded, and the decoder would then merge the lost sample's time
  // into the next one, which holds one interval's counts (values too low). So: average the
  // samples completed since the last call (from next_sample_ on), and re-initialise only when
  // nothing is in flight and half the image is used, or when it is full. (The H200's "GR engine
  // at 1/N" was a stalled sampler, not this: docs/validation/h200-pm-sampling.md, runs 6-7.)
  for (int round = 0; round < 4; ++round) {
    api::PmDecodeDataParams decode{};
    decode.structSize = api::kPmDecodeDataParamsSize;
    decode.pPmSamplingObject = object_;
    decode.pCounterDataImage = counter_data_.data();
    decode.counterDataImageSize = counter_data_.size();
    uint64_t cpu = util::ThreadCpuNs();
    NVMLX_RETURN_IF_ERROR(
        lib_.Check(lib_.cuptiPmSamplingDecodeData(&decode), "cuptiPmSamplingDecodeData"));
    w.cpu_decode_ns += util::ThreadCpuNs() - cpu;
    cpu = util::ThreadCpuNs();
    w.overflow = w.overflow || decode.overflow != 0;
    w.stop_reason = decode.decodeStopReason;

    api::PmGetCounterDataInfoParams info{};
    info.structSize = api::kPmGetCounterDataInfoParamsSize;
    info.pCounterDataImage = counter_data_.data();
    info.counterDataImageSize = counter_data_.size();
    NVMLX_RETURN_IF_ERROR(lib_.Check(lib_.cuptiPmSamplingGetCounterDataInfo(&info),
                                     "cuptiPmSamplingGetCounterDataInfo"));
    w.populated = info.numPopulatedSamples;
    w.completed = info.numCompletedSamples;
    log::Debug("PM sampling decode", {{"device", std::to_string(options_.device_index)},
                                      {"total", std::to_string(info.numTotalSamples)},
                                      {"populated", std::to_string(info.numPopulatedSamples)},
                                      {"completed", std::to_string(info.numCompletedSamples)},
                                      {"from", std::to_string(next_sample_)},
                                      {"stop", std::to_string(decode.decodeStopReason)},
                                      {"overflow", std::to_string(decode.overflow)}});
    for (size_t i = next_sample_; i < info.numCompletedSamples; ++i) {
      if (samples_seen_++ < options_.settle_samples) {
        ++w.settling;
        continue;
      }
      api::PmGetSampleInfoParams si{};
      si.structSize = api::kPmGetSampleInfoParamsSize;
      si.pPmSamplingObject = object_;
      si.pCounterDataImage = counter_data_.data();
      si.counterDataImageSize = counter_data_.size();
      si.sampleIndex = i;
      NVMLX_RETURN_IF_ERROR(lib_.Check(lib_.cuptiPmSamplingCounterDataGetSampleInfo(&si),
                                       "cuptiPmSamplingCounterDataGetSampleInfo"));
      api::HostEvaluateToGpuValuesParams ev{};
      ev.structSize = api::kHostEvaluateToGpuValuesParamsSize;
      ev.pHostObject = host_->object();
      ev.pCounterDataImage = counter_data_.data();
      ev.counterDataImageSize = counter_data_.size();
      ev.rangeIndex = i;
      ev.ppMetricNames = metric_names.data();
      ev.numMetrics = metric_names.size();
      ev.pMetricValues = values.data();
      NVMLX_RETURN_IF_ERROR(lib_.Check(lib_.cuptiProfilerHostEvaluateToGpuValues(&ev),
                                       "cuptiProfilerHostEvaluateToGpuValues"));
      const double dt =
          si.endTimestamp > si.startTimestamp ? double(si.endTimestamp - si.startTimestamp) : 1.0;
      for (size_t m = 0; m < values.size(); ++m) {
        if (!std::isfinite(values[m])) {
          ++w.non_finite;
          continue;
        }
        w.means[m] += values[m] * dt;
        weight[m] += dt;
      }
      if (options_.keep_samples) {
        w.detail.push_back({si.startTimestamp, si.endTimestamp, values});
      }
      if (si.endTimestamp > si.startTimestamp) w.covered_ns += si.endTimestamp - si.startTimestamp;
      if (w.samples == 0) w.start_ns = si.startTimestamp;
      w.end_ns = si.endTimestamp;
      ++w.samples;
    }
    next_sample_ = std::max(next_sample_, size_t(info.numCompletedSamples));
    w.cpu_evaluate_ns += util::ThreadCpuNs() - cpu;
    const bool full = decode.decodeStopReason == api::kDecodeStopCounterDataFull;
    const bool settled = info.numPopulatedSamples <= info.numCompletedSamples;
    if (full || options_.fresh_image_each_decode ||
        (settled && 2 * info.numCompletedSamples >= info.numTotalSamples)) {
      cpu = util::ThreadCpuNs();
      NVMLX_RETURN_IF_ERROR(InitCounterData());
      w.cpu_init_ns += util::ThreadCpuNs() - cpu;
      next_sample_ = 0;
      ++w.resets;
    }
    if (!full) break;
  }
  for (size_t m = 0; m < w.means.size(); ++m) {
    w.means[m] = weight[m] > 0 ? w.means[m] / weight[m] : std::nan("");
  }
  return w;
}

}  // namespace nvmlx::cupti
