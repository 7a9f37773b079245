// Collector, part 1: creation (enumeration, identities, readers), the rounds that post each GPU's
// reads and wait for them until the read deadline, and the lifecycle. Reading one GPU is
// collector_read.cc; the field plan is collector_plan.cc.
#include "collect/collector.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>  // std::this_thread::sleep_until (the GPM window is real time)
#include <type_traits>

#include "fields/field_ids.h"
#include "util/log.h"

namespace nvmlx::collect {
namespace {

using Clock = std::chrono::steady_clock;

// dcgm-exporter's -rbmn: collapse runs of whitespace, then spaces become '-'.
std::string ReplaceBlanks(const std::string& name) {
  std::string out;
  bool in_blank = false;
  for (char c : name) {
    if (c == ' ' || c == '\t' || c == '\n') {
      in_blank = true;
      continue;
    }
    if (in_blank && !out.empty()) out.push_back('-');
    in_blank = false;
    out.push_back(c);
  }
  return out;
}

// The identity of GPU `index`, read once: UUID, name, PCI bus id, minor number and the values of
// the CSV's label rows (a failing label is omitted with one warning).
model::DeviceIdentity ReadIdentity(const nvml::Library& lib, nvml::Device handle, unsigned index,
                                   bool replace_blanks,
                                   const std::vector<const fields::FieldDef*>& label_fields) {
  model::DeviceIdentity id;
  id.index = index;
  // A failing identity read leaves its label out of every series of the GPU (never `UUID=""`);
  // said once here, as it is read once.
  auto unreadable = [index](const char* label, const Status& st) {
    log::Error("GPU identity read failed; the label is left out of its series",
               {{"gpu", std::to_string(index)}, {"label", label}, {"err", st.ToString()}});
  };
  if (auto r = lib.Uuid(handle); r.ok()) {
    id.uuid = *r;
  } else {
    unreadable("UUID", r.status());
  }
  if (auto r = lib.Name(handle); r.ok()) {
    id.model_name = *r;
  } else {
    unreadable("modelName", r.status());
  }
  if (replace_blanks) id.model_name = ReplaceBlanks(id.model_name);
  if (auto r = lib.Pci(handle); r.ok()) {
    id.pci_bus_id = r->bus_id;
  } else {
    unreadable("pci_bus_id", r.status());
  }
  if (auto r = lib.MinorNumber(handle); r.ok()) id.minor_number = *r;
  fields::ReadContext ctx{lib, handle, {}, {}, {}};
  for (const fields::FieldDef* f : label_fields) {
    if (f->read == nullptr) continue;
    Result<model::Value> v = f->read(ctx);
    if (!v.ok()) {
      log::Warn("label field unavailable; label omitted", {{"gpu", std::to_string(index)},
                                                           {"field", std::string(f->name)},
                                                           {"err", v.status().ToString()}});
      continue;
    }
    std::string text;
    if (const auto* s = std::get_if<std::string>(&*v)) {
      text = *s;
    } else if (const auto* n = std::get_if<int64_t>(&*v)) {
      text = std::to_string(*n);
    } else {
      text = std::to_string(std::get<double>(*v));
    }
    id.label_values.emplace_back(f->id, std::move(text));
  }
  return id;
}

}  // namespace

Collector::Collector(const nvml::Library& lib, CollectorOptions options)
    : lib_(lib),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : util::Clock::Real()),
      read_deadline_(options_.read_deadline.count() > 0
                         ? options_.read_deadline
                         : std::clamp<std::chrono::milliseconds>(options_.interval / 2,
                                                                 std::chrono::milliseconds(1),
                                                                 std::chrono::milliseconds(5000))),
      fast_loop_({.name = "fast collection",
                  .period = options_.interval,
                  .schedule = util::PeriodicWorker::Schedule::kFixedRate,
                  .clock = clock_},
                 [this] {
                   if (gpm_catchup_at_) {  // Start's GPM round (below), once
                     std::this_thread::sleep_until(*gpm_catchup_at_);
                     gpm_catchup_at_.reset();
                   }
                   if (auto snap = Collect(false, read_deadline_)) publish_(std::move(snap));
                 }) {}

Collector::~Collector() {
  Stop();
  // The workers' destructors (groups_) join their threads; Stop(max) has already waited.
}

Result<std::unique_ptr<Collector>> Collector::Create(const nvml::Library& lib,
                                                     CollectorOptions options) {
  std::unique_ptr<Collector> c(new Collector(lib, std::move(options)));
  Result<unsigned> count = lib.DeviceCount();
  if (!count.ok()) return count.status();
  const config::DeviceSelector& sel = c->options_.devices;
  if (!sel.all && sel.kind == config::DeviceSelector::Kind::kGpus) {
    for (unsigned id : sel.ids) {
      if (id >= *count) {
        return InvalidArgument("device selector names GPU " + std::to_string(id) + " but only " +
                               std::to_string(*count) + " GPU(s) exist");
      }
    }
  }
  const std::shared_ptr<const Plan> plan = MakePlan(c->options_.entries, 1);
  {
    util::MutexLock lock(&c->plan_mu_);
    c->plan_ = plan;
  }
  const EntityFields& all_fields = plan->whole;
  const EntityFields& gpu_fields = plan->mig_gpu;
  const EntityFields& instance_fields = plan->instance;
  const std::vector<const fields::FieldDef*>& label_fields = plan->labels;
  const bool clock_events_enabled = plan->clock_events;
  c->xid_last_enabled_ = plan->xid_last;
  c->xid_counts_enabled_ = plan->xid_counts;
  c->health_enabled_ = plan->health;
  c->p2p_enabled_ = plan->p2p;

  auto identities = std::make_shared<std::vector<model::DeviceIdentity>>();
  unsigned instance_count = 0;  // MIG instances seen so far on the host
  for (unsigned i = 0; i < *count; ++i) {
    if (sel.kind == config::DeviceSelector::Kind::kGpus && !sel.SelectsGpu(i)) continue;
    Result<nvml::Device> handle = lib.DeviceByIndex(i);
    if (!handle.ok()) {
      // Counted but not reachable (NO_PERMISSION, GPU_IS_LOST at start): skip it, loudly.
      log::Error("cannot open GPU; it will not be collected",
                 {{"gpu", std::to_string(i)}, {"err", handle.status().ToString()}});
      continue;
    }
    model::DeviceIdentity id =
        ReadIdentity(lib, *handle, i, c->options_.replace_blanks_in_model_name, label_fields);
    // MIG: `g` looks at GPUs only; `f` and `i` split a MIG-enabled GPU into its instances.
    bool mig_on = false;
    std::vector<MigInstance> instances;
    if (sel.kind != config::DeviceSelector::Kind::kGpus) {
      if (Result<bool> m = lib.MigEnabled(*handle); !m.ok()) {
        log::Warn("cannot read the MIG mode; collecting the GPU as a whole",
                  {{"gpu", std::to_string(i)}, {"err", m.status().ToString()}});
      } else if (*m) {
        mig_on = true;
        instances = DiscoverMig(lib, *handle, i);
      }
    }
    std::vector<const MigInstance*> chosen;
    for (const MigInstance& inst : instances) {
      // `i:<ids>` numbers the MIG instances of the host from 0, GPU by GPU in slot order.
      const unsigned ordinal = instance_count++;
      if (sel.kind == config::DeviceSelector::Kind::kFlex || sel.all ||
          std::binary_search(sel.ids.begin(), sel.ids.end(), ordinal)) {
        chosen.push_back(&inst);
      }
    }
    if (sel.kind == config::DeviceSelector::Kind::kInstances && chosen.empty()) continue;
    const size_t gpu_position = c->devices_.size();
    model::DeviceIdentity parent_identity = id;
    c->AddEntity(lib, *handle, std::move(id), mig_on ? gpu_fields : all_fields, *handle,
                 std::nullopt, std::nullopt, clock_events_enabled, identities.get());
    // Processes are listed per MIG instance on a MIG-enabled GPU (the parent's list is the
    // aggregate, and only for privileged users: docs/nvml.md §5).
    if (c->options_.process_metrics && !mig_on) {
      c->devices_.back()->processes = std::make_unique<ProcessReader>(lib, *handle);
    }
    for (const MigInstance* inst : chosen) {
      model::DeviceIdentity inst_id = parent_identity;
      inst_id.mig = inst->mig;
      c->AddEntity(lib, inst->handle, std::move(inst_id), instance_fields, *handle,
                   inst->mig.gpu_instance_id, gpu_position, false, identities.get());
      if (c->options_.process_metrics) {
        c->devices_.back()->processes =
            std::make_unique<ProcessReader>(lib, inst->handle, ProcessReader::Mode::kMemoryOnly);
      }
    }
    if (mig_on) {
      log::Info("MIG enabled", {{"gpu", std::to_string(i)},
                                {"instances", std::to_string(instances.size())},
                                {"collected", std::to_string(chosen.size())}});
    }
  }
  if (sel.kind == config::DeviceSelector::Kind::kInstances && !sel.all) {
    for (unsigned id : sel.ids) {
      if (id >= instance_count) {
        return InvalidArgument("device selector names MIG instance " + std::to_string(id) +
                               " but only " + std::to_string(instance_count) +
                               " MIG instance(s) exist");
      }
    }
  }
  c->identities_ = std::move(identities);
  {
    util::MutexLock lock(&c->slow_mu_);  // no other thread yet; keeps the analysis simple
    c->slow_latest_.resize(c->devices_.size());
  }
  if (c->health_enabled_) {
    for (auto& d : c->devices_) {
      if (d->parent) continue;
      d->pcie_replays = std::make_unique<PcieReplayWindow>();
      d->nvlink_health = std::make_unique<NvlinkHealthReader>(lib);
    }
  }
  if (c->xid_last_enabled_ || c->xid_counts_enabled_ || c->health_enabled_) {
    std::vector<XidWatcher::Gpu> gpus;
    for (size_t i = 0; i < c->devices_.size(); ++i) {
      if (c->devices_[i]->parent) continue;  // Xids are reported for the GPU
      c->devices_[i]->xid_slot = gpus.size();
      gpus.push_back({c->devices_[i]->handle, (*c->identities_)[i].index});
    }
    c->xids_ = XidWatcher::Create(lib, std::move(gpus), c->options_.xid_window, c->clock_);
    c->xids_->Start();
  }
  c->MakeGroups();
  return c;
}

void Collector::MakeGroups() {
  for (size_t i = 0; i < devices_.size(); ++i) {
    if (devices_[i]->parent) {
      // A MIG instance follows its GPU (AddEntity order): it joins the GPU's group.
      groups_.back().devices.push_back(i);
      continue;
    }
    Group g;
    g.devices.push_back(i);
    const std::string gpu = std::to_string((*identities_)[i].index);
    g.fast = std::make_unique<DeviceWorker>("gpu " + gpu + " fast reads", clock_);
    g.slow = std::make_unique<DeviceWorker>("gpu " + gpu + " slow reads", clock_);
    groups_.push_back(std::move(g));
  }
  util::MutexLock lock(&round_mu_);
  fast_results_.resize(groups_.size());
}

std::string Collector::GpuOf(size_t g) const {
  return std::to_string((*identities_)[groups_[g].devices.front()].index);
}

void Collector::AddEntity(const nvml::Library& lib, nvml::Device handle,
                          model::DeviceIdentity identity, const EntityFields& f,
                          nvml::Device gpm_device, std::optional<unsigned> gpm_gpu_instance,
                          std::optional<size_t> parent, bool clock_events,
                          std::vector<model::DeviceIdentity>* identities) {
  auto dev = std::make_unique<Device>();
  dev->handle = handle;
  dev->parent = parent;
  dev->scope = parent                          ? Device::Scope::kInstance
               : &f == &CurrentPlan()->mig_gpu ? Device::Scope::kMigGpu
                                               : Device::Scope::kWhole;
  dev->index = identity.index;
  dev->gpm_device = gpm_device;
  dev->gpm_gi = gpm_gpu_instance;
  dev->mig_gpu = parent.has_value() || dev->scope == Device::Scope::kMigGpu;
  dev->pci_bus_id = identity.pci_bus_id;
  dev->fast = std::make_unique<fields::DeviceReader>(lib, handle, f.fast);
  dev->slow = std::make_unique<fields::DeviceReader>(lib, handle, f.slow);
  // Rate fields (NVLINK_BANDWIDTH_TOTAL) need a previous raw sample: take it now, so the very
  // first collection (and --once) already has them. Errors surface on the real reads.
  std::vector<model::Sample> ignored_samples;
  std::vector<fields::FieldError> ignored_errors;
  dev->fast->Read(&ignored_samples, &ignored_errors);
  // Takes GPM's priming sample too (or warns once per field when the GPU has no GPM).
  dev->gpm = MakeProfilingSource(lib, *dev, f.gpm);
  if (clock_events) {
    dev->clock_events = std::make_unique<ClockEventWindow>(options_.clock_events_window);
  }
  devices_.push_back(std::move(dev));
  identities->push_back(std::move(identity));
}

bool Collector::Lost(size_t device) const {
  const Device& d = *devices_[device];
  return d.lost.load() || (d.parent && devices_[*d.parent]->lost.load());
}

void Collector::MarkLost(size_t device, const Status& why) {
  if (devices_[device]->parent) device = *devices_[device]->parent;
  if (devices_[device]->lost.exchange(true)) return;
  log::Error("GPU is lost (fell off the bus?); its series stop, other GPUs continue",
             {{"gpu", std::to_string((*identities_)[device].index)},
              {"UUID", (*identities_)[device].uuid},
              {"err", why.ToString()}});
}

std::unique_ptr<ProfilingSource> Collector::MakeProfilingSource(
    const nvml::Library& lib, const Device& d, const std::vector<const fields::FieldDef*>& f) {
  if (f.empty()) return nullptr;
  const std::string gpu = std::to_string(d.index);
  auto gpm = [&]() -> std::unique_ptr<ProfilingSource> {
    return GpmReader::Create(lib, d.gpm_device, d.index, f, d.gpm_gi);
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
    const cupti::Library* cupti = options_.cupti ? options_.cupti() : nullptr;
    if (cupti == nullptr) return nullptr;
    PmSamplingOptions o = options_.pm_sampling;
    o.collect_interval = options_.interval;
    o.paused = &profiling_paused_;
    return PmSamplingReader::Create(*cupti, cupti->CudaIndexFor(d.pci_bus_id, d.index), d.index, f,
                                    o);
  };
  switch (options_.profiling) {
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
  Result<bool> has_gpm = lib.GpmSupported(d.gpm_device);
  if ((has_gpm.ok() && *has_gpm) || !options_.cupti || d.mig_gpu) return gpm();
  if (std::unique_ptr<ProfilingSource> p = pm()) return p;
  return gpm();  // no CUPTI: GPM's own "metric not enabled" warnings, as without PM sampling
}

void Collector::ReadSlowGroup(size_t g) {
  const std::shared_ptr<const Plan> plan = CurrentPlan();
  for (size_t i : groups_[g].devices) {
    if (Lost(i)) continue;
    ApplySlowPlan(i, *plan);
    std::vector<model::Sample> samples;
    std::vector<fields::FieldError> errors;
    devices_[i]->slow->Read(&samples, &errors);
    NoteErrors(i, errors);
    util::MutexLock lock(&slow_mu_);
    slow_latest_[i] = std::move(samples);
  }
}

void Collector::FinishJob(uint64_t round) {
  util::MutexLock lock(&round_mu_);
  if (round != round_ || outstanding_ == 0) return;  // a late job of an earlier round
  if (--outstanding_ == 0) round_cv_.SignalAll();    // one wake-up per round, not per job
}

void Collector::PostSlowAfterFast(size_t g, uint64_t round, bool counted) {
  {
    util::MutexLock lock(&round_mu_);
    if (stopping_) {  // Stop is under way: no new work (a counted wait ends on stopping_)
      groups_[g].slow_handoff->store(false);
      return;
    }
  }
  const bool posted = groups_[g].slow->Post([this, g] { ReadSlowGroup(g); },
                                            [this, round, counted] {
                                              if (counted) FinishJob(round);
                                            });
  groups_[g].slow_handoff->store(false);  // posted (the slow worker counts now) or skipped
  // Still running from an earlier round (stuck, or slower than the interval): skipped; the fast
  // loop reports its values stale once it runs past the read deadline.
  if (!posted && counted) FinishJob(round);
}

std::shared_ptr<const model::Snapshot> Collector::Collect(bool read_slow_inline,
                                                          util::Clock::Duration wait) {
  auto snap = std::make_shared<model::Snapshot>();
  snap->time = std::chrono::system_clock::now();
  const auto start = Clock::now();
  const util::Clock::TimePoint deadline = clock_->Now() + wait;
  uint64_t round = 0;
  {
    util::MutexLock lock(&round_mu_);
    if (stopping_) return nullptr;
    round = ++round_;
  }
  // Post every GPU's reads. A GPU whose previous read is still running gets none (stale). Its
  // slow read follows its fast read on the slow worker (PostSlowAfterFast), so that one GPU's
  // NVML calls never run on two threads at once: on an H200 a call made while the ~4 ms energy
  // read holds the GPU waits for it, and the waiting costs CPU (docs/benchmarks.md).
  const int per_group = read_slow_inline ? 2 : 1;  // jobs this round waits for, per GPU
  {
    util::MutexLock lock(&round_mu_);
    outstanding_ = per_group * static_cast<int>(groups_.size());
  }
  std::vector<bool> fast_posted(groups_.size(), false);
  for (size_t g = 0; g < groups_.size(); ++g) {
    auto result = std::make_shared<GroupResult>();
    fast_posted[g] = groups_[g].fast->Post(
        [this, g, result] {
          ReadGroup(g, result.get());
          groups_[g].slow_handoff->store(true);  // until PostSlowAfterFast has run
        },
        [this, g, round, result, read_slow_inline] {
          {
            util::MutexLock lock(&round_mu_);
            result->round = round;
            fast_results_[g] = std::move(*result);
          }
          FinishJob(round);
          PostSlowAfterFast(g, round, read_slow_inline);
        });
    if (!fast_posted[g]) {
      // Neither its fast read nor the slow one that would follow it comes this round.
      util::MutexLock lock(&round_mu_);
      outstanding_ -= per_group;
      if (outstanding_ == 0) round_cv_.SignalAll();
    }
  }
  // Wait for the answers until the read deadline (or Stop).
  std::vector<GroupResult> results(groups_.size());
  {
    util::MutexLock lock(&round_mu_);
    while (outstanding_ > 0 && !stopping_) {
      if (clock_->WaitUntil(&round_cv_, &round_mu_, deadline)) break;
    }
    if (stopping_) return nullptr;
    for (size_t g = 0; g < groups_.size(); ++g) {
      if (fast_results_[g].round == round) results[g] = std::move(fast_results_[g]);
    }
  }
  const util::Clock::TimePoint now = clock_->Now();
  snap->identities = identities_;
  snap->devices.resize(devices_.size());
  for (size_t g = 0; g < groups_.size(); ++g) {
    Group& group = groups_[g];
    const bool answered = results[g].round == round;
    if (answered) {
      for (size_t k = 0; k < group.devices.size(); ++k) {
        snap->devices[group.devices[k]] = std::move(results[g].devices[k]);
      }
      if (group.fast_stale) {
        group.fast_stale = false;
        log::Info("GPU reads answer again; its series are back", {{"gpu", GpuOf(g)}});
      }
    } else {
      for (size_t i : group.devices) {
        model::DeviceSnapshot& ds = snap->devices[i];
        ds.identity = &(*identities_)[i];
        ds.up = false;
        ds.lost = Lost(i);
        ds.stale = !ds.lost;
      }
      if (!group.fast_stale && !Lost(group.devices.front())) {
        group.fast_stale = true;
        const std::optional<util::Clock::TimePoint> since = group.fast->BusySince();
        const char* call = group.fast->CurrentCall();
        log::Error(
            "GPU read did not finish within the read deadline; GPU marked stale, its series left "
            "out until it answers, other GPUs go on (logged once per streak)",
            {{"gpu", GpuOf(g)},
             {"call", call != nullptr ? call : "(between NVML calls)"},
             {"running_ms",
              std::to_string(
                  since
                      ? std::chrono::duration_cast<std::chrono::milliseconds>(now - *since).count()
                      : 0)},
             {"read_deadline_ms", std::to_string(read_deadline_.count())}});
      }
    }
    // The slow cache: stale while a slow read has been running for longer than the deadline.
    const std::optional<util::Clock::TimePoint> slow_since = group.slow->BusySince();
    const bool slow_stale = slow_since && now - *slow_since >= read_deadline_;
    if (slow_stale && !group.slow_stale && !Lost(group.devices.front())) {
      const char* call = group.slow->CurrentCall();
      log::Error(
          "GPU slow read did not finish within the read deadline; its slow fields (energy, PCIe "
          "throughput, violations) are left out until it answers (logged once per streak)",
          {{"gpu", GpuOf(g)}, {"call", call != nullptr ? call : "(between NVML calls)"}});
    } else if (!slow_stale && group.slow_stale) {
      log::Info("GPU slow reads answer again", {{"gpu", GpuOf(g)}});
    }
    group.slow_stale = slow_stale;
    for (size_t k = 0; k < group.devices.size(); ++k) {
      const size_t i = group.devices[k];
      model::DeviceSnapshot& ds = snap->devices[i];
      if (slow_stale && !Lost(i)) ds.slow_stale = true;
      if (!answered || !ds.up) continue;
      if (!slow_stale) {
        util::MutexLock lock(&slow_mu_);
        MergeSorted(&ds.samples, slow_latest_[i]);
      }
      // Every read made failed (and no slow value either): the GPU cannot be read.
      if (results[g].all_failed[k] && ds.samples.empty()) ds.up = false;
    }
  }
  // A MIG instance read after its GPU may have found the GPU lost: that GPU's entry (and any
  // sibling read before) must not claim to be up in this very snapshot. A lost GPU keeps only
  // its health series.
  for (size_t i = 0; i < devices_.size(); ++i) {
    model::DeviceSnapshot& ds = snap->devices[i];
    if (!Lost(i)) continue;
    if (ds.up || ds.stale) {
      ds = model::DeviceSnapshot{};
      ds.identity = &(*identities_)[i];
      ds.up = false;
    }
    ds.lost = true;
    ReadLostHealth(i, &ds);
  }
  // P2P entries toward a GPU lost in this snapshot go too: the peer's reads run on their own
  // thread, so whether a GPU's P2P query came before or after its peer was found lost is a race,
  // and a lost GPU has no series but its health (as ReadP2p skips peers already known lost).
  std::vector<unsigned> lost_gpus;
  for (size_t i = 0; i < devices_.size(); ++i) {
    if (Lost(i) && !devices_[i]->parent) lost_gpus.push_back((*identities_)[i].index);
  }
  if (!lost_gpus.empty()) {
    for (model::DeviceSnapshot& ds : snap->devices) {
      std::erase_if(ds.p2p, [&](const model::P2pStatus& p) {
        return std::find(lost_gpus.begin(), lost_gpus.end(), p.peer_index) != lost_gpus.end();
      });
    }
  }
  snap->xid_window_ms = options_.xid_window.count();
  snap->clock_events_window_ms = options_.clock_events_window.count();
  if (options_.attribution) snap->attribution = options_.attribution();
  snap->collect_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return snap;
}

std::shared_ptr<const model::Snapshot> Collector::CollectOnce() {
  // GPM values are window averages: give the window since the priming sample a useful length.
  Clock::time_point ready = Clock::now();
  for (const auto& d : devices_) {
    if (d->gpm != nullptr) {
      ready = std::max(ready, d->gpm->OnceReadyAt());
    }
  }
  std::this_thread::sleep_until(ready);
  return Collect(true, std::max<util::Clock::Duration>(read_deadline_, kOnceReadDeadline));
}

void Collector::Start(PublishFn publish) {
  publish_ = std::move(publish);
  // The first snapshot carries slow fields too, so the first scrape is complete but for GPM.
  if (auto snap = Collect(true, read_deadline_)) publish_(std::move(snap));
  // GPM values need two samples GpmReader::kMinWindow apart, and the priming one (Create) is
  // usually younger than that here: one more round as soon as GPM can answer, instead of a whole
  // interval later, so that the page is complete, GPM included, about 100 ms after start. It runs
  // on the loop's thread (a RunSoon run, which keeps the fixed schedule), so that Start returns
  // at once and the server answers with the first page meanwhile.
  Clock::time_point gpm_ready = Clock::time_point::min();
  for (const auto& d : devices_) {
    if (d->gpm != nullptr) gpm_ready = std::max(gpm_ready, d->gpm->ReadyAt());
  }
  if (gpm_ready != Clock::time_point::min() && gpm_ready > Clock::now() &&
      gpm_ready - Clock::now() < options_.interval / 2) {
    gpm_catchup_at_ = gpm_ready;
    fast_loop_.RunSoon();
  }
  fast_loop_.Start();
}

bool Collector::Stop(std::chrono::steady_clock::time_point deadline) {
  {
    util::MutexLock lock(&round_mu_);
    stopping_ = true;
  }
  round_cv_.SignalAll();
  // Neither loop calls NVML itself: both return promptly once stopping_ is set.
  fast_loop_.Stop();
  bool ended = true;
  for (Group& g : groups_) {
    ended = g.fast->StopUntil(deadline) && ended;
    ended = g.slow->StopUntil(deadline) && ended;
  }
  if (xids_ != nullptr && !xids_->StopUntil(deadline)) {
    xid_stuck_.store(true);
    ended = false;
  }
  return ended;
}

size_t Collector::ReadsInProgress() const {
  size_t n = 0;
  for (const Group& g : groups_) {
    const bool fast = g.fast->BusySince().has_value();
    n += fast ? 1 : 0;
    // The handoff flag is set while the fast worker is still busy: count it only once that
    // worker is idle, so one read is never counted twice.
    n += g.slow->BusySince().has_value() || (!fast && g.slow_handoff->load()) ? 1 : 0;
  }
  return n;
}

std::vector<std::string> Collector::StuckCalls() const {
  std::vector<std::string> out;
  const util::Clock::TimePoint now = clock_->Now();
  for (size_t g = 0; g < groups_.size(); ++g) {
    for (const DeviceWorker* w : {groups_[g].fast.get(), groups_[g].slow.get()}) {
      const std::optional<util::Clock::TimePoint> since = w->BusySince();
      if (!since || now - *since < read_deadline_) continue;
      const char* call = w->CurrentCall();
      char running[32];
      std::snprintf(running, sizeof(running), "%.1f",
                    std::chrono::duration<double>(now - *since).count());
      out.push_back("gpu=" + GpuOf(g) + " loop=" + (w == groups_[g].fast.get() ? "fast" : "slow") +
                    " call=" + (call != nullptr ? call : "(between NVML calls)") +
                    " running_s=" + running);
    }
  }
  if (xids_ != nullptr && xid_stuck_.load()) {
    if (const char* call = xids_->StuckCall(); call != nullptr) {
      out.push_back(std::string("xid watcher call=") + call);
    }
  }
  return out;
}

void Collector::MergeSorted(std::vector<model::Sample>* into,
                            const std::vector<model::Sample>& more) {
  into->insert(into->end(), more.begin(), more.end());
  std::stable_sort(into->begin(), into->end(), [](const model::Sample& a, const model::Sample& b) {
    return a.field_id < b.field_id;
  });
}

}  // namespace nvmlx::collect
