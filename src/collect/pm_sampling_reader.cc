#include "collect/pm_sampling_reader.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "fields/pm_metrics.h"
#include "fields/pm_plan.h"
#include "util/cpu_time.h"
#include "util/log.h"

namespace nvmlx::collect {
namespace {

using std::chrono::milliseconds;

void WarnField(unsigned gpu, const fields::FieldDef& f, std::string_view why) {
  log::Warn(
      "profiling field unavailable through PM sampling: metric not enabled",
      {{"gpu", std::to_string(gpu)}, {"field", std::string(f.name)}, {"err", std::string(why)}});
}

bool NeedsSysclkTrigger(const std::string& chip) {
  return chip.rfind("TU", 0) == 0 || chip == "GA100";
}

int64_t Ms(ProfilingSource::Clock::duration d) {
  return std::chrono::duration_cast<milliseconds>(d).count();
}

// The plan of a GPU's configurations (fields/pm_plan.h), and every one-pass configuration the
// host API built while planning, by metric set: the image does not depend on the order of the
// names (those given to GetCounterDataSize and EvaluateToGpuValues need only be a subset of it),
// so each configuration chosen is built once.
struct PlannedConfigurations {
  fields::PmPlan plan;
  std::map<std::set<std::string>, cupti::Config> built;
};
PlannedConfigurations PlanConfigurations(const cupti::Library& lib, const std::string& chip,
                                         const std::vector<uint8_t>& avail,
                                         const std::vector<const fields::PmFieldMetric*>& wanted,
                                         const std::vector<int>& pinned) {
  PlannedConfigurations out;
  out.plan = fields::PlanPmConfigurations(
      wanted, pinned, chip, [&](const std::vector<std::string>& metrics) {
        Result<cupti::Config> c = lib.BuildConfig(chip, avail, metrics);
        if (!c.ok()) return Result<size_t>(c.status());
        const size_t passes = c->passes;
        if (passes == 1) out.built[{metrics.begin(), metrics.end()}] = std::move(c).value();
        return Result<size_t>(passes);
      });
  return out;
}

// Per field, the positions in `served` of the fields bounding it (PmFieldMetric::bounded_by).
std::vector<std::vector<size_t>> BoundsOf(const std::vector<const fields::FieldDef*>& served) {
  std::vector<std::vector<size_t>> out(served.size());
  for (size_t i = 0; i < served.size(); ++i) {
    for (int bound : fields::PmMetricFor(served[i]->id)->bounded_by) {
      for (size_t j = 0; j < served.size(); ++j) {
        if (bound != 0 && served[j]->id == bound) out[i].push_back(j);
      }
    }
  }
  return out;
}

}  // namespace

std::unique_ptr<PmSamplingReader> PmSamplingReader::Create(
    const cupti::Library& lib, size_t cuda_index, unsigned gpu,
    const std::vector<const fields::FieldDef*>& requested, const PmSamplingOptions& options) {
  std::vector<const fields::PmFieldMetric*> wanted;  // in fields/pm_metrics.cc's order
  for (const fields::FieldDef* f : requested) {
    if (fields::PmMetricFor(f->id) == nullptr) WarnField(gpu, *f, fields::PmUnmappedReason(f->id));
  }
  for (const fields::PmFieldMetric& m : fields::PmFieldMetrics()) {
    if (std::any_of(requested.begin(), requested.end(),
                    [&](const fields::FieldDef* f) { return f->id == m.field_id; })) {
      wanted.push_back(&m);
    }
  }
  if (wanted.empty()) return nullptr;
  std::unique_ptr<PmSamplingReader> r(new PmSamplingReader(lib, options));
  r->gpu_ = gpu;
  auto fail_all = [&](const Status& why) {
    for (const fields::PmFieldMetric* m : wanted) {
      WarnField(gpu, *fields::FindById(m->field_id), why.ToString());
    }
    return nullptr;
  };
  Result<std::string> chip = lib.ChipName(cuda_index);
  if (!chip.ok()) return fail_all(chip.status());
  r->chip_ = *chip;
  // Without the availability image the host API assumes every counter of the chip; a GPU that
  // hides some (vGPU) then fails at SetConfig, which is reported like any loss.
  Result<std::vector<uint8_t>> availability = lib.CounterAvailability(cuda_index);
  const std::vector<uint8_t> avail =
      availability.ok() ? std::move(availability).value() : std::vector<uint8_t>{};

  auto [plan, built] = PlanConfigurations(lib, r->chip_, avail, wanted, options.pinned);
  for (const fields::PmPlan::Dropped& d : plan.dropped) {
    WarnField(gpu, *fields::FindById(d.metric->field_id), d.why);
  }
  if (plan.configurations.empty()) return nullptr;

  // fields_ in ascending id; each configuration refers to its fields by index.
  std::vector<const fields::PmFieldMetric*> served;
  for (const auto& config : plan.configurations) {
    for (const fields::PmFieldMetric* m : config) {
      if (std::find(served.begin(), served.end(), m) == served.end()) served.push_back(m);
    }
  }
  std::sort(served.begin(), served.end(),
            [](const fields::PmFieldMetric* a, const fields::PmFieldMetric* b) {
              return a->field_id < b->field_id;
            });
  for (const fields::PmFieldMetric* m : served) {
    r->fields_.push_back(fields::FindById(m->field_id));
    r->metrics_.emplace_back(m->metric);
    r->to_gpm_units_.push_back(m->to_gpm_units);
  }
  // Two collections' samples plus slack; Decode re-initialises the image at half.
  const auto per_collect =
      static_cast<uint32_t>(options.collect_interval / std::max(options.interval, milliseconds(1)));
  for (const auto& config : plan.configurations) {
    Slot slot;
    cupti::PmSampler::Options& so = slot.sampler;
    for (const fields::PmFieldMetric* m : config) {
      const size_t index =
          static_cast<size_t>(std::find(served.begin(), served.end(), m) - served.begin());
      slot.fields.push_back(index);
    }
    // Ascending field id within the configuration too (the image does not depend on the order;
    // the names given to GetCounterDataSize and EvaluateToGpuValues must be a subset of it).
    std::sort(slot.fields.begin(), slot.fields.end());
    for (size_t index : slot.fields) so.metrics.push_back(r->metrics_[index]);
    // Every configuration of the plan was built by the planner, as one pass.
    auto image = built.find({so.metrics.begin(), so.metrics.end()});
    if (image == built.end()) {  // not reached: the planner asked for each set it returns
      for (size_t index : slot.fields) {
        WarnField(gpu, *r->fields_[index], "configuration not built");
      }
      continue;
    }
    so.config = image->second;
    so.device_index = cuda_index;
    so.chip = r->chip_;
    so.availability = avail;
    so.interval_ns = static_cast<uint64_t>(options.interval.count()) * 1'000'000u;
    so.sysclk_trigger = NeedsSysclkTrigger(r->chip_);
    so.max_samples = std::clamp<uint32_t>(2 * per_collect + 8, 16, 4096);
    so.settle_samples = options.settle_samples;
    r->slots_.push_back(std::move(slot));
  }
  if (r->slots_.empty()) return nullptr;
  // Alternating: each configuration live long enough for three samples after those it settles
  // over (the first completes one interval after the start) and for min_dwell, in whole
  // collections.
  if (r->slots_.size() > 1) {
    const auto collect = std::max(options.collect_interval, milliseconds(1));
    const auto live =
        std::max<milliseconds>((3 + options.settle_samples) * options.interval, options.min_dwell);
    r->dwell_ = static_cast<size_t>((live + collect - milliseconds(1)) / collect);
    r->dwell_ = std::max<size_t>(r->dwell_, 1);
  }
  r->last_values_.resize(r->fields_.size());
  r->coverage_.assign(r->fields_.size(), 0.0);
  r->bounds_ = BoundsOf(r->fields_);
  r->held_.assign(r->fields_.size(), false);
  r->ResetDwell();
  std::string layout;
  for (size_t s = 0; s < r->slots_.size(); ++s) layout += (s == 0 ? "" : " | ") + r->SlotName(s);
  log::Info("profiling fields from PM sampling",
            {{"gpu", std::to_string(gpu)},
             {"chip", r->chip_},
             {"cuda_index", std::to_string(cuda_index)},
             {"fields", std::to_string(r->fields_.size())},
             {"configurations", std::to_string(r->slots_.size())},
             {"layout", layout},
             {"dwell_collections", std::to_string(r->dwell_)},
             {"interval_ms", std::to_string(options.interval.count())},
             {"max_samples", std::to_string(r->slots_[0].sampler.max_samples)}});
  const Clock::time_point now = Clock::now();
  r->last_read_at_ = now;
  if (options.paused == nullptr || !options.paused->load()) r->StartFrom(0, now);
  return r;
}

PmSamplingReader::~PmSamplingReader() = default;

std::string PmSamplingReader::SlotName(size_t slot) const {
  std::string out;
  for (size_t index : slots_[slot].fields) {
    if (!out.empty()) out += ",";
    std::string_view name = fields_[index]->name;
    if (name.rfind("DCGM_FI_PROF_", 0) == 0) name.remove_prefix(13);
    out += name;
  }
  return out;
}

std::vector<std::vector<size_t>> PmSamplingReader::configuration_fields() const {
  std::vector<std::vector<size_t>> out;
  for (const Slot& s : slots_) out.push_back(s.fields);
  return out;
}

void PmSamplingReader::StartFrom(size_t from, Clock::time_point now) {
  for (size_t k = 0; k < slots_.size(); ++k) {
    const size_t s = (from + k) % slots_.size();
    if (now < slots_[s].retry_at) continue;
    Slot& slot = slots_[s];
    uint64_t host_cpu_ns = 0;  // 0 once the slot has its host
    if (slot.host == nullptr) {
      const uint64_t cpu = util::ThreadCpuNs();
      Result<std::shared_ptr<cupti::PmHost>> host = cupti::PmHost::Create(
          lib_, slot.sampler.chip, slot.sampler.availability, slot.sampler.metrics);
      if (!host.ok()) {
        NoteLoss(s, host.status(), now);
        continue;
      }
      slot.host = std::move(host).value();
      host_cpu_ns = util::ThreadCpuNs() - cpu;
    }
    Result<std::unique_ptr<cupti::PmSampler>> started =
        cupti::PmSampler::Start(lib_, slot.sampler, slot.host);
    if (!started.ok()) {
      NoteLoss(s, started.status(), now);
      // HARDWARE_BUSY: another profiler holds the whole GPU, and every configuration would get
      // the same answer: one loss, one backoff for all of them.
      if (started.status().code() == StatusCode::kUnavailable) {
        for (Slot& other : slots_) {
          other.retry_at = slots_[s].retry_at;
          other.backoff = slots_[s].backoff;
        }
        return;
      }
      continue;
    }
    sampler_ = std::move(started).value();
    const cupti::PmSampler::StartCost& cost = sampler_->start_cost();
    log::Debug("PM sampling configuration started",
               {{"gpu", std::to_string(gpu_)},
                {"configuration", SlotName(s)},
                {"cpu_us_stop_previous", std::to_string(release_cpu_ns_ / 1000)},
                {"cpu_us_host_built", std::to_string(host_cpu_ns / 1000)},
                {"cpu_us_enable", std::to_string(cost.enable_ns / 1000)},
                {"cpu_us_set_config", std::to_string(cost.set_config_ns / 1000)},
                {"cpu_us_counter_data", std::to_string(cost.counter_data_ns / 1000)},
                {"cpu_us_start", std::to_string(cost.start_ns / 1000)}});
    release_cpu_ns_ = 0;
    if (started_at_ == Clock::time_point{}) started_at_ = now;
    ++sessions_started_;
    for (size_t index : slot.fields) held_[index] = false;  // measured again
    // No steady hold until a regular switch gives it a reference (Read()).
    slot.reference.assign(fields_.size(), DwellStat{});
    ResetDwell();
    live_ = s;
    live_reads_ = 0;
    period_at_ = now;
    active_.store(true);
    return;
  }
}

void PmSamplingReader::Release() {
  const uint64_t cpu = util::ThreadCpuNs();
  sampler_.reset();  // stop and disable: the counters are free for whoever wants them
  release_cpu_ns_ = util::ThreadCpuNs() - cpu;
  active_.store(false);
}

void PmSamplingReader::NoteLoss(size_t slot, const Status& why, Clock::time_point now) {
  Slot& s = slots_[slot];
  if (sampler_ != nullptr && live_ == slot) Release();
  losses_.fetch_add(1);
  for (size_t index : s.fields) last_values_[index].reset();
  s.quiet = Clock::duration(0);
  s.backoff =
      s.backoff.count() == 0 ? options_.backoff_min : std::min(options_.backoff_max, s.backoff * 2);
  s.retry_at = now + s.backoff;
  if (s.in_loss_streak) return;
  s.in_loss_streak = true;
  log::Warn(
      why.code() == StatusCode::kUnavailable
          ? "PM sampling cannot hold the GPU's counters (another profiler has them?); "
            "DCGM_FI_PROF_* series omitted, retrying with backoff (logged once per streak)"
          : "PM sampling failed; DCGM_FI_PROF_* series omitted, retrying with backoff "
            "(logged once per streak)",
      {{"gpu", std::to_string(gpu_)}, {"configuration", SlotName(slot)}, {"err", why.ToString()}});
}

void PmSamplingReader::DecodeLive(Clock::time_point now, Clock::duration window,
                                  std::vector<fields::FieldError>* errors) {
  const size_t s = live_;
  Slot& slot = slots_[s];
  Result<cupti::PmSampler::Window> w = sampler_->Decode();
  if (!w.ok()) {
    NoteLoss(s, w.status(), now);
    return;
  }
  if (w->samples == 0) {
    slot.quiet += now - period_at_;
    period_at_ = now;
    const auto stall_after = std::max<Clock::duration>(options_.stall_after, 5 * options_.interval);
    if (slot.quiet > stall_after) {
      NoteLoss(
          s,
          Internal("no PM sample completed for " + std::to_string(Ms(slot.quiet)) +
                   " ms: the session stalled (image populated " + std::to_string(w->populated) +
                   ", completed " + std::to_string(w->completed) + ")"),
          now);
    }
    return;
  }
  period_at_ = now;
  slot.measured_at = now;
  slot.quiet = Clock::duration(0);
  slot.backoff = milliseconds(0);
  if (slot.in_loss_streak) {
    slot.in_loss_streak = false;
    log::Info("PM sampling recovered; DCGM_FI_PROF_* series are back",
              {{"gpu", std::to_string(gpu_)},
               {"configuration", SlotName(s)},
               {"losses", std::to_string(losses_.load())}});
  }
  const double window_ns = std::max(1.0, double(std::chrono::nanoseconds(window).count()));
  const double measured = std::min(1.0, double(w->covered_ns) / window_ns);
  for (size_t k = 0; k < slot.fields.size(); ++k) {
    const size_t index = slot.fields[k];
    Result<model::Value> v = fields::FromGpm(*fields_[index], w->means[k] * to_gpm_units_[index]);
    if (!v.ok()) {  // a negative or non-finite mean: no value this window (logged once)
      errors->push_back({fields_[index]->id, v.status()});
      last_values_[index].reset();
      continue;
    }
    last_values_[index] = std::move(v).value();
    coverage_[index] = measured;
    const double gpm = w->means[k] * to_gpm_units_[index];
    if (std::isfinite(gpm)) {
      dwell_windows_[index].Add(gpm);
    }
  }
  // Fields held at 0 by a bound: measured through it while it stays idle; the first window in
  // which it rises ends the hold (the value stays the last one, as a field not live does).
  for (size_t index = 0; index < fields_.size(); ++index) {
    if (!held_[index]) continue;
    if (BoundIdle(index)) {
      coverage_[index] = measured;
    } else {
      held_[index] = false;
    }
  }
}

bool PmSamplingReader::BoundIdle(size_t index) const {
  const std::vector<size_t>& live = slots_[live_].fields;
  for (size_t b : bounds_[index]) {
    if (std::find(live.begin(), live.end(), b) == live.end()) continue;
    const double max = dwell_windows_[b].max;
    if (!std::isnan(max) && max <= fields::kPmIdleBoundPercent) return true;
  }
  return false;
}

bool PmSamplingReader::HoldByBound(size_t slot) {
  const std::vector<size_t>& f = slots_[slot].fields;
  if (f.empty() || !std::all_of(f.begin(), f.end(), [&](size_t i) { return BoundIdle(i); })) {
    return false;
  }
  for (size_t index : f) {
    Result<model::Value> zero = fields::FromGpm(*fields_[index], 0.0);
    if (!zero.ok()) return false;  // not reached: 0 converts in every unit
    last_values_[index] = std::move(zero).value();
    for (size_t b : bounds_[index]) coverage_[index] = std::max(coverage_[index], coverage_[b]);
    held_[index] = true;
  }
  // Served as 0, not as measured: no steady hold on these values once the bound rises.
  std::fill(slots_[slot].reference.begin(), slots_[slot].reference.end(), DwellStat{});
  return true;
}

bool PmSamplingReader::HoldSteady(size_t slot, Clock::time_point now) const {
  const Slot& s = slots_[slot];
  if (options_.steady_hold.count() <= 0 || s.fields.empty() || s.reference.empty() ||
      now - s.measured_at >= options_.steady_hold) {
    return false;
  }
  const std::vector<size_t>& live = slots_[live_].fields;
  for (size_t index : s.fields) {
    if (bounds_[index].empty() || !last_values_[index].has_value()) return false;
    size_t compared = 0;
    for (size_t b : bounds_[index]) {
      if (std::find(live.begin(), live.end(), b) == live.end()) continue;
      const DwellStat now_stat = dwell_windows_[b].Stat();
      const DwellStat& then = s.reference[b];
      if (std::isnan(now_stat.mean) || std::isnan(then.mean)) continue;
      const double noise = 2 * std::hypot(now_stat.std_error, then.std_error);
      if (std::fabs(now_stat.mean - then.mean) > std::max(fields::kPmSteadyBoundPoints, noise)) {
        return false;
      }
      ++compared;
    }
    if (compared == 0) return false;
  }
  return true;
}

void PmSamplingReader::DwellWindows::Add(double mean) {
  max = std::isnan(max) ? mean : std::max(max, mean);
  sum += mean;
  sum_squares += mean * mean;
  ++count;
}

PmSamplingReader::DwellStat PmSamplingReader::DwellWindows::Stat() const {
  DwellStat out;
  const double n = double(count);
  if (count == 0) return out;
  out.mean = sum / n;
  if (count > 1) {
    const double variance = std::max(0.0, (sum_squares - n * out.mean * out.mean) / (n - 1));
    out.std_error = std::sqrt(variance / n);
  }
  return out;
}

std::vector<PmSamplingReader::DwellStat> PmSamplingReader::DwellStats() const {
  std::vector<DwellStat> out(dwell_windows_.size());
  for (size_t i = 0; i < dwell_windows_.size(); ++i) out[i] = dwell_windows_[i].Stat();
  return out;
}

size_t PmSamplingReader::NextToMeasure(Clock::time_point now) {
  for (size_t k = 1; k < slots_.size(); ++k) {
    const size_t s = (live_ + k) % slots_.size();
    if (now < slots_[s].retry_at || HoldByBound(s) || HoldSteady(s, now)) continue;
    return s;
  }
  return live_;
}

void PmSamplingReader::ResetDwell() { dwell_windows_.assign(fields_.size(), DwellWindows{}); }

Status PmSamplingReader::Read(std::vector<model::Sample>* samples,
                              std::vector<fields::FieldError>* errors) {
  const Clock::time_point now = Clock::now();
  const Clock::duration window = now - last_read_at_;
  last_read_at_ = now;
  std::fill(coverage_.begin(), coverage_.end(), 0.0);
  if (options_.paused != nullptr && options_.paused->load()) {
    if (sampler_ != nullptr) Release();
    for (auto& v : last_values_) v.reset();
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
    for (Slot& s : slots_) {  // resume at once, not after a loss backoff
      s.retry_at = now;
      s.backoff = milliseconds(0);
    }
  }
  if (sampler_ == nullptr) {
    StartFrom(live_, now);  // a fresh session has no completed sample yet
  } else {
    DecodeLive(now, window, errors);
    if (sampler_ == nullptr) {
      StartFrom(live_ + 1, now);  // lost: the next configuration whose backoff has passed
    } else if (slots_.size() > 1 && ++live_reads_ >= dwell_) {
      // The next configuration whose backoff has passed and whose fields are not held by an
      // idle or steady bound; none: the live one stays, for a new dwell. A regular switch gives
      // the new configuration the ending dwell's means as its steady-hold reference.
      live_reads_ = 0;
      const size_t next = NextToMeasure(now);
      std::vector<DwellStat> ending = DwellStats();
      ResetDwell();
      if (next != live_) {
        Release();
        StartFrom(next, now);
        if (sampler_ != nullptr && live_ == next) slots_[next].reference = std::move(ending);
      }
    }
  }
  for (size_t i = 0; i < fields_.size(); ++i) {
    if (last_values_[i].has_value()) samples->push_back({fields_[i]->id, *last_values_[i]});
  }
  return Status::Ok();
}

void PmSamplingReader::Coverage(std::vector<model::FieldCoverage>* out) const {
  // Ascending id (fields_' order); a pinned field, in every configuration, names the first.
  for (size_t index = 0; index < fields_.size(); ++index) {
    size_t first = 0;
    while (first < slots_.size() &&
           std::find(slots_[first].fields.begin(), slots_[first].fields.end(), index) ==
               slots_[first].fields.end()) {
      ++first;
    }
    out->push_back({fields_[index]->id, coverage_[index], first});
  }
}

ProfilingSource::Clock::time_point PmSamplingReader::ReadyAt() const {
  // One completed sample.
  return started_at_ + options_.interval + milliseconds(50);
}

ProfilingSource::Clock::time_point PmSamplingReader::OnceReadyAt() const {
  // A few completed samples.
  return started_at_ + 3 * options_.interval + milliseconds(50);
}

}  // namespace nvmlx::collect
