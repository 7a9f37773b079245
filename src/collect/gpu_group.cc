// The reading code of one GPU group, on its workers: the fast reads (FastReads), the slow and
// periodic reads (SlowReads), applying a field plan (plan/field_plan.h) to their readers, and what
// a failed read leaves behind (a log line once per entity and field, a lost GPU).
#include "collect/gpu_group.h"

#include <algorithm>
#include <string>
#include <type_traits>
#include <utility>

#include "collect/gpm_reader.h"
#include "collect/pm_sampling_reader.h"
#include "fields/field_roles.h"
#include "util/log.h"

namespace nvmlx::collect {
namespace {

// The id a computed family's failures are logged under (once per GPU and field).
int IdOf(fields::Role role) { return fields::FieldFor(role)->id; }

// Failures among `errors`: a field the GPU does not support is an answer, not a failure.
size_t Failures(const std::vector<fields::FieldError>& errors) {
  size_t n = 0;
  for (const auto& e : errors) n += e.status.code() != StatusCode::kNotSupported ? 1 : 0;
  return n;
}

}  // namespace

void MergeSorted(std::vector<model::Sample>* into, const std::vector<model::Sample>& more) {
  into->insert(into->end(), more.begin(), more.end());
  std::stable_sort(into->begin(), into->end(), [](const model::Sample& a, const model::Sample& b) {
    return a.field_id < b.field_id;
  });
}

void GroupContext::NoteErrors(size_t entity, const std::vector<fields::FieldError>& errors) const {
  for (const auto& e : errors) {
    const std::string gpu = std::to_string(entities.identity(entity).index);
    if (e.status.code() == StatusCode::kGpuLost) {
      entities.MarkLost(entity, e.status);
      continue;
    }
    if (logged.First(entity, e.field_id)) {
      const fields::FieldDef* f = fields::FindById(e.field_id);
      const std::string field = f != nullptr ? std::string(f->name) : std::to_string(e.field_id);
      if (const auto& mig = entities.identity(entity).mig) {
        log::Warn("field read failed; series omitted (logged once per MIG instance and field)",
                  {{"gpu", gpu},
                   {"GPU_I_ID", std::to_string(mig->gpu_instance_id)},
                   {"field", field},
                   {"err", e.status.ToString()}});
        continue;
      }
      log::Warn("field read failed; series omitted (logged once per GPU and field)",
                {{"gpu", gpu}, {"field", field}, {"err", e.status.ToString()}});
    }
  }
}

GpuGroup::GpuGroup(const GroupContext& ctx, std::vector<size_t> devices,
                   std::unique_ptr<DeviceWorker> fast, std::unique_ptr<DeviceWorker> slow,
                   bool never_read)
    : devices_(std::move(devices)),
      gpu_(std::to_string(ctx.entities.identity(devices_.front()).index)),
      never_read_(never_read),
      fast_reads_(ctx, devices_),
      slow_reads_(ctx, devices_),
      fast_(std::move(fast)),
      slow_(std::move(slow)) {}

// --- FastReads: on the group's fast worker. ---

void FastReads::Prime(const plan::FieldPlan& plan) {
  for (size_t i : devices_) {
    if (!ctx_.entities.Lost(i)) ApplyPlan(i, plan);
  }
  PublishReadyTimes();
}

void FastReads::Read(const plan::FieldPlan& plan, GroupResult* out) {
  out->devices.resize(devices_.size());
  out->all_failed.assign(devices_.size(), false);
  for (size_t k = 0; k < devices_.size(); ++k) {
    bool all_failed = false;
    if (!ctx_.entities.Lost(devices_[k])) ApplyPlan(devices_[k], plan);
    ReadDevice(devices_[k], plan, &out->devices[k], &all_failed);
    out->all_failed[k] = all_failed;
  }
  PublishReadyTimes();
}

void FastReads::PublishReadyTimes() {
  using Clock = ProfilingSource::Clock;
  Clock::time_point ready = Clock::time_point::min();
  Clock::time_point once_ready = Clock::time_point::min();
  for (size_t i : devices_) {
    if (const ProfilingSource* p = ctx_.entities.fast(i).profiling.get()) {
      ready = std::max(ready, p->ReadyAt());
      once_ready = std::max(once_ready, p->OnceReadyAt());
    }
  }
  ready_at_.store(ready.time_since_epoch().count());
  once_ready_at_.store(once_ready.time_since_epoch().count());
}

ProfilingSource::Clock::time_point FastReads::ReadyAt() const {
  return ProfilingSource::Clock::time_point(ProfilingSource::Clock::duration(ready_at_.load()));
}

ProfilingSource::Clock::time_point FastReads::OnceReadyAt() const {
  return ProfilingSource::Clock::time_point(
      ProfilingSource::Clock::duration(once_ready_at_.load()));
}

void FastReads::ApplyPlan(size_t i, const plan::FieldPlan& plan) {
  const EntityFixed& id = ctx_.entities.fixed(i);
  FastState& d = ctx_.entities.fast(i);
  if (d.version == plan.version()) return;
  d.version = plan.version();
  const plan::EntityFields& f = plan.For(id.scope);
  // A reload that leaves this entity's fields as they were (a help text changed, a label row)
  // keeps its readers: rate fields keep their baseline and profiling its window, so no series
  // skips a collection.
  if (d.reader == nullptr || d.fields != f.fast) {
    d.reader = std::make_unique<fields::DeviceReader>(ctx_.lib, id.handle, f.fast);
    std::vector<model::Sample> ignored_samples;  // the priming read of rate fields
    std::vector<fields::FieldError> ignored_errors;
    d.reader->Read(&ignored_samples, &ignored_errors);
    d.fields = f.fast;
  }
  if (d.profiling_fields != f.profiling) {
    d.profiling.reset();  // one PM-sampling session per GPU: release the old one first
    d.profiling = MakeProfilingSource(i, f.profiling);
    d.profiling_fields = f.profiling;
  }
  if (!plan.Has(fields::Role::kClockEventCounts) || id.scope == plan::Scope::kInstance) {
    d.clock_events.reset();
  } else if (d.clock_events == nullptr) {
    d.clock_events = std::make_unique<ClockEventWindow>(ctx_.options.clock_events_window);
  }
  // The totals count from the plan that first enables them and survive reloads that keep the
  // row (upstream restarts its count on every reload: docs/upstream/total-counters.md).
  if (!plan.Has(fields::Role::kClockEventTotals) || id.scope == plan::Scope::kInstance) {
    d.clock_event_totals.reset();
  } else if (d.clock_event_totals == nullptr) {
    d.clock_event_totals = std::make_unique<ClockEventTotals>();
  }
  if (!plan.Has(fields::Role::kHealthStatus) || id.parent) {
    d.pcie_replays.reset();
    d.nvlink_health.reset();
  } else if (d.pcie_replays == nullptr) {
    d.pcie_replays = std::make_unique<PcieReplayWindow>();
    d.nvlink_health = std::make_unique<NvlinkHealthReader>(ctx_.lib);
  }
}

std::unique_ptr<ProfilingSource> FastReads::MakeProfilingSource(
    size_t i, const std::vector<const fields::FieldDef*>& f) const {
  const CollectorOptions& options = ctx_.options;
  const EntityFixed& d = ctx_.entities.fixed(i);
  if (f.empty()) return nullptr;
  if (options.profiling_source) return options.profiling_source(d.index, f);
  const std::string gpu = std::to_string(d.index);
  auto gpm = [&]() -> std::unique_ptr<ProfilingSource> {
    return GpmReader::Create(ctx_.lib, d.gpm_device, d.index, f, d.gpm_gi);
  };
  auto pm = [&]() -> std::unique_ptr<ProfilingSource> {
    if (d.mig_gpu) {
      // PM sampling counts the whole GPU: its values cannot be split per GPU instance.
      log::Warn(
          "PM sampling is device-level and is not used on a MIG-enabled GPU or its "
          "instances; DCGM_FI_PROF_* series omitted",
          {{"gpu", gpu}, {"GPU_I_ID", d.gpm_gi ? std::to_string(*d.gpm_gi) : "-"}});
      return nullptr;
    }
    const cupti::Library* cupti = options.cupti ? options.cupti() : nullptr;
    if (cupti == nullptr) return nullptr;
    PmSamplingOptions o = options.pm_sampling;
    o.collect_interval = options.interval;
    o.paused = &ctx_.profiling_paused;
    return PmSamplingReader::Create(*cupti, cupti->CudaIndexFor(d.pci_bus_id, d.index), d.index, f,
                                    o);
  };
  switch (options.profiling) {
    case ProfilingChoice::kNone:
      return nullptr;
    case ProfilingChoice::kGpm:
      return gpm();
    case ProfilingChoice::kPmSampling:
      return pm();
    case ProfilingChoice::kAuto:
      break;
  }
  // Auto: GPM where the GPU has it (no cost, no other profiler blocked), else PM sampling.
  Result<bool> has_gpm = ctx_.lib.GpmSupported(d.gpm_device);
  if ((has_gpm.ok() && *has_gpm) || !options.cupti || d.mig_gpu) return gpm();
  if (std::unique_ptr<ProfilingSource> p = pm()) return p;
  return gpm();  // no CUPTI: GPM's own "metric not enabled" warnings, as without PM sampling
}

void FastReads::ReadDevice(size_t i, const plan::FieldPlan& plan, model::DeviceSnapshot* ds,
                           bool* all_failed) {
  const Entities& entities = ctx_.entities;
  const EntityFixed& id = entities.fixed(i);
  FastState& d = ctx_.entities.fast(i);
  ds->identity = &entities.identity(i);
  if (ctx_.xids != nullptr && id.xid_slot && ctx_.xids->FellOffBus(*id.xid_slot)) {
    entities.MarkLost(i, Status(StatusCode::kGpuLost, "Xid 79: GPU has fallen off the bus"));
  }
  if (entities.Lost(i)) {
    ds->up = false;
    ds->lost = true;
    return;
  }
  // Every read of the fields (and GPM) failing means the GPU cannot be read: gpu_up 0. A field
  // the GPU does not support is an answer, not a failure (an H200 without fan, a GPU without
  // NVLink asked only NVLink fields stays up).
  size_t good = 0, bad = 0, unsupported = 0;
  std::vector<fields::FieldError> errors;
  d.reader->Read(&ds->samples, &errors);
  good += ds->samples.size();
  unsupported += errors.size() - Failures(errors);
  bad += Failures(errors);
  ctx_.NoteErrors(i, errors);
  if (d.profiling != nullptr && !entities.Lost(i)) ReadProfiling(i, ds, &good, &bad, &unsupported);
  // Every read answered NOT_SUPPORTED: an answer for a field the GPU lacks, but a GPU that
  // answers nothing else may not answer at all (a driver gone bad). One identity read decides:
  // the PCI info every GPU has (hardening round two, row 6).
  if (good == 0 && bad == 0 && unsupported > 0) {
    if (Result<nvml::PciInfo> pci = ctx_.lib.Pci(id.handle); !pci.ok()) {
      bad = 1;
      if (pci.status().code() == StatusCode::kGpuLost) entities.MarkLost(i, pci.status());
    }
  }
  *all_failed = good == 0 && bad > 0;
  if ((d.clock_events != nullptr || d.clock_event_totals != nullptr) && !entities.Lost(i)) {
    ReadClockEvents(i, ds);
  }
  if (d.processes != nullptr && !entities.Lost(i)) {
    if (Status st = d.processes->Read(&ds->processes); !st.ok()) NoteProcessFailure(i, st);
  }
  if (entities.Lost(i)) {
    ds->up = false;
    ds->lost = true;
    ds->samples.clear();
    ds->processes.clear();
    ds->clock_events_watched = false;
    ds->clock_event_counts.clear();
    ds->clock_event_totals.clear();
    return;
  }
  ReadXidsAndHealth(i, plan, ds);
  if (plan.Has(fields::Role::kP2pStatus) && !id.parent) ReadP2p(i, ds);
}

void FastReads::ReadProfiling(size_t i, model::DeviceSnapshot* ds, size_t* good, size_t* bad,
                              size_t* unsupported) {
  ProfilingSource& source = *ctx_.entities.fast(i).profiling;
  std::vector<model::Sample> prof;
  std::vector<fields::FieldError> prof_errors;
  Status st = source.Read(&prof, &prof_errors);
  ctx_.NoteErrors(i, prof_errors);
  if (!st.ok()) NoteProfilingFailure(i, st);
  *good += prof.size();
  *unsupported += prof_errors.size() - Failures(prof_errors);
  *bad += Failures(prof_errors) + (st.ok() || st.code() == StatusCode::kNotSupported ? 0 : 1);
  MergeSorted(&ds->samples, prof);
  if (source.name() == "pm_sampling") {
    model::DeviceSnapshot::PmSampling pm;
    pm.active = source.active();
    pm.losses = source.losses();
    pm.configurations = source.configurations();
    source.Coverage(&pm.coverage);
    ds->pm_sampling = std::move(pm);
  }
}

void FastReads::NoteProfilingFailure(size_t i, const Status& status) const {
  if (status.code() == StatusCode::kGpuLost) {
    ctx_.NoteErrors(i, {fields::FieldError{0, status}});
    return;
  }
  if (ctx_.logged.First(i, 0)) {
    log::Warn(
        "GPM sampling failed; DCGM_FI_PROF_* series omitted (logged once per GPU)",
        {{"gpu", std::to_string(ctx_.entities.identity(i).index)}, {"err", status.ToString()}});
  }
}

void FastReads::NoteProcessFailure(size_t i, const Status& status) const {
  if (status.code() == StatusCode::kGpuLost) {
    ctx_.NoteErrors(i, {fields::FieldError{-1, status}});
    return;
  }
  if (ctx_.logged.First(i, -1)) {
    log::Warn(
        "per-process read failed; processes of this GPU degraded (logged once per GPU)",
        {{"gpu", std::to_string(ctx_.entities.identity(i).index)}, {"err", status.ToString()}});
  }
}

void FastReads::ReadClockEvents(size_t i, model::DeviceSnapshot* out) {
  FastState& d = ctx_.entities.fast(i);
  const util::Clock::TimePoint now = ctx_.clock->Now();
  // One read serves both families: the window's samples and the totals' edges.
  Result<uint64_t> reasons = ctx_.lib.ClocksEventReasons(ctx_.entities.fixed(i).handle);
  if (reasons.ok()) {
    if (d.clock_events != nullptr) d.clock_events->Add(now, *reasons);
    if (d.clock_event_totals != nullptr) d.clock_event_totals->Add(*reasons);
  } else {
    // Logged once; a window without any good read shows the 0 series, as DCGM's blank values do;
    // the totals keep their baseline (a failed read is no edge).
    const fields::Role role = d.clock_events != nullptr ? fields::Role::kClockEventCounts
                                                        : fields::Role::kClockEventTotals;
    ctx_.NoteErrors(i, {fields::FieldError{IdOf(role), reasons.status()}});
  }
  if (d.clock_events != nullptr) {
    out->clock_events_watched = true;
    d.clock_events->Counts(now, &out->clock_events_sampled, &out->clock_event_counts);
  }
  if (d.clock_event_totals != nullptr) out->clock_event_totals = d.clock_event_totals->totals();
}

void FastReads::ReadXidsAndHealth(size_t i, const plan::FieldPlan& plan,
                                  model::DeviceSnapshot* ds) {
  const XidWatcher* xids = ctx_.xids.get();
  const EntityFixed& id = ctx_.entities.fixed(i);
  // Xid-backed fields need the watcher, which runs only when the start-up plan had them.
  const bool xid_last = plan.Has(fields::Role::kLastXid) && xids != nullptr;
  const bool xid_counts = plan.Has(fields::Role::kXidCounts) && xids != nullptr;
  const bool xid_totals = plan.Has(fields::Role::kXidTotals) && xids != nullptr;
  const bool health = plan.Has(fields::Role::kHealthStatus) && xids != nullptr;
  if (xids == nullptr || !id.xid_slot) {
    if (health && !id.parent) ReadHealth(i, {}, ds);
    return;
  }
  int64_t last = 0;
  std::vector<model::XidCount> counts;
  if (!xids->Read(*id.xid_slot, &last, &counts)) {
    if (health) ReadHealth(i, {}, ds);
    return;
  }
  if (xid_last) MergeSorted(&ds->samples, {model::Sample{IdOf(fields::Role::kLastXid), last}});
  if (health) ReadHealth(i, counts, ds);
  if (xid_counts) {
    ds->xid_watched = true;
    ds->xid_counts = std::move(counts);
  }
  if (xid_totals) (void)xids->ReadTotals(*id.xid_slot, &ds->xid_totals);  // watched: Read said so
  if (ctx_.options.watch_faults) (void)xids->ReadTotals(*id.xid_slot, &ds->fault_xids);
}

void FastReads::ReadHealth(size_t i, const std::vector<model::XidCount>& xids,
                           model::DeviceSnapshot* out) {
  const nvml::Library& lib = ctx_.lib;
  FastState& d = ctx_.entities.fast(i);
  const nvml::Device h = ctx_.entities.fixed(i).handle;
  HealthReadings r;
  // Every read is optional: a failure (unsupported on this GPU, ECC off, ...) raises nothing, as
  // DCGM skips blank samples. None is logged: the same reads back the catalog's fields.
  auto opt = [](auto result) {
    using T = std::decay_t<decltype(*result)>;
    return result.ok() ? std::optional<T>(*result) : std::nullopt;
  };
  r.volatile_dbe =
      opt(lib.TotalEccErrors(h, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC));
  r.retired_sbe =
      opt(lib.RetiredPageCount(h, NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS));
  r.retired_dbe = opt(lib.RetiredPageCount(h, NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR));
  if (Result<nvml::RemappedRows> rows = lib.RemappedRowCounts(h); rows.ok()) {
    r.remap_uncorrectable = rows->uncorrectable;
    r.remap_pending = rows->pending;
    r.remap_failure = rows->failure;
  }
  // Retirement pending and the driver's recovery action: one field-values call.
  nvmlFieldValue_t fv[2] = {};
  fv[0].fieldId = NVML_FI_DEV_RETIRED_PENDING;
  fv[1].fieldId = NVML_FI_DEV_GET_GPU_RECOVERY_ACTION;
  if (lib.FieldValues(h, fv, 2).ok()) {
    auto integer = [](const nvmlFieldValue_t& v) -> std::optional<int64_t> {
      if (v.nvmlReturn != NVML_SUCCESS) return std::nullopt;
      switch (v.valueType) {
        case NVML_VALUE_TYPE_UNSIGNED_INT:
          return static_cast<int64_t>(v.value.uiVal);
        case NVML_VALUE_TYPE_UNSIGNED_LONG:
          return static_cast<int64_t>(v.value.ulVal);
        case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
          return static_cast<int64_t>(v.value.ullVal);
        case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
          return static_cast<int64_t>(v.value.sllVal);
        case NVML_VALUE_TYPE_SIGNED_INT:
          return static_cast<int64_t>(v.value.siVal);
        default:
          return std::nullopt;
      }
    };
    if (std::optional<int64_t> p = integer(fv[0])) r.retired_pending = *p != 0;
    r.recovery_action = integer(fv[1]);
  }
  r.clock_event_reasons = opt(lib.ClocksEventReasons(h));
  r.pcie_link_gen = opt(lib.PcieLinkGen(h));
  r.pcie_link_width = opt(lib.PcieLinkWidth(h));
  if (Result<unsigned> replays = lib.PcieReplayCounter(h); replays.ok()) {
    d.pcie_replays->Add(ctx_.clock->Now(), *replays);
    r.pcie_replays_last_minute = d.pcie_replays->Delta();
  }
  r.power_readable = lib.PowerUsageMw(h).ok();
  d.nvlink_health->Read(h, ctx_.clock->Now(), &r);
  r.xids = xids;
  out->health = EvaluateHealth(r);
}

void FastReads::ReadP2p(size_t i, model::DeviceSnapshot* out) {
  const Entities& entities = ctx_.entities;
  for (size_t j = 0; j < entities.size(); ++j) {
    // Other GPUs' handles and lost flags only: fixed, and atomic.
    if (j == i || entities.fixed(j).parent || entities.Lost(j)) continue;
    Result<nvmlGpuP2PStatus_t> st = ctx_.lib.P2pStatus(
        entities.fixed(i).handle, entities.fixed(j).handle, NVML_P2P_CAPS_INDEX_NVLINK);
    if (!st.ok()) {
      // The pair has no series (dcgm-exporter drops blank values). Logged once per GPU; a
      // GPU_IS_LOST answer names either GPU of the pair, so it marks neither lost (that GPU's own
      // reads will), lest a healthy GPU go down with a lost peer.
      if (st.status().code() != StatusCode::kGpuLost) {
        ctx_.NoteErrors(i, {fields::FieldError{IdOf(fields::Role::kP2pStatus), st.status()}});
      }
      continue;
    }
    out->p2p.push_back({entities.identity(j).index, static_cast<int>(*st)});
  }
}

// --- SlowReads: on the group's slow worker. ---

void SlowReads::Prime(const plan::FieldPlan& plan) {
  for (size_t i : devices_) {
    if (!ctx_.entities.Lost(i)) ApplyPlan(i, plan);
  }
}

void SlowReads::Read(const plan::FieldPlan& plan) {
  for (size_t i : devices_) {
    if (ctx_.entities.Lost(i)) continue;
    ApplyPlan(i, plan);
    std::vector<model::Sample> samples;
    std::vector<fields::FieldError> errors;
    ctx_.entities.slow(i).reader->Read(&samples, &errors);
    ctx_.NoteErrors(i, errors);
    ctx_.slow.Put(i, 0, std::move(samples));
    if (!ctx_.entities.Lost(i)) ReadPeriodic(i);
  }
}

void SlowReads::ReadPeriodic(size_t i) {
  SlowState& d = ctx_.entities.slow(i);
  for (size_t k = 0; k < d.periodic.size(); ++k) {
    const util::Clock::TimePoint now = ctx_.clock->Now();
    const std::optional<util::Clock::TimePoint>& last = d.periodic_read_at[k];
    // Half an interval of slack: the rounds tick on a fixed schedule, a read lands a little
    // after its tick, and a cadence of n intervals must read every n-th round.
    if (last && now - *last < d.periodic_fields[k].every - ctx_.options.interval / 2) continue;
    std::vector<model::Sample> samples;
    std::vector<fields::FieldError> errors;
    d.periodic[k]->Read(&samples, &errors);
    ctx_.NoteErrors(i, errors);
    d.periodic_read_at[k] = now;
    ctx_.slow.Put(i, 1 + k, std::move(samples));
    if (ctx_.entities.Lost(i)) return;
  }
}

void SlowReads::ApplyPlan(size_t i, const plan::FieldPlan& plan) {
  const EntityFixed& id = ctx_.entities.fixed(i);
  SlowState& d = ctx_.entities.slow(i);
  if (d.version == plan.version()) return;
  d.version = plan.version();
  const plan::EntityFields& f = plan.For(id.scope);
  if (d.reader == nullptr || d.fields != f.slow) {
    d.reader = std::make_unique<fields::DeviceReader>(ctx_.lib, id.handle, f.slow);
    d.fields = f.slow;
  }
  if (d.periodic_fields == f.periodic) return;
  // New sets are read at once (their cadence counts from that first read); the cache drops the
  // sets that went.
  d.periodic.clear();
  for (const plan::PeriodicFields& p : f.periodic) {
    d.periodic.push_back(std::make_unique<fields::DeviceReader>(ctx_.lib, id.handle, p.fields));
  }
  d.periodic_fields = f.periodic;
  d.periodic_read_at.assign(f.periodic.size(), std::nullopt);
  ctx_.slow.Truncate(i, 1 + f.periodic.size());
  for (size_t k = 0; k < f.periodic.size(); ++k) ctx_.slow.Put(i, 1 + k, {});
}

}  // namespace nvmlx::collect
