// Collector: the background loop that reads every enabled field of every selected GPU each
// interval into an immutable Snapshot and hands it to a publish callback (which renders it once
// and swaps it in for the HTTP server). It only orchestrates rounds; the parts below own the rest.
//
// Threads, and the part each owns:
//  - the fast loop (a util::PeriodicWorker) ticks every interval: it posts one read job per GPU
//    group to that group's fast DeviceWorker, waits for the answers until the read deadline
//    (RoundBoard), and publishes a snapshot of the GPUs that answered (Assemble; the groups'
//    GroupStreaks are its own);
//  - per physical GPU (collect/gpu_group.h: the GPU and its MIG instances), a fast DeviceWorker
//    that reads the cheap fields (FastReads; the entities' FastState, collect/gpu_entity.h) and
//    then hands over to the GPU's slow DeviceWorker, which reads the expensive ones (energy
//    ~4 ms, PCIe throughput ~21 ms, violation counters; docs/nvml.md §9) and the fields of a
//    longer cadence (plan::PeriodicFields, within half an interval of it) into the SlowCache
//    (SlowReads; SlowState). A slow call never delays the gauges (its values are at most one
//    interval old), one GPU's NVML calls never run on two threads at once (on an H200 a call
//    waiting behind the energy read costs CPU: docs/benchmarks.md), and a call stuck in the
//    driver holds that GPU's workers only;
//  - the XidWatcher (its own thread, NVML events): Xid fields, Xid 79, health.
// A stuck call (docs/faults.md): a GPU whose fast read has not answered by the read deadline is
// published stale (DeviceSnapshot::stale: no series, up = false) and logged once per streak with
// the NVML function it is stuck in; the next rounds skip it while its read still runs (at most
// one outstanding read per worker: no thread or work piles up). A read that ends after its
// deadline is published by the next round, marked late. A slow read running past the read
// deadline makes the GPU's slow values stale (DeviceSnapshot::slow_stale). The fast loop is
// thereby the watchdog of every read.
// Set-up (Create; collect/collector_setup.h): each GPU is opened, identified and its readers
// built and primed on its own fast worker, all at once, waiting up to kSetUpDeadline; a GPU whose
// set-up hangs is published stale (setting_up). Identities and the MIG layout are read once, at
// Create; MIG configuration is only read, never changed (a reconfiguration needs a restart).
// A field that fails is left out (as dcgm-exporter drops DCGM's blank values) and logged once per
// (GPU, field); a GPU whose every read fails is published with up = false. A lost GPU
// (GPU_IS_LOST, Xid 79) is marked down, logged once and no longer polled; it keeps its health
// series, as DCGM reports such a GPU.
// The fast loop runs on a fixed schedule (kFixedRate: an overrun skips the ticks it missed) on
// an injectable util::Clock (CollectorOptions::clock), which also times the read deadline and the
// Xid and clock-event windows, so tests drive the ticks with a FakeClock; the GPM window of
// CollectOnce and collect_seconds are real time (NVML's GPM samples are).
// The field plan (plan/field_plan.h) says what to read: each round reads under the plan current
// when it starts and stamps it on its Snapshot; SetPlan (a reload) replaces it for the next round,
// and each GPU's workers rebuild their readers when they next read.
//
// Thread-safety: Create/CollectOnce/Start/Stop from one controlling thread; StuckCalls,
// ReadsInProgress, SetPlan and SetProfilingPaused from any. The publish callback runs on the fast
// loop's thread. The Collector holds no mutex: what the threads share lives in parts with their
// own locks (collect/collector_parts.h) or is atomic, and the plan is in a util::Latest.
#ifndef NVML_EXPORTER_COLLECT_COLLECTOR_H_
#define NVML_EXPORTER_COLLECT_COLLECTOR_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collect/collector_options.h"
#include "collect/collector_parts.h"
#include "collect/collector_setup.h"
#include "collect/gpu_entity.h"
#include "collect/gpu_group.h"
#include "collect/xid_watcher.h"
#include "model/snapshot.h"
#include "nvml/nvml.h"
#include "plan/field_plan.h"
#include "util/clock.h"
#include "util/latest.h"
#include "util/periodic_worker.h"

namespace nvmlx::collect {

class Collector {
 public:
  using PublishFn = std::function<void(std::shared_ptr<const model::Snapshot>)>;

  // CollectOnce waits this long (or the read deadline, if longer) for every GPU's reads, slow
  // ones included: --once prints one complete page, and SIGTERM still ends it (app/app.cc).
  static constexpr std::chrono::seconds kOnceReadDeadline{10};
  // Create waits for the GPUs' set-up up to this (the read deadline, if longer), then returns
  // with a GPU still in its set-up published stale (DeviceSnapshot::setting_up), so that one
  // call hung in the driver keeps neither the other GPUs nor the port waiting. A device selector
  // that lists MIG instances by number waits for every GPU (the numbering needs them).
  static constexpr std::chrono::seconds kSetUpDeadline = CollectorSetUp::kSetUpDeadline;

  // Enumerates the selected GPUs, reads their identity and sets them up. `lib` must outlive the
  // Collector (its readers keep a reference). Fails when the selector names a GPU or MIG instance
  // that does not exist (as dcgm-exporter's verifyDevicePresence does).
  static Result<std::unique_ptr<Collector>> Create(const nvml::Library& lib,
                                                   CollectorOptions options);
  ~Collector();
  Collector(const Collector&) = delete;
  Collector& operator=(const Collector&) = delete;

  // One full collection, slow fields included (for --once), waiting up to kOnceReadDeadline. Must
  // not be called while the loops run. With profiling fields it first waits until their sources'
  // OnceReadyAt (GPM: GpmReader::kOnceWindow after the priming sample), so that --once prints
  // them.
  std::shared_ptr<const model::Snapshot> CollectOnce();

  // Starts the loop; `publish` receives every snapshot (first one immediately, after at most
  // one read deadline, before Start returns; with GPM fields a second one, on the loop's
  // thread, as soon as GPM can answer, ~100 ms later, when that is under half an interval away).
  void Start(PublishFn publish);
  // Stops the loop and every thread, waiting for a read in progress until `deadline` (steady
  // clock). True when every thread has ended; false when some are stuck inside NVML
  // (StuckCalls() says where): the Collector must then not be destroyed before they return (the
  // destructor waits for them; the daemon leaves the process instead: app/app.cc).
  bool Stop(std::chrono::steady_clock::time_point deadline =
                std::chrono::steady_clock::time_point::max());
  // Every read in progress for longer than the read deadline, and a stuck Xid watcher: one line
  // each, e.g. "gpu=0 loop=fast call=nvmlDeviceGetTemperature running_s=12.0".
  std::vector<std::string> StuckCalls() const;
  // Replaces the field plan (a reload of the collectors file; docs/faults.md) from the next round
  // on: each GPU's workers rebuild that GPU's readers before their next read, so a GPU whose
  // read is stuck picks the new plan up when it returns. Never blocks on NVML. Label values and
  // the MIG layout stay as read at start; Xid and health fields need the Xid watcher, which runs
  // only when the start-up plan had them: true when the new plan has such fields and no watcher
  // runs (the owner restarts the daemon to collect them). Thread-safe.
  bool SetPlan(std::shared_ptr<const plan::FieldPlan> plan);
  // The plan the next round reads under.
  std::shared_ptr<const plan::FieldPlan> plan() const { return plan_.Get(); }
  // Reads posted and not yet finished, fast and slow, over all GPUs, a slow read handed over by
  // its fast one counted from the moment the fast read ends (tests wait on it).
  size_t ReadsInProgress() const;
  std::chrono::milliseconds read_deadline() const { return read_deadline_; }

  // Every collected entity: GPUs, and MIG instances (identity.mig set) after their GPU.
  const std::vector<model::DeviceIdentity>& identities() const { return *entities_.identities(); }
  std::chrono::milliseconds interval() const { return options_.interval; }
  // Pauses (true) or resumes PM sampling on every GPU (SIGUSR1 / SIGUSR2): the next collection
  // releases or retakes the counters. GPM is unaffected (it does not block other profilers).
  // Thread-safe.
  void SetProfilingPaused(bool paused) { profiling_paused_.store(paused); }
  bool ProfilingPaused() const { return profiling_paused_.load(); }

 private:
  Collector(const nvml::Library& lib, CollectorOptions options);

  // --- One round (collector.cc), on the fast loop's thread (or the controlling thread's, for
  // CollectOnce and Start's first round). ---
  // Posts the reads, waits for them at most `wait`, builds the snapshot. Null when the collector
  // is stopping.
  std::shared_ptr<const model::Snapshot> Collect(bool read_slow_inline, util::Clock::Duration wait);
  // Posts every group's fast read of `round` under `plan` (a group still busy gets none).
  void PostReads(uint64_t round, const std::shared_ptr<const plan::FieldPlan>& plan,
                 bool read_slow_inline);
  // On group g's fast worker, once its fast read of `round` is done: posts the group's slow read
  // unless the previous one still runs. `counted`: this round waits for it (--once, Start).
  void PostSlowAfterFast(size_t g, uint64_t round, bool counted);
  // The publish step: the snapshot of `round` from the groups' answers, the slow cache, the
  // stale and lost marks, the attribution.
  std::shared_ptr<model::Snapshot> Assemble(uint64_t round, std::vector<GroupResult> results,
                                            const plan::FieldPlan& plan);
  // Group g answered (`late`: an earlier round's answer): its entities' entries, and the end of
  // a stale or late streak logged.
  void TakeAnswer(size_t g, bool late, GroupResult* result, model::Snapshot* snap);
  // Group g did not answer `round` in time: its entities stale (logged once per streak).
  void MarkUnanswered(size_t g, util::Clock::TimePoint now, model::Snapshot* snap);
  // Group g's slow values: merged when fresh, left out (and logged once) when a slow read has
  // been running past the deadline.
  void MergeSlow(size_t g, bool answered, const GroupResult& result, util::Clock::TimePoint now,
                 model::Snapshot* snap);
  // Lost GPUs keep only their health series, and their peers' P2P entries toward them go.
  void SettleLost(const plan::FieldPlan& plan, model::Snapshot* snap) const;
  // The latest profiling ready time (FastReads::ReadyAt, or OnceReadyAt with `once`) of the
  // groups whose set-up is done; time_point::min() when none has a profiling source.
  ProfilingSource::Clock::time_point ProfilingReadyAt(bool once) const;

  const nvml::Library& lib_;
  const CollectorOptions options_;
  util::Clock* const clock_;                       // options_.clock, or the real clock
  const std::chrono::milliseconds read_deadline_;  // options_.read_deadline or its default

  Entities entities_;  // laid out by Create, then fixed (collect/gpu_entity.h)
  // Null unless the start-up plan needs it (fields::NeedsXidWatcher) or faults are watched. Runs
  // from Create to destruction, so that --once sees the Xids already delivered too.
  std::unique_ptr<XidWatcher> xids_;
  std::atomic<bool> xid_stuck_{false};  // Stop found the Xid watcher inside NVML

  util::Latest<plan::FieldPlan> plan_;  // the plan of the next round (SetPlan)
  RoundBoard rounds_;
  SlowCache slow_;
  OnceLog logged_;
  std::atomic<bool> profiling_paused_{false};  // SetProfilingPaused; read by PM samplers
  // What the groups' workers use of the above (collect/gpu_group.h).
  const GroupContext ctx_;
  std::vector<std::unique_ptr<GpuGroup>> groups_;  // fixed after Create; joined before ctx_ goes

  PublishFn publish_;  // set by Start before the fast loop runs; read by that loop only
  // Set by Start before the loop runs; then the loop's own: when Start's GPM round is due.
  std::optional<std::chrono::steady_clock::time_point> gpm_catchup_at_;
  // Last: stopped (by their destructors, after ~Collector's Stop) before the members above go.
  util::PeriodicWorker fast_loop_;
};

}  // namespace nvmlx::collect

#endif  // NVML_EXPORTER_COLLECT_COLLECTOR_H_
