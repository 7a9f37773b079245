// Collector, part 3: applying a field plan (plan/field_plan.h) to one GPU's readers. A reload
// replaces the plan (SetPlan); each GPU's workers rebuild what changed before their next read.
#include <memory>
#include <utility>
#include <vector>

#include "collect/collector.h"

namespace nvmlx::collect {

bool Collector::SetPlan(std::shared_ptr<const plan::FieldPlan> plan) {
  const bool needs_watcher = plan->NeedsXidWatcher();
  plan_.Publish(std::move(plan));
  return needs_watcher && xids_ == nullptr;
}

void Collector::ApplyFastPlan(size_t i, const plan::FieldPlan& plan) {
  Device& d = *devices_[i];
  if (d.fast_version == plan.version()) return;
  d.fast_version = plan.version();
  const plan::EntityFields& f = plan.For(d.scope);
  // A reload that leaves this entity's fields as they were (a help text changed, a label row)
  // keeps its readers: rate fields keep their baseline and profiling its window, so no series
  // skips a collection.
  if (d.fast == nullptr || d.fast_fields != f.fast) {
    d.fast = std::make_unique<fields::DeviceReader>(lib_, d.handle, f.fast);
    std::vector<model::Sample> ignored_samples;  // the priming read of rate fields, as in Create
    std::vector<fields::FieldError> ignored_errors;
    d.fast->Read(&ignored_samples, &ignored_errors);
    d.fast_fields = f.fast;
  }
  if (d.profiling_fields != f.profiling) {
    d.gpm.reset();  // one PM-sampling session per GPU: release the old one first
    d.gpm = MakeProfilingSource(d, f.profiling);
    d.profiling_fields = f.profiling;
  }
  const bool clock_events =
      plan.Has(fields::Role::kClockEventCounts) && d.scope != plan::Scope::kInstance;
  if (!clock_events) {
    d.clock_events.reset();
  } else if (d.clock_events == nullptr) {
    d.clock_events = std::make_unique<ClockEventWindow>(options_.clock_events_window);
  }
  // The totals count from the plan that first enables them and survive reloads that keep the
  // row (upstream restarts its count on every reload: docs/upstream/total-counters.md).
  if (!plan.Has(fields::Role::kClockEventTotals) || d.scope == plan::Scope::kInstance) {
    d.clock_event_totals.reset();
  } else if (d.clock_event_totals == nullptr) {
    d.clock_event_totals = std::make_unique<ClockEventTotals>();
  }
  if (!plan.Has(fields::Role::kHealthStatus) || d.parent) {
    d.pcie_replays.reset();
    d.nvlink_health.reset();
  } else if (d.pcie_replays == nullptr) {
    d.pcie_replays = std::make_unique<PcieReplayWindow>();
    d.nvlink_health = std::make_unique<NvlinkHealthReader>(lib_);
  }
}

void Collector::ApplySlowPlan(size_t i, const plan::FieldPlan& plan) {
  Device& d = *devices_[i];
  if (d.slow_version == plan.version()) return;
  d.slow_version = plan.version();
  const plan::EntityFields& f = plan.For(d.scope);
  if (d.slow == nullptr || d.slow_fields != f.slow) {
    d.slow = std::make_unique<fields::DeviceReader>(lib_, d.handle, f.slow);
    d.slow_fields = f.slow;
  }
  if (d.periodic_fields == f.periodic) return;
  // New sets are read at once (their cadence counts from that first read); the cache drops the
  // sets that went.
  d.periodic.clear();
  for (const plan::PeriodicFields& p : f.periodic) {
    d.periodic.push_back(std::make_unique<fields::DeviceReader>(lib_, d.handle, p.fields));
  }
  d.periodic_fields = f.periodic;
  d.periodic_read_at.assign(f.periodic.size(), std::nullopt);
  slow_.Truncate(i, 1 + f.periodic.size());
  for (size_t k = 0; k < f.periodic.size(); ++k) slow_.Put(i, 1 + k, {});
}

}  // namespace nvmlx::collect
