// Collector's field plan: what the collectors list asks each entity to read, built at start and
// replaced by a reload (Collector::SetEntries); each GPU's workers rebuild their readers from it.
#include <algorithm>
#include <memory>
#include <vector>

#include "collect/collector.h"
#include "fields/field_ids.h"
#include "util/log.h"

namespace nvmlx::collect {
namespace {

constexpr int kXidErrorsField = fields::ids::kXidErrors;
constexpr int kXidCountField = fields::ids::kXidErrorsCount;
constexpr int kClockEventsCountField = fields::ids::kClockEventsCount;

// Fields of the given cost among the enabled metric rows (label rows are read at start-up).
std::vector<const fields::FieldDef*> MetricFields(const std::vector<config::CollectorEntry>& rows,
                                                  fields::Cost cost) {
  std::vector<const fields::FieldDef*> out;
  for (const auto& row : rows) {
    if (row.type == config::MetricType::kLabel) continue;
    const fields::FieldDef* f = row.field;
    if (f->source != fields::Source::kDevice || f->cost != cost) continue;
    if (f->read == nullptr && f->nvml_field_id == 0) continue;
    if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
  }
  return out;
}

// The enabled metric rows that GPM computes (DCGM_FI_PROF_* with a GPM metric id).
std::vector<const fields::FieldDef*> GpmFields(const std::vector<config::CollectorEntry>& rows) {
  std::vector<const fields::FieldDef*> out;
  for (const auto& row : rows) {
    if (row.type == config::MetricType::kLabel) continue;
    const fields::FieldDef* f = row.field;
    if (f->source != fields::Source::kProfiling || f->gpm_metric_id == 0) continue;
    if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
  }
  return out;
}

std::vector<const fields::FieldDef*> OfScope(const std::vector<const fields::FieldDef*>& all,
                                             FieldScope scope) {
  std::vector<const fields::FieldDef*> out;
  for (const fields::FieldDef* f : all) {
    if (ScopeOf(*f) == scope) out.push_back(f);
  }
  return out;
}

}  // namespace

std::shared_ptr<const Collector::Plan> Collector::MakePlan(
    const std::vector<config::CollectorEntry>& entries, uint64_t version) {
  auto plan = std::make_shared<Plan>();
  plan->version = version;
  const auto fast_fields = MetricFields(entries, fields::Cost::kFast);
  const auto slow_fields = MetricFields(entries, fields::Cost::kSlow);
  const auto gpm_fields = GpmFields(entries);
  plan->whole = {fast_fields, slow_fields, gpm_fields};
  plan->mig_gpu = {OfScope(fast_fields, FieldScope::kGpu), OfScope(slow_fields, FieldScope::kGpu),
                   OfScope(gpm_fields, FieldScope::kGpu)};
  plan->instance = {OfScope(fast_fields, FieldScope::kInstance),
                    OfScope(slow_fields, FieldScope::kInstance),
                    OfScope(gpm_fields, FieldScope::kInstance)};
  for (const auto& row : entries) {
    if (row.type == config::MetricType::kLabel) {
      plan->labels.push_back(row.field);
      continue;
    }
    if (row.field->id == kXidErrorsField) plan->xid_last = true;
    if (row.field->id == kXidCountField) plan->xid_counts = true;
    if (row.field->id == kClockEventsCountField) plan->clock_events = true;
    if (row.field->id == fields::ids::kGpuHealthStatus) plan->health = true;
    if (row.field->id == fields::ids::kP2pStatus) plan->p2p = true;
  }
  return plan;
}

std::shared_ptr<const Collector::Plan> Collector::CurrentPlan() const {
  util::MutexLock lock(&plan_mu_);
  return plan_;
}

bool Collector::SetEntries(const std::vector<config::CollectorEntry>& entries) {
  std::shared_ptr<const Plan> plan;
  {
    util::MutexLock lock(&plan_mu_);
    plan = MakePlan(entries, plan_->version + 1);
    plan_ = plan;
  }
  return (plan->xid_last || plan->xid_counts || plan->health) && xids_ == nullptr;
}

void Collector::ApplyFastPlan(size_t i, const Plan& plan) {
  Device& d = *devices_[i];
  if (d.fast_version == plan.version) return;
  d.fast_version = plan.version;
  const EntityFields& f = plan.For(d.scope);
  d.fast = std::make_unique<fields::DeviceReader>(lib_, d.handle, f.fast);
  std::vector<model::Sample> ignored_samples;  // the priming read of rate fields, as in Create
  std::vector<fields::FieldError> ignored_errors;
  d.fast->Read(&ignored_samples, &ignored_errors);
  d.gpm.reset();  // one PM-sampling session per GPU: release the old one first
  d.gpm = MakeProfilingSource(lib_, d, f.gpm);
  const bool clock_events = plan.clock_events && d.scope != Device::Scope::kInstance;
  if (!clock_events) {
    d.clock_events.reset();
  } else if (d.clock_events == nullptr) {
    d.clock_events = std::make_unique<ClockEventWindow>(options_.clock_events_window);
  }
  if (!plan.health || d.parent) {
    d.pcie_replays.reset();
    d.nvlink_health.reset();
  } else if (d.pcie_replays == nullptr) {
    d.pcie_replays = std::make_unique<PcieReplayWindow>();
    d.nvlink_health = std::make_unique<NvlinkHealthReader>(lib_);
  }
}

void Collector::ApplySlowPlan(size_t i, const Plan& plan) {
  Device& d = *devices_[i];
  if (d.slow_version == plan.version) return;
  d.slow_version = plan.version;
  d.slow = std::make_unique<fields::DeviceReader>(lib_, d.handle, plan.For(d.scope).slow);
}

}  // namespace nvmlx::collect
