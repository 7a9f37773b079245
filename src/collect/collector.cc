// Collector: creation, the rounds that post each GPU group's reads and wait for them until the
// read deadline, the snapshot assembled from their answers, and the lifecycle. What runs on the
// GPUs' workers is collect/gpu_group.cc; Create's steps are collect/collector_setup.cc.
#include "collect/collector.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>  // std::this_thread::sleep_until (the GPM window is real time)
#include <type_traits>

#include "fields/field_roles.h"
#include "util/log.h"

namespace nvmlx::collect {
namespace {

using SteadyClock = std::chrono::steady_clock;  // real time: the GPM window, collect_seconds

// DCGM_EXP_GPU_HEALTH_STATUS of lost GPU i (LostGpuHealth: ALL fails, fallen off the bus), as
// DCGM reports a GPU that fell off the bus; MIG instances and a plan without health get none.
void ReadLostHealth(const Entities& entities, const XidWatcher* xids, size_t i,
                    const plan::FieldPlan& plan, model::DeviceSnapshot* out) {
  if (!plan.Has(fields::Role::kHealthStatus) || entities.fixed(i).parent) return;
  int64_t last = 0;
  std::vector<model::XidCount> counts;
  if (xids != nullptr && entities.fixed(i).xid_slot) {
    (void)xids->Read(*entities.fixed(i).xid_slot, &last, &counts);  // false: none watched
  }
  out->health = LostGpuHealth(counts);
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
      ctx_{.lib = lib_,
           .options = options_,
           .clock = clock_,
           .entities = entities_,
           .xids = xids_,
           .slow = slow_,
           .logged = logged_,
           .profiling_paused = profiling_paused_},
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

Result<std::unique_ptr<Collector>> Collector::Create(const nvml::Library& lib,
                                                     CollectorOptions options) {
  std::unique_ptr<Collector> c(new Collector(lib, std::move(options)));
  if (c->options_.plan == nullptr) return InvalidArgument("Collector::Create: no field plan");
  c->plan_.Publish(c->options_.plan);
  Result<unsigned> count = lib.DeviceCount();
  if (!count.ok()) return count.status();
  CollectorSetUp setup(c->ctx_, c->read_deadline_, &c->rounds_);
  Result<std::vector<std::unique_ptr<GpuGroup>>> groups = setup.LayOut(*count);
  if (!groups.ok()) return groups.status();
  c->groups_ = std::move(groups).value();
  c->slow_.Resize(c->entities_.size());
  c->rounds_.Resize(c->groups_.size());
  c->xids_ = setup.StartXidWatcher();
  setup.PrimeGroups(c->groups_);
  return c;
}

Collector::~Collector() {
  Stop();
  // The workers' destructors (groups_) join their threads; Stop(max) has already waited.
}

bool Collector::SetPlan(std::shared_ptr<const plan::FieldPlan> plan) {
  const bool needs_watcher = plan->NeedsXidWatcher();
  plan_.Publish(std::move(plan));
  return needs_watcher && xids_ == nullptr;
}

void Collector::PostSlowAfterFast(size_t g, uint64_t round, bool counted) {
  if (rounds_.stopping()) {  // Stop is under way: no new work (a counted wait ends on it)
    groups_[g]->slow_handoff.store(false);
    return;
  }
  GpuGroup& group = *groups_[g];
  // The slow read takes the plan current when it starts (a reload reaches it one read sooner).
  const bool posted =
      group.slow_worker().Post([this, &group] { group.slow_reads().Read(*plan_.Get()); },
                               [this, round, counted] {
                                 if (counted) rounds_.FinishJob(round);
                               });
  group.slow_handoff.store(false);  // posted (the slow worker counts now) or skipped
  // Still running from an earlier round (stuck, or slower than the interval): skipped; the fast
  // loop reports its values stale once it runs past the read deadline.
  if (!posted && counted) rounds_.FinishJob(round);
}

std::shared_ptr<const model::Snapshot> Collector::Collect(bool read_slow_inline,
                                                          util::Clock::Duration wait) {
  const auto start = SteadyClock::now();
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
  snap->collect_seconds = std::chrono::duration<double>(SteadyClock::now() - start).count();
  return snap;
}

void Collector::PostReads(uint64_t round, const std::shared_ptr<const plan::FieldPlan>& plan,
                          bool read_slow_inline) {
  // A GPU whose previous read is still running gets none (stale). Its slow read follows its fast
  // read on the slow worker (PostSlowAfterFast), so that one GPU's NVML calls never run on two
  // threads at once: on an H200 a call made while the ~4 ms energy read holds the GPU waits for
  // it, and the waiting costs CPU (docs/benchmarks.md).
  for (size_t g = 0; g < groups_.size(); ++g) {
    GpuGroup& group = *groups_[g];
    if (group.never_read()) {  // still in its start-up probe, or ended it late: stale
      rounds_.Skip(read_slow_inline ? 2 : 1);
      continue;
    }
    auto result = std::make_shared<GroupResult>();
    const bool posted = group.fast_worker().Post(
        [&group, result, plan] {
          group.fast_reads().Read(*plan, result.get());
          group.slow_handoff.store(true);  // until PostSlowAfterFast has run
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
  snap->identities = entities_.identities();
  snap->devices.resize(entities_.size());
  for (size_t g = 0; g < groups_.size(); ++g) {
    // A late answer (reads that finished after their round's deadline) is published now, one
    // collection late: the GPU is slow, not stuck (hardening round two, row 7).
    const bool late = results[g].late;
    const bool answered = results[g].round == round || late;
    if (answered) {
      TakeAnswer(g, late, &results[g], snap.get());
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

void Collector::TakeAnswer(size_t g, bool late, GroupResult* result, model::Snapshot* snap) {
  GpuGroup& group = *groups_[g];
  GroupStreaks& streaks = group.streaks;
  for (size_t k = 0; k < group.devices().size(); ++k) {
    snap->devices[group.devices()[k]] = std::move(result->devices[k]);
    snap->devices[group.devices()[k]].late = late;
  }
  if (streaks.fast_stale) {
    streaks.fast_stale = false;
    log::Info(streaks.stale_in_set_up ? "GPU set-up finished; its series start"
                                      : "GPU reads answer again; its series are back",
              {{"gpu", group.gpu()}});
  }
  if (late && !streaks.fast_late) {
    streaks.fast_late = true;
    log::Warn(
        "GPU reads are slow: they finish after the read deadline, so their values are "
        "published one collection late (logged once per streak)",
        {{"gpu", group.gpu()}, {"read_deadline_ms", std::to_string(read_deadline_.count())}});
  } else if (!late && streaks.fast_late) {
    streaks.fast_late = false;
    log::Info("GPU reads finish within the read deadline again", {{"gpu", group.gpu()}});
  }
}

void Collector::MarkUnanswered(size_t g, util::Clock::TimePoint now, model::Snapshot* snap) {
  GpuGroup& group = *groups_[g];
  GroupStreaks& streaks = group.streaks;
  const char* call = group.fast_worker().CurrentCall();
  const bool setting_up = !group.set_up.load();
  for (size_t i : group.devices()) {
    model::DeviceSnapshot& ds = snap->devices[i];
    ds.identity = &entities_.identity(i);
    ds.up = false;
    ds.lost = entities_.Lost(i);
    ds.stale = !ds.lost;
    ds.setting_up = ds.stale && setting_up;
    if (ds.stale && call != nullptr) ds.stuck_call = call;
  }
  if (streaks.fast_stale || entities_.Lost(group.devices().front())) return;
  streaks.fast_stale = true;
  streaks.stale_in_set_up = setting_up;
  // A GPU still in its set-up was named when the start-up stopped waiting for it (CollectorSetUp);
  // its streak is still marked, so that its first answer is logged.
  if (setting_up) return;
  const std::optional<util::Clock::TimePoint> since = group.fast_worker().BusySince();
  log::Error(
      "GPU read did not finish within the read deadline; GPU marked stale, its series left "
      "out until it answers, other GPUs go on (logged once per streak)",
      {{"gpu", group.gpu()},
       {"call", call != nullptr ? call : "(between NVML calls)"},
       {"running_ms",
        std::to_string(
            since ? std::chrono::duration_cast<std::chrono::milliseconds>(now - *since).count()
                  : 0)},
       {"read_deadline_ms", std::to_string(read_deadline_.count())}});
}

void Collector::MergeSlow(size_t g, bool answered, const GroupResult& result,
                          util::Clock::TimePoint now, model::Snapshot* snap) {
  GpuGroup& group = *groups_[g];
  // The slow cache: stale while a slow read has been running for longer than the deadline.
  const std::optional<util::Clock::TimePoint> slow_since = group.slow_worker().BusySince();
  const bool slow_stale = slow_since && now - *slow_since >= read_deadline_;
  if (slow_stale && !group.streaks.slow_stale && !entities_.Lost(group.devices().front())) {
    const char* call = group.slow_worker().CurrentCall();
    log::Error(
        "GPU slow read did not finish within the read deadline; its slow fields (energy, PCIe "
        "throughput, violations) are left out until it answers (logged once per streak)",
        {{"gpu", group.gpu()}, {"call", call != nullptr ? call : "(between NVML calls)"}});
  } else if (!slow_stale && group.streaks.slow_stale) {
    log::Info("GPU slow reads answer again", {{"gpu", group.gpu()}});
  }
  group.streaks.slow_stale = slow_stale;
  for (size_t k = 0; k < group.devices().size(); ++k) {
    const size_t i = group.devices()[k];
    model::DeviceSnapshot& ds = snap->devices[i];
    if (slow_stale && !entities_.Lost(i)) ds.slow_stale = true;
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
  for (size_t i = 0; i < entities_.size(); ++i) {
    if (!entities_.Lost(i)) continue;
    model::DeviceSnapshot& ds = snap->devices[i];
    if (ds.up || ds.stale) {
      ds = model::DeviceSnapshot{};
      ds.identity = &entities_.identity(i);
      ds.up = false;
    }
    ds.lost = true;
    ReadLostHealth(entities_, xids_.get(), i, plan, &ds);
    if (!entities_.fixed(i).parent) lost_gpus.push_back(entities_.identity(i).index);
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
  std::this_thread::sleep_until(std::max(SteadyClock::now(), ProfilingReadyAt(/*once=*/true)));
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
  const SteadyClock::time_point gpm_ready = ProfilingReadyAt(/*once=*/false);
  if (gpm_ready != SteadyClock::time_point::min() && gpm_ready > SteadyClock::now() &&
      gpm_ready - SteadyClock::now() < options_.interval / 2) {
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
  for (const std::unique_ptr<GpuGroup>& g : groups_) {
    ended = g->fast_worker().StopUntil(deadline) && ended;
    ended = g->slow_worker().StopUntil(deadline) && ended;
  }
  if (xids_ != nullptr && !xids_->StopUntil(deadline)) {
    xid_stuck_.store(true);
    ended = false;
  }
  return ended;
}

ProfilingSource::Clock::time_point Collector::ProfilingReadyAt(bool once) const {
  // Only a group whose set-up is done: its priming job has published its sources' times.
  ProfilingSource::Clock::time_point ready = ProfilingSource::Clock::time_point::min();
  for (const std::unique_ptr<GpuGroup>& g : groups_) {
    if (!g->set_up.load()) continue;
    ready = std::max(ready, once ? g->fast_reads().OnceReadyAt() : g->fast_reads().ReadyAt());
  }
  return ready;
}

size_t Collector::ReadsInProgress() const {
  size_t n = 0;
  for (const std::unique_ptr<GpuGroup>& g : groups_) {
    const bool fast = g->fast_worker().BusySince().has_value();
    n += fast ? 1 : 0;
    // The handoff flag is set while the fast worker is still busy: count it only once that
    // worker is idle, so one read is never counted twice.
    n += g->slow_worker().BusySince().has_value() || (!fast && g->slow_handoff.load()) ? 1 : 0;
  }
  return n;
}

std::vector<std::string> Collector::StuckCalls() const {
  std::vector<std::string> out;
  const util::Clock::TimePoint now = clock_->Now();
  for (const std::unique_ptr<GpuGroup>& g : groups_) {
    for (const DeviceWorker* w : {&g->fast_worker(), &g->slow_worker()}) {
      const std::optional<util::Clock::TimePoint> since = w->BusySince();
      if (!since || now - *since < read_deadline_) continue;
      const char* call = w->CurrentCall();
      char running[32];
      std::snprintf(running, sizeof(running), "%.1f",
                    std::chrono::duration<double>(now - *since).count());
      out.push_back("gpu=" + g->gpu() + " loop=" + (w == &g->fast_worker() ? "fast" : "slow") +
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

}  // namespace nvmlx::collect
