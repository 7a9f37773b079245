#include "collect/pm_sampling_reader.h"

#include <algorithm>
#include <string>

#include "fields/pm_metrics.h"
#include "util/log.h"

namespace nvmlx::collect {
namespace {

void WarnField(unsigned gpu, const fields::FieldDef& f, std::string_view why) {
  log::Warn(
      "profiling field unavailable through PM sampling: metric not enabled",
      {{"gpu", std::to_string(gpu)}, {"field", std::string(f.name)}, {"err", std::string(why)}});
}

bool NeedsSysclkTrigger(const std::string& chip) {
  return chip.rfind("TU", 0) == 0 || chip == "GA100";
}

}  // namespace

std::unique_ptr<PmSamplingReader> PmSamplingReader::Create(
    const cupti::Library& lib, size_t cuda_index, unsigned gpu,
    const std::vector<const fields::FieldDef*>& requested, const PmSamplingOptions& options) {
  std::vector<const fields::FieldDef*> wanted;
  for (const fields::FieldDef* f : requested) {
    if (std::find(wanted.begin(), wanted.end(), f) != wanted.end()) continue;
    if (fields::PmMetricFor(f->id) == nullptr) {
      WarnField(gpu, *f, fields::PmUnmappedReason(f->id));
      continue;
    }
    wanted.push_back(f);
  }
  if (wanted.empty()) return nullptr;
  std::unique_ptr<PmSamplingReader> r(new PmSamplingReader(lib, options));
  r->gpu_ = gpu;
  auto fail_all = [&](const Status& why) {
    for (const fields::FieldDef* f : wanted) WarnField(gpu, *f, why.ToString());
    return nullptr;
  };
  Result<std::string> chip = lib.ChipName(cuda_index);
  if (!chip.ok()) return fail_all(chip.status());
  r->chip_ = *chip;
  // Without the availability image the host API assumes every counter of the chip; a GPU that
  // hides some (vGPU) then fails at SetConfig, which is reported like any loss.
  Result<std::vector<uint8_t>> availability = lib.CounterAvailability(cuda_index);
  std::vector<uint8_t> avail =
      availability.ok() ? std::move(availability).value() : std::vector<uint8_t>{};

  // The metrics in PmFieldMetrics' priority order; all at once first, then one by one keeping
  // each that leaves the configuration at one pass.
  std::vector<const fields::PmFieldMetric*> order;
  for (const fields::PmFieldMetric& m : fields::PmFieldMetrics()) {
    for (const fields::FieldDef* f : wanted) {
      if (f->id == m.field_id) order.push_back(&m);
    }
  }
  auto names = [](const std::vector<const fields::PmFieldMetric*>& ms) {
    std::vector<std::string> out;
    for (const fields::PmFieldMetric* m : ms) out.emplace_back(m->metric);
    return out;
  };
  std::vector<const fields::PmFieldMetric*> kept;
  cupti::Config config;
  if (Result<cupti::Config> all = lib.BuildConfig(r->chip_, avail, names(order));
      all.ok() && all->passes == 1) {
    kept = order;
    config = std::move(all).value();
  } else {
    for (const fields::PmFieldMetric* m : order) {
      std::vector<const fields::PmFieldMetric*> trial = kept;
      trial.push_back(m);
      Result<cupti::Config> c = lib.BuildConfig(r->chip_, avail, names(trial));
      const fields::FieldDef* f = fields::FindById(m->field_id);
      if (!c.ok()) {
        WarnField(gpu, *f,
                  "metric " + std::string(m->metric) + " not available on " + r->chip_ + ": " +
                      c.status().ToString());
      } else if (c->passes != 1) {
        WarnField(gpu, *f,
                  "would need a second PM-sampling pass on " + r->chip_ +
                      " (PM sampling takes one); the fields before it in "
                      "docs/pm-sampling.md's order keep the pass");
      } else {
        kept = std::move(trial);
        config = std::move(c).value();
      }
    }
  }
  if (kept.empty()) return nullptr;
  std::sort(kept.begin(), kept.end(), [](const fields::PmFieldMetric* a, const fields::PmFieldMetric* b) {
    return a->field_id < b->field_id;
  });
  for (const fields::PmFieldMetric* m : kept) {
    r->fields_.push_back(fields::FindById(m->field_id));
    r->metrics_.emplace_back(m->metric);
    r->to_gpm_units_.push_back(m->to_gpm_units);
  }
  // A fresh config for the sorted order (the image does not depend on the order, the metric
  // list passed to GetCounterDataSize and EvaluateToGpuValues must only be a subset of it).
  cupti::PmSampler::Options& so = r->sampler_options_;
  so.device_index = cuda_index;
  so.chip = r->chip_;
  so.availability = std::move(avail);
  so.metrics = r->metrics_;
  so.config = std::move(config);
  so.interval_ns = static_cast<uint64_t>(options.interval.count()) * 1'000'000u;
  so.sysclk_trigger = NeedsSysclkTrigger(r->chip_);
  // Two collections' samples plus slack; Decode re-initialises the image at half.
  const auto per_collect = static_cast<uint32_t>(
      options.collect_interval / std::max(options.interval, std::chrono::milliseconds(1)));
  so.max_samples = std::clamp<uint32_t>(2 * per_collect + 8, 16, 4096);
  log::Info("profiling fields from PM sampling",
            {{"gpu", std::to_string(gpu)},
             {"chip", r->chip_},
             {"cuda_index", std::to_string(cuda_index)},
             {"fields", std::to_string(r->fields_.size())},
             {"interval_ms", std::to_string(options.interval.count())},
             {"max_samples", std::to_string(so.max_samples)}});
  const Clock::time_point now = Clock::now();
  if (options.paused == nullptr || !options.paused->load()) r->TryStart(now);
  return r;
}

PmSamplingReader::~PmSamplingReader() = default;

void PmSamplingReader::TryStart(Clock::time_point now) {
  Result<std::unique_ptr<cupti::PmSampler>> s = cupti::PmSampler::Start(lib_, sampler_options_);
  if (!s.ok()) {
    NoteLoss(s.status(), now);
    return;
  }
  sampler_ = std::move(s).value();
  started_at_ = now;
  last_sample_at_ = now;
  active_.store(true);
}

void PmSamplingReader::NoteLoss(const Status& why, Clock::time_point now) {
  sampler_.reset();  // stop and disable: the counters are free for whoever wants them
  active_.store(false);
  losses_.fetch_add(1);
  last_values_.clear();
  backoff_ =
      backoff_.count() == 0 ? options_.backoff_min : std::min(options_.backoff_max, backoff_ * 2);
  retry_at_ = now + backoff_;
  if (!in_loss_streak_) {
    in_loss_streak_ = true;
    log::Warn(
        why.code() == StatusCode::kUnavailable
            ? "PM sampling cannot hold the GPU's counters (another profiler has them?); "
              "DCGM_FI_PROF_* series omitted, retrying with backoff (logged once per streak)"
            : "PM sampling failed; DCGM_FI_PROF_* series omitted, retrying with backoff (logged "
              "once per streak)",
        {{"gpu", std::to_string(gpu_)}, {"err", why.ToString()}});
  }
}

Status PmSamplingReader::Read(std::vector<model::Sample>* samples,
                              std::vector<fields::FieldError>* errors) {
  const Clock::time_point now = Clock::now();
  if (options_.paused != nullptr && options_.paused->load()) {
    if (sampler_ != nullptr) {
      sampler_.reset();
      active_.store(false);
      last_values_.clear();
    }
    if (!logged_pause_) {
      logged_pause_ = true;
      log::Info("PM sampling paused; the GPU's counters are free for another profiler",
                {{"gpu", std::to_string(gpu_)}});
    }
    return Status::Ok();
  }
  if (logged_pause_) {
    logged_pause_ = false;
    log::Info("PM sampling resumed", {{"gpu", std::to_string(gpu_)}});
    retry_at_ = now;  // resume at once, not after a loss backoff
    backoff_ = std::chrono::milliseconds(0);
  }
  if (sampler_ == nullptr) {
    if (now < retry_at_) return Status::Ok();
    TryStart(now);
    return Status::Ok();  // a fresh session has no completed sample yet
  }
  Result<cupti::PmSampler::Window> w = sampler_->Decode();
  if (!w.ok()) {
    NoteLoss(w.status(), now);
    return Status::Ok();
  }
  if (w->samples == 0) {
    const auto stall_after = std::max(options_.stall_after, 5 * options_.interval);
    if (now - last_sample_at_ > stall_after) {
      NoteLoss(
          Internal("no PM sample completed for " +
                   std::to_string(
                       std::chrono::duration_cast<std::chrono::milliseconds>(now - last_sample_at_)
                           .count()) +
                   " ms: the session stalled (image populated " + std::to_string(w->populated) +
                   ", completed " + std::to_string(w->completed) + ")"),
          now);
      return Status::Ok();
    }
    samples->insert(samples->end(), last_values_.begin(), last_values_.end());
    return Status::Ok();
  }
  last_sample_at_ = now;
  if (in_loss_streak_) {
    in_loss_streak_ = false;
    log::Info("PM sampling recovered; DCGM_FI_PROF_* series are back",
              {{"gpu", std::to_string(gpu_)}, {"losses", std::to_string(losses_.load())}});
  }
  backoff_ = std::chrono::milliseconds(0);
  last_values_.clear();
  for (size_t i = 0; i < fields_.size(); ++i) {
    Result<model::Value> v = fields::FromGpm(*fields_[i], w->means[i] * to_gpm_units_[i]);
    if (!v.ok()) {  // a negative or non-finite mean: no value this window (logged once)
      errors->push_back({fields_[i]->id, v.status()});
      continue;
    }
    last_values_.push_back({fields_[i]->id, std::move(v).value()});
  }
  samples->insert(samples->end(), last_values_.begin(), last_values_.end());
  return Status::Ok();
}

ProfilingSource::Clock::time_point PmSamplingReader::ReadyAt() const {
  // One completed sample.
  return started_at_ + options_.interval + std::chrono::milliseconds(50);
}

ProfilingSource::Clock::time_point PmSamplingReader::OnceReadyAt() const {
  // A few completed samples.
  return started_at_ + 3 * options_.interval + std::chrono::milliseconds(50);
}

}  // namespace nvmlx::collect
