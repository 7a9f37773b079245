// Collector, part 1: the rounds that post each GPU's reads and wait for them until the read
// deadline, and the lifecycle. Creation is collector_setup.cc; reading one GPU is
// collector_read.cc; the field plan is collector_plan.cc.
#include "collect/collector.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>  // std::this_thread::sleep_until (the GPM window is real time)
#include <type_traits>

#include "util/log.h"

namespace nvmlx::collect {
namespace {

using Clock = std::chrono::steady_clock;

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

std::string Collector::GpuOf(size_t g) const {
  return std::to_string((*identities_)[groups_[g].devices.front()].index);
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
    const Device& d, const std::vector<const fields::FieldDef*>& f) {
  const nvml::Library& lib = lib_;
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
  const std::shared_ptr<const plan::FieldPlan> plan = plan_.Get();
  for (size_t i : groups_[g].devices) {
    if (Lost(i)) continue;
    ApplySlowPlan(i, *plan);
    std::vector<model::Sample> samples;
    std::vector<fields::FieldError> errors;
    devices_[i]->slow->Read(&samples, &errors);
    NoteErrors(i, errors);
    slow_.Put(i, 0, std::move(samples));
    if (!Lost(i)) ReadPeriodic(i);
  }
}

void Collector::ReadPeriodic(size_t i) {
  Device& d = *devices_[i];
  for (size_t k = 0; k < d.periodic.size(); ++k) {
    const util::Clock::TimePoint now = clock_->Now();
    const std::optional<util::Clock::TimePoint>& last = d.periodic_read_at[k];
    // Half an interval of slack: the rounds tick on a fixed schedule, a read lands a little
    // after its tick, and a cadence of n intervals must read every n-th round.
    if (last && now - *last < d.periodic_fields[k].every - options_.interval / 2) continue;
    std::vector<model::Sample> samples;
    std::vector<fields::FieldError> errors;
    d.periodic[k]->Read(&samples, &errors);
    NoteErrors(i, errors);
    d.periodic_read_at[k] = now;
    slow_.Put(i, 1 + k, std::move(samples));
    if (Lost(i)) return;
  }
}

void Collector::PostSlowAfterFast(size_t g, uint64_t round, bool counted) {
  if (rounds_.stopping()) {  // Stop is under way: no new work (a counted wait ends on it)
    groups_[g].slow_handoff->store(false);
    return;
  }
  const bool posted = groups_[g].slow->Post([this, g] { ReadSlowGroup(g); },
                                            [this, round, counted] {
                                              if (counted) rounds_.FinishJob(round);
                                            });
  groups_[g].slow_handoff->store(false);  // posted (the slow worker counts now) or skipped
  // Still running from an earlier round (stuck, or slower than the interval): skipped; the fast
  // loop reports its values stale once it runs past the read deadline.
  if (!posted && counted) rounds_.FinishJob(round);
}

std::shared_ptr<const model::Snapshot> Collector::Collect(bool read_slow_inline,
                                                          util::Clock::Duration wait) {
  const auto start = Clock::now();
  const auto time = std::chrono::system_clock::now();
  const util::Clock::TimePoint deadline = clock_->Now() + wait;
  // The whole round reads under one plan, the one it is stamped with.
  const std::shared_ptr<const plan::FieldPlan> plan = plan_.Get();
  // Jobs this round waits for, per GPU: its fast read, and with read_slow_inline its slow one.
  const int per_group = read_slow_inline ? 2 : 1;
  const std::optional<uint64_t> round = rounds_.Begin(per_group * static_cast<int>(groups_.size()));
  if (!round) return nullptr;
  PostReads(*round, plan, read_slow_inline);
  // Wait for the answers until the read deadline (or Stop).
  std::optional<std::vector<GroupResult>> results = rounds_.Await(*round, clock_, deadline);
  if (!results) return nullptr;
  std::shared_ptr<model::Snapshot> snap = Assemble(*round, std::move(*results), *plan);
  snap->plan = plan;
  snap->time = time;
  snap->collect_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return snap;
}

void Collector::PostReads(uint64_t round, const std::shared_ptr<const plan::FieldPlan>& plan,
                          bool read_slow_inline) {
  // A GPU whose previous read is still running gets none (stale). Its slow read follows its fast
  // read on the slow worker (PostSlowAfterFast), so that one GPU's NVML calls never run on two
  // threads at once: on an H200 a call made while the ~4 ms energy read holds the GPU waits for
  // it, and the waiting costs CPU (docs/benchmarks.md).
  for (size_t g = 0; g < groups_.size(); ++g) {
    if (groups_[g].never_read) {  // still in its start-up probe, or ended it late: stale
      rounds_.Skip(read_slow_inline ? 2 : 1);
      continue;
    }
    auto result = std::make_shared<GroupResult>();
    const bool posted = groups_[g].fast->Post(
        [this, g, result, plan] {
          ReadGroup(g, *plan, result.get());
          groups_[g].slow_handoff->store(true);  // until PostSlowAfterFast has run
        },
        [this, g, round, result, read_slow_inline] {
          rounds_.Deliver(g, round, std::move(*result));
          rounds_.FinishJob(round);
          PostSlowAfterFast(g, round, read_slow_inline);
        });
    // Neither its fast read nor the slow one that would follow it comes this round.
    if (!posted) rounds_.Skip(read_slow_inline ? 2 : 1);
  }
}

std::shared_ptr<model::Snapshot> Collector::Assemble(uint64_t round,
                                                     std::vector<GroupResult> results,
                                                     const plan::FieldPlan& plan) {
  auto snap = std::make_shared<model::Snapshot>();
  const util::Clock::TimePoint now = clock_->Now();
  snap->identities = identities_;
  snap->devices.resize(devices_.size());
  for (size_t g = 0; g < groups_.size(); ++g) {
    Group& group = groups_[g];
    // A late answer (reads that finished after their round's deadline) is published now, one
    // collection late: the GPU is slow, not stuck (hardening round two, row 7).
    const bool late = results[g].late;
    const bool answered = results[g].round == round || late;
    if (answered) {
      for (size_t k = 0; k < group.devices.size(); ++k) {
        snap->devices[group.devices[k]] = std::move(results[g].devices[k]);
        snap->devices[group.devices[k]].late = late;
      }
      if (group.fast_stale) {
        group.fast_stale = false;
        log::Info(group.stale_in_set_up ? "GPU set-up finished; its series start"
                                        : "GPU reads answer again; its series are back",
                  {{"gpu", GpuOf(g)}});
      }
      if (late && !group.fast_late) {
        group.fast_late = true;
        log::Warn(
            "GPU reads are slow: they finish after the read deadline, so their values are "
            "published one collection late (logged once per streak)",
            {{"gpu", GpuOf(g)}, {"read_deadline_ms", std::to_string(read_deadline_.count())}});
      } else if (!late && group.fast_late) {
        group.fast_late = false;
        log::Info("GPU reads finish within the read deadline again", {{"gpu", GpuOf(g)}});
      }
    } else {
      MarkUnanswered(g, now, snap.get());
    }
    MergeSlow(g, answered, results[g], now, snap.get());
  }
  SettleLost(plan, snap.get());
  snap->xid_window_ms = options_.xid_window.count();
  snap->clock_events_window_ms = options_.clock_events_window.count();
  if (options_.attribution) snap->attribution = options_.attribution();
  return snap;
}

void Collector::MarkUnanswered(size_t g, util::Clock::TimePoint now, model::Snapshot* snap) {
  Group& group = groups_[g];
  const char* call = group.fast->CurrentCall();
  const bool setting_up = !group.set_up->load();
  for (size_t i : group.devices) {
    model::DeviceSnapshot& ds = snap->devices[i];
    ds.identity = &(*identities_)[i];
    ds.up = false;
    ds.lost = Lost(i);
    ds.stale = !ds.lost;
    ds.setting_up = ds.stale && setting_up;
    if (ds.stale && call != nullptr) ds.stuck_call = call;
  }
  if (group.fast_stale || Lost(group.devices.front())) return;
  group.fast_stale = true;
  group.stale_in_set_up = setting_up;
  // A GPU still in its set-up was named when the start-up stopped waiting for it (AwaitSetUp);
  // its streak is still marked, so that its first answer is logged.
  if (setting_up) return;
  const std::optional<util::Clock::TimePoint> since = group.fast->BusySince();
  log::Error(
      "GPU read did not finish within the read deadline; GPU marked stale, its series left "
      "out until it answers, other GPUs go on (logged once per streak)",
      {{"gpu", GpuOf(g)},
       {"call", call != nullptr ? call : "(between NVML calls)"},
       {"running_ms",
        std::to_string(
            since ? std::chrono::duration_cast<std::chrono::milliseconds>(now - *since).count()
                  : 0)},
       {"read_deadline_ms", std::to_string(read_deadline_.count())}});
}

void Collector::MergeSlow(size_t g, bool answered, const GroupResult& result,
                          util::Clock::TimePoint now, model::Snapshot* snap) {
  Group& group = groups_[g];
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
    std::vector<model::Sample> slow;
    if (!slow_stale) {
      slow_.AppendTo(i, &slow);
      MergeSorted(&ds.samples, slow);
    }
    // Every read made failed (and no slow value either): the GPU cannot be read. The samples
    // that are no reads of the GPU (the Xid watcher's last Xid) do not count (row 4).
    if (result.all_failed[k] && slow.empty()) ds.up = false;
  }
}

void Collector::SettleLost(const plan::FieldPlan& plan, model::Snapshot* snap) const {
  // A MIG instance read after its GPU may have found the GPU lost: that GPU's entry (and any
  // sibling read before) must not claim to be up in this very snapshot. A lost GPU keeps only
  // its health series.
  std::vector<unsigned> lost_gpus;
  for (size_t i = 0; i < devices_.size(); ++i) {
    if (!Lost(i)) continue;
    model::DeviceSnapshot& ds = snap->devices[i];
    if (ds.up || ds.stale) {
      ds = model::DeviceSnapshot{};
      ds.identity = &(*identities_)[i];
      ds.up = false;
    }
    ds.lost = true;
    ReadLostHealth(i, plan, &ds);
    if (!devices_[i]->parent) lost_gpus.push_back((*identities_)[i].index);
  }
  if (lost_gpus.empty()) return;
  // P2P entries toward a GPU lost in this snapshot go too: the peer's reads run on their own
  // thread, so whether a GPU's P2P query came before or after its peer was found lost is a race,
  // and a lost GPU has no series but its health (as ReadP2p skips peers already known lost).
  for (model::DeviceSnapshot& ds : snap->devices) {
    std::erase_if(ds.p2p, [&](const model::P2pStatus& p) {
      return std::find(lost_gpus.begin(), lost_gpus.end(), p.peer_index) != lost_gpus.end();
    });
  }
}

std::shared_ptr<const model::Snapshot> Collector::CollectOnce() {
  // GPM values are window averages: give the window since the priming sample a useful length.
  Clock::time_point ready = Clock::now();
  for (size_t i : SetUpDevices()) {
    if (devices_[i]->gpm != nullptr) ready = std::max(ready, devices_[i]->gpm->OnceReadyAt());
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
  for (size_t i : SetUpDevices()) {
    if (devices_[i]->gpm != nullptr) gpm_ready = std::max(gpm_ready, devices_[i]->gpm->ReadyAt());
  }
  if (gpm_ready != Clock::time_point::min() && gpm_ready > Clock::now() &&
      gpm_ready - Clock::now() < options_.interval / 2) {
    gpm_catchup_at_ = gpm_ready;
    fast_loop_.RunSoon();
  }
  fast_loop_.Start();
}

bool Collector::Stop(std::chrono::steady_clock::time_point deadline) {
  rounds_.Stop();
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

std::vector<size_t> Collector::SetUpDevices() const {
  std::vector<size_t> out;
  for (const Group& g : groups_) {
    if (g.set_up->load()) out.insert(out.end(), g.devices.begin(), g.devices.end());
  }
  return out;
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
