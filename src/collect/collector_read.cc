// Collector, part 2: reading one GPU (or MIG instance) in a round, on that GPU's worker, and
// what a failed read leaves behind (a log line once per GPU and field, a lost GPU). The rounds,
// the workers and the lifecycle are collector.cc; the field plan is collector_plan.cc.
#include <algorithm>
#include <string>

#include "collect/collector.h"
#include "fields/field_roles.h"
#include "util/log.h"

namespace nvmlx::collect {
namespace {

// The id a computed family's failures are logged under (once per GPU and field).
int IdOf(fields::Role role) { return fields::FieldFor(role)->id; }

}  // namespace

void Collector::NoteErrors(size_t device, const std::vector<fields::FieldError>& errors) {
  for (const auto& e : errors) {
    const std::string gpu = std::to_string((*identities_)[device].index);
    if (e.status.code() == StatusCode::kGpuLost) {
      MarkLost(device, e.status);
      continue;
    }
    if (logged_.First(device, e.field_id)) {
      const fields::FieldDef* f = fields::FindById(e.field_id);
      const std::string field = f != nullptr ? std::string(f->name) : std::to_string(e.field_id);
      if (const auto& mig = (*identities_)[device].mig) {
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

void Collector::NoteGpmFailure(size_t device, const Status& status) {
  const std::string gpu = std::to_string((*identities_)[device].index);
  if (status.code() == StatusCode::kGpuLost) {
    NoteErrors(device, {fields::FieldError{0, status}});
    return;
  }
  if (logged_.First(device, 0)) {
    log::Warn("GPM sampling failed; DCGM_FI_PROF_* series omitted (logged once per GPU)",
              {{"gpu", gpu}, {"err", status.ToString()}});
  }
}

void Collector::ReadClockEvents(size_t device, model::DeviceSnapshot* out) {
  Device& d = *devices_[device];
  const util::Clock::TimePoint now = clock_->Now();
  // One read serves both families: the window's samples and the totals' edges.
  Result<uint64_t> reasons = lib_.ClocksEventReasons(d.handle);
  if (reasons.ok()) {
    if (d.clock_events != nullptr) d.clock_events->Add(now, *reasons);
    if (d.clock_event_totals != nullptr) d.clock_event_totals->Add(*reasons);
  } else {
    // Logged once; a window without any good read shows the 0 series, as DCGM's blank values do;
    // the totals keep their baseline (a failed read is no edge).
    const fields::Role role = d.clock_events != nullptr ? fields::Role::kClockEventCounts
                                                        : fields::Role::kClockEventTotals;
    NoteErrors(device, {fields::FieldError{IdOf(role), reasons.status()}});
  }
  if (d.clock_events != nullptr) {
    out->clock_events_watched = true;
    d.clock_events->Counts(now, &out->clock_events_sampled, &out->clock_event_counts);
  }
  if (d.clock_event_totals != nullptr) out->clock_event_totals = d.clock_event_totals->totals();
}

void Collector::ReadHealth(size_t device, const std::vector<model::XidCount>& xids,
                           model::DeviceSnapshot* out) {
  Device& d = *devices_[device];
  const nvml::Device h = d.handle;
  HealthReadings r;
  // Every read is optional: a failure (unsupported on this GPU, ECC off, ...) raises nothing, as
  // DCGM skips blank samples. None is logged: the same reads back the catalog's fields.
  auto opt = [](auto result) {
    using T = std::decay_t<decltype(*result)>;
    return result.ok() ? std::optional<T>(*result) : std::nullopt;
  };
  r.volatile_dbe =
      opt(lib_.TotalEccErrors(h, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC));
  r.retired_sbe =
      opt(lib_.RetiredPageCount(h, NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS));
  r.retired_dbe = opt(lib_.RetiredPageCount(h, NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR));
  if (Result<nvml::RemappedRows> rows = lib_.RemappedRowCounts(h); rows.ok()) {
    r.remap_uncorrectable = rows->uncorrectable;
    r.remap_pending = rows->pending;
    r.remap_failure = rows->failure;
  }
  // Retirement pending and the driver's recovery action: one field-values call.
  nvmlFieldValue_t fv[2] = {};
  fv[0].fieldId = NVML_FI_DEV_RETIRED_PENDING;
  fv[1].fieldId = NVML_FI_DEV_GET_GPU_RECOVERY_ACTION;
  if (lib_.FieldValues(h, fv, 2).ok()) {
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
  r.clock_event_reasons = opt(lib_.ClocksEventReasons(h));
  r.pcie_link_gen = opt(lib_.PcieLinkGen(h));
  r.pcie_link_width = opt(lib_.PcieLinkWidth(h));
  if (Result<unsigned> replays = lib_.PcieReplayCounter(h); replays.ok()) {
    d.pcie_replays->Add(clock_->Now(), *replays);
    r.pcie_replays_last_minute = d.pcie_replays->Delta();
  }
  r.power_readable = lib_.PowerUsageMw(h).ok();
  d.nvlink_health->Read(h, clock_->Now(), &r);
  r.xids = xids;
  out->health = EvaluateHealth(r);
}

void Collector::ReadLostHealth(size_t device, const plan::FieldPlan& plan,
                               model::DeviceSnapshot* out) const {
  if (!plan.Has(fields::Role::kHealthStatus) || devices_[device]->parent) return;
  int64_t last = 0;
  std::vector<model::XidCount> xids;
  if (xids_ != nullptr && devices_[device]->xid_slot) {
    (void)xids_->Read(*devices_[device]->xid_slot, &last, &xids);  // false: none watched
  }
  out->health = LostGpuHealth(xids);
}

void Collector::ReadP2p(size_t device, model::DeviceSnapshot* out) {
  for (size_t j = 0; j < devices_.size(); ++j) {
    if (j == device || devices_[j]->parent || Lost(j)) continue;
    Result<nvmlGpuP2PStatus_t> st =
        lib_.P2pStatus(devices_[device]->handle, devices_[j]->handle, NVML_P2P_CAPS_INDEX_NVLINK);
    if (!st.ok()) {
      // The pair has no series (dcgm-exporter drops blank values). Logged once per GPU; a
      // GPU_IS_LOST answer names either GPU of the pair, so it marks neither lost (that GPU's own
      // reads will), lest a healthy GPU go down with a lost peer.
      if (st.status().code() != StatusCode::kGpuLost) {
        NoteErrors(device, {fields::FieldError{IdOf(fields::Role::kP2pStatus), st.status()}});
      }
      continue;
    }
    out->p2p.push_back({(*identities_)[j].index, static_cast<int>(*st)});
  }
}

void Collector::NoteProcessFailure(size_t device, const Status& status) {
  if (status.code() == StatusCode::kGpuLost) {
    NoteErrors(device, {fields::FieldError{-1, status}});
    return;
  }
  if (logged_.First(device, -1)) {
    log::Warn("per-process read failed; processes of this GPU degraded (logged once per GPU)",
              {{"gpu", std::to_string((*identities_)[device].index)}, {"err", status.ToString()}});
  }
}

void Collector::ReadDevice(size_t i, const plan::FieldPlan& plan, model::DeviceSnapshot* ds,
                           bool* all_failed) {
  ds->identity = &(*identities_)[i];
  const std::optional<size_t> xid_slot = devices_[i]->xid_slot;
  if (xids_ != nullptr && xid_slot && xids_->FellOffBus(*xid_slot)) {
    MarkLost(i, Status(StatusCode::kGpuLost, "Xid 79: GPU has fallen off the bus"));
  }
  if (Lost(i)) {
    ds->up = false;
    ds->lost = true;
    return;
  }
  // Every read of the fields (and GPM) failing means the GPU cannot be read: gpu_up 0. A field
  // the GPU does not support is an answer, not a failure (an H200 without fan, a GPU without
  // NVLink asked only NVLink fields stays up).
  size_t good = 0, bad = 0, unsupported = 0;
  auto failures = [](const std::vector<fields::FieldError>& errors) {
    size_t n = 0;
    for (const auto& e : errors) n += e.status.code() != StatusCode::kNotSupported ? 1 : 0;
    return n;
  };
  std::vector<fields::FieldError> errors;
  devices_[i]->fast->Read(&ds->samples, &errors);
  good += ds->samples.size();
  unsupported += errors.size() - failures(errors);
  bad += failures(errors);
  NoteErrors(i, errors);
  if (devices_[i]->gpm != nullptr && !Lost(i)) {
    std::vector<model::Sample> prof;
    std::vector<fields::FieldError> prof_errors;
    Status st = devices_[i]->gpm->Read(&prof, &prof_errors);
    NoteErrors(i, prof_errors);
    if (!st.ok()) NoteGpmFailure(i, st);
    good += prof.size();
    unsupported += prof_errors.size() - failures(prof_errors);
    bad += failures(prof_errors) + (st.ok() || st.code() == StatusCode::kNotSupported ? 0 : 1);
    MergeSorted(&ds->samples, prof);
    if (devices_[i]->gpm->name() == "pm_sampling") {
      model::DeviceSnapshot::PmSampling pm;
      pm.active = devices_[i]->gpm->active();
      pm.losses = devices_[i]->gpm->losses();
      pm.configurations = devices_[i]->gpm->configurations();
      devices_[i]->gpm->Coverage(&pm.coverage);
      ds->pm_sampling = std::move(pm);
    }
  }
  // Every read answered NOT_SUPPORTED: an answer for a field the GPU lacks, but a GPU that
  // answers nothing else may not answer at all (a driver gone bad). One identity read decides:
  // the PCI info every GPU has (hardening round two, row 6).
  if (good == 0 && bad == 0 && unsupported > 0) {
    if (Result<nvml::PciInfo> pci = lib_.Pci(devices_[i]->handle); !pci.ok()) {
      bad = 1;
      if (pci.status().code() == StatusCode::kGpuLost) MarkLost(i, pci.status());
    }
  }
  *all_failed = good == 0 && bad > 0;
  if ((devices_[i]->clock_events != nullptr || devices_[i]->clock_event_totals != nullptr) &&
      !Lost(i)) {
    ReadClockEvents(i, ds);
  }
  if (devices_[i]->processes != nullptr && !Lost(i)) {
    if (Status st = devices_[i]->processes->Read(&ds->processes); !st.ok()) {
      NoteProcessFailure(i, st);
    }
  }
  if (Lost(i)) {
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
  if (plan.Has(fields::Role::kP2pStatus) && !devices_[i]->parent) ReadP2p(i, ds);
}

void Collector::ReadXidsAndHealth(size_t i, const plan::FieldPlan& plan,
                                  model::DeviceSnapshot* ds) {
  // Xid-backed fields need the watcher, which runs only when the start-up plan had them.
  const bool xid_last = plan.Has(fields::Role::kLastXid) && xids_ != nullptr;
  const bool xid_counts = plan.Has(fields::Role::kXidCounts) && xids_ != nullptr;
  const bool xid_totals = plan.Has(fields::Role::kXidTotals) && xids_ != nullptr;
  const bool health = plan.Has(fields::Role::kHealthStatus) && xids_ != nullptr;
  const std::optional<size_t> xid_slot = devices_[i]->xid_slot;
  if (xids_ == nullptr || !xid_slot) {
    if (health && !devices_[i]->parent) ReadHealth(i, {}, ds);
    return;
  }
  int64_t last = 0;
  std::vector<model::XidCount> counts;
  if (!xids_->Read(*xid_slot, &last, &counts)) {
    if (health) ReadHealth(i, {}, ds);
    return;
  }
  if (xid_last) MergeSorted(&ds->samples, {model::Sample{IdOf(fields::Role::kLastXid), last}});
  if (health) ReadHealth(i, counts, ds);
  if (xid_counts) {
    ds->xid_watched = true;
    ds->xid_counts = std::move(counts);
  }
  if (xid_totals) (void)xids_->ReadTotals(*xid_slot, &ds->xid_totals);  // watched: Read said so
  if (options_.watch_faults) (void)xids_->ReadTotals(*xid_slot, &ds->fault_xids);
}

void Collector::ReadGroup(size_t g, const plan::FieldPlan& plan, GroupResult* out) {
  const Group& group = groups_[g];
  out->devices.resize(group.devices.size());
  out->all_failed.assign(group.devices.size(), false);
  for (size_t k = 0; k < group.devices.size(); ++k) {
    bool all_failed = false;
    if (!Lost(group.devices[k])) ApplyFastPlan(group.devices[k], plan);
    ReadDevice(group.devices[k], plan, &out->devices[k], &all_failed);
    out->all_failed[k] = all_failed;
  }
}

}  // namespace nvmlx::collect
