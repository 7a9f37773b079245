#include "collect/gpm_reader.h"

#include <algorithm>
#include <span>
#include <string>

#include "util/log.h"

namespace nvmlx::collect {

std::unique_ptr<GpmReader> GpmReader::Create(const nvml::Library& lib, nvml::Device device,
                                             unsigned gpu,
                                             const std::vector<const fields::FieldDef*>& fields,
                                             std::optional<unsigned> gpu_instance_id) {
  std::vector<const fields::FieldDef*> gpm;
  for (const fields::FieldDef* f : fields) {
    if (f->gpm_metric_id > 0 && std::find(gpm.begin(), gpm.end(), f) == gpm.end()) {
      gpm.push_back(f);
    }
  }
  if (gpm.empty()) return nullptr;
  std::sort(gpm.begin(), gpm.end(),
            [](const fields::FieldDef* a, const fields::FieldDef* b) { return a->id < b->id; });

  std::unique_ptr<GpmReader> r(new GpmReader(lib, device, gpu_instance_id));
  Status why = Status::Ok();
  if (Result<bool> supported = lib.GpmSupported(device); !supported.ok()) {
    why = supported.status();
  } else if (!*supported) {
    why = NotSupported("GPM is not supported on this GPU (Hopper or newer required)");
  }
  for (size_t i = 0; why.ok() && i < r->samples_.size(); ++i) {
    Result<nvml::GpmSample> s = lib.GpmSampleAlloc();
    if (!s.ok()) {
      why = s.status();
    } else {
      r->samples_[i] = std::move(s).value();
    }
  }
  if (!why.ok()) {
    // DCGM says "metric not enabled" for profiling fields a GPU cannot give; so do we, once per
    // field and GPU, and the series are simply absent.
    for (const fields::FieldDef* f : gpm) {
      if (gpu_instance_id) {
        log::Warn("profiling field unavailable on this MIG instance: metric not enabled",
                  {{"gpu", std::to_string(gpu)},
                   {"GPU_I_ID", std::to_string(*gpu_instance_id)},
                   {"field", std::string(f->name)},
                   {"err", why.ToString()}});
        continue;
      }
      log::Warn(
          "profiling field unavailable on this GPU: metric not enabled",
          {{"gpu", std::to_string(gpu)}, {"field", std::string(f->name)}, {"err", why.ToString()}});
    }
    return nullptr;
  }

  r->fields_ = std::move(gpm);
  for (const fields::FieldDef* f : r->fields_) {
    auto it = std::find(r->metric_ids_.begin(), r->metric_ids_.end(), f->gpm_metric_id);
    if (it == r->metric_ids_.end()) {
      r->metric_ids_.push_back(f->gpm_metric_id);
    }
  }
  std::sort(r->metric_ids_.begin(), r->metric_ids_.end());
  for (const fields::FieldDef* f : r->fields_) {
    auto it = std::lower_bound(r->metric_ids_.begin(), r->metric_ids_.end(), f->gpm_metric_id);
    r->field_metric_.push_back(static_cast<size_t>(it - r->metric_ids_.begin()));
  }
  // The priming sample. A failure here surfaces on the first real Read(), which then primes.
  std::vector<model::Sample> ignored_samples;
  std::vector<fields::FieldError> ignored_errors;
  (void)r->Read(&ignored_samples, &ignored_errors);
  return r;
}

Status GpmReader::Read(std::vector<model::Sample>* samples,
                       std::vector<fields::FieldError>* errors) {
  const Clock::time_point now = Clock::now();
  if (has_previous_ && now < ReadyAt()) {
    samples->insert(samples->end(), last_values_.begin(), last_values_.end());
    return Status::Ok();
  }
  const int next = has_previous_ ? 1 - current_ : current_;
  if (Status st = TakeSample(samples_[next]); !st.ok()) return st;
  last_sample_time_ = now;
  if (!has_previous_) {
    has_previous_ = true;
    return Status::Ok();
  }
  const nvml::GpmSample& previous = samples_[current_];
  const nvml::GpmSample& latest = samples_[next];
  current_ = next;

  // Batches of at most kGpmMaxMetricsPerCall ids (older drivers misbehave with large requests).
  std::vector<std::optional<Result<double>>> values(metric_ids_.size());
  for (size_t begin = 0; begin < metric_ids_.size(); begin += nvml::kGpmMaxMetricsPerCall) {
    const size_t n = std::min(nvml::kGpmMaxMetricsPerCall, metric_ids_.size() - begin);
    auto batch = lib_.GpmMetricsGet(previous, latest,
                                    std::span<const unsigned>(metric_ids_.data() + begin, n));
    if (!batch.ok()) {
      // Already paired: the latest sample is the baseline of the next window.
      last_values_.clear();
      return batch.status();
    }
    for (size_t i = 0; i < n; ++i) values[begin + i] = std::move((*batch)[i]);
  }
  last_values_.clear();
  for (size_t i = 0; i < fields_.size(); ++i) {
    const Result<double>& v = *values[field_metric_[i]];
    if (!v.ok()) {
      errors->push_back({fields_[i]->id, v.status()});
      continue;
    }
    Result<model::Value> value = fields::FromGpm(*fields_[i], *v);
    if (!value.ok()) {
      errors->push_back({fields_[i]->id, value.status()});
      continue;
    }
    last_values_.push_back({fields_[i]->id, std::move(value).value()});
  }
  samples->insert(samples->end(), last_values_.begin(), last_values_.end());
  return Status::Ok();
}

Status GpmReader::TakeSample(const nvml::GpmSample& sample) const {
  if (gpu_instance_id_) return lib_.GpmMigSampleGet(device_, *gpu_instance_id_, sample);
  return lib_.GpmSampleGet(device_, sample);
}

}  // namespace nvmlx::collect
