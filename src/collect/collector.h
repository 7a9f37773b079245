// Collector: the background loop that reads every enabled field of every selected GPU each
// interval into an immutable Snapshot and hands it to a publish callback (which renders it once
// and swaps it in for the HTTP server).
//
// Threads:
//  - the fast loop ticks every interval: it posts one read job per GPU to that GPU's fast
//    DeviceWorker (the cheap fields, µs per call), waits for the answers until the read deadline,
//    and publishes a snapshot of the GPUs that answered;
//  - each GPU's expensive fields (energy ~4 ms, PCIe throughput ~21 ms, violation counters, PCIe
//    replay on an H200; docs/nvml.md §9) are read on that GPU's slow DeviceWorker, posted by its
//    fast worker as soon as the fast read is done: the slow values land in a cache that the next
//    collection merges in. A slow call therefore never delays the gauges (its values are at most
//    one interval old), and one GPU's NVML calls never run on two threads at once (on an H200 a
//    call waiting behind the energy read costs CPU while it waits: docs/benchmarks.md);
//  - the fields a watch group reads at a cadence longer than the interval (plan::PeriodicFields)
//    are read on the same slow worker, each set when its cadence has passed (within half an
//    interval: a 30 s cadence at 1 s collections reads every 30th collection, not every 31st),
//    and held in the slow cache in between, so each collection still serves them;
//  - one fast and one slow DeviceWorker per physical GPU (it reads the GPU and its MIG
//    instances), so that a call stuck in the driver on one GPU holds that GPU's worker only.
// A stuck call (docs/faults.md): a GPU whose fast read has not answered by the read deadline
// (CollectorOptions::read_deadline) is published as stale (DeviceSnapshot::stale: no series,
// up = false) and logged once per streak with the NVML function it is stuck in; the next rounds
// skip it while its read is still running (at most one outstanding read per GPU and loop: no
// thread or work piles up). A slow read running for longer than the read deadline makes the
// GPU's slow values stale (DeviceSnapshot::slow_stale: left out, not served as fresh). The fast
// loop is thereby the watchdog of every read. When the call returns, the next round is fresh.
// DCGM_FI_PROF_* fields come from NVML GPM (GpmReader, one per GPU, on the fast worker): each
// value is the average over the window since the previous collection. GPUs without GPM get one
// "metric not enabled" warning per such field at start-up and no such series.
// Xid fields come from an XidWatcher (its own thread, NVML events). DCGM_EXP_CLOCK_EVENTS_COUNT
// comes from one reasons-bitmask read per GPU per fast collection, counted over its window
// (ClockEventWindow); DCGM_EXP_CLOCK_EVENTS_TOTAL from the same read, as rising edges
// (ClockEventTotals).
// Set-up (Create, collector_setup.cc): each GPU is opened, identified and its readers built and
// primed on its own fast DeviceWorker, all GPUs at once, and Create waits for them up to
// kSetUpDeadline: a GPU whose set-up hangs in the driver is published stale (setting_up) and the
// others are collected (hardening round two, row 5; docs/faults.md).
// Device handles, UUIDs, names and PCI ids are read once, in Create(), and so is the MIG layout:
// on a MIG-enabled GPU the selector's entities are the GPU (GPU-wide fields) and its MIG
// instances (per-instance fields), as collect/mig.h describes. MIG configuration is only read,
// never changed; a reconfiguration needs a restart (as with dcgm-exporter).
//
// A field that fails is left out of the snapshot (as dcgm-exporter drops DCGM's blank values)
// and logged once per (GPU, field); a GPU whose every read fails is published with up = false.
// A GPU answering GPU_IS_LOST, or reporting Xid 79 (fallen off the bus) through the XidWatcher,
// is marked down, logged once, and no longer polled; the other GPUs go on. With
// DCGM_EXP_GPU_HEALTH_STATUS enabled it keeps its health series (ALL fails: fallen off the bus),
// as DCGM reports such a GPU. The NVLINK health watch reads the link states and error totals
// through an NvlinkHealthReader (collect/nvlink_health.h), one per GPU, on its fast worker.
//
// The fast loop is a util::PeriodicWorker on a fixed schedule (kFixedRate: the collection rate
// does not drift with the time the reads take; an overrun skips the ticks it missed) and on an
// injectable util::Clock (CollectorOptions::clock), so tests drive the ticks with a FakeClock.
// The schedule, the read deadline and the Xid and clock-event windows run on that clock; the GPM
// window of CollectOnce and collect_seconds are real time (NVML's GPM samples are).
//
// Stop is bounded (Stop(deadline)): a worker stuck in the driver is left behind and reported
// (StuckCalls); the caller then must not destroy the Collector before the call returns (the
// destructor waits for it) — the daemon leaves the process instead (app/app.cc).
//
// The field plan (plan/field_plan.h) says what to read. Each round reads under the plan current
// when it starts and stamps it on its Snapshot; SetPlan (a reload) replaces it for the next
// round, and each GPU's workers rebuild their readers when they next read.
//
// Thread-safety: Create/CollectOnce/Start/Stop from one controlling thread; StuckCalls, SetPlan
// and SetProfilingPaused from any. The publish callback runs on the fast loop's thread. Each
// Device's readers are used by its GPU's workers only, one job at a time. What the threads share
// lives in parts with their own locks (collect/collector_parts.h: the round board, the slow
// cache, the logged-once set) and the plan in a util::Latest; the lost flags are atomic.
#ifndef NVML_EXPORTER_COLLECT_COLLECTOR_H_
#define NVML_EXPORTER_COLLECT_COLLECTOR_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collect/clock_events.h"
#include "collect/collector_parts.h"
#include "collect/device_worker.h"
#include "collect/gpm_reader.h"
#include "collect/health.h"
#include "collect/mig.h"
#include "collect/nvlink_health.h"
#include "collect/pm_sampling_reader.h"
#include "collect/process_reader.h"
#include "collect/profiling_source.h"
#include "collect/xid_watcher.h"
#include "config/device_selector.h"
#include "fields/reader.h"
#include "model/snapshot.h"
#include "nvml/nvml.h"
#include "plan/field_plan.h"
#include "util/clock.h"
#include "util/latest.h"
#include "util/periodic_worker.h"

namespace nvmlx::collect {

struct CollectorOptions {
  std::chrono::milliseconds interval{30000};
  // What to read (plan/field_plan.h): required. Its label fields are read once, at Create.
  std::shared_ptr<const plan::FieldPlan> plan;
  config::DeviceSelector devices;
  bool replace_blanks_in_model_name = false;
  // -x: the window of DCGM_EXP_XID_ERRORS_COUNT.
  std::chrono::milliseconds xid_window{300000};
  // --clock-events-count-window-size: the window of DCGM_EXP_CLOCK_EVENTS_COUNT.
  std::chrono::milliseconds clock_events_window{300000};
  // Returns the latest attribution (attribute/), attached to each snapshot. Must be cheap and
  // non-blocking (it copies a few shared_ptrs); called on the fast loop. Empty: none.
  std::function<model::Attribution()> attribution;
  // Fill DeviceSnapshot::processes (NVML compute processes and per-process utilization) on the
  // fast loop, for process attribution. A failure degrades only the processes (logged once per
  // GPU).
  bool process_metrics = false;
  // Ticks the fast loop and times the read deadline and the Xid and clock-event windows (null: the
  // real clock). Must outlive the Collector.
  util::Clock* clock = nullptr;
  // How long the fast loop waits for a GPU's reads before publishing without it (stale); also
  // how long a slow read may run before the GPU's slow values count as stale. 0: the default,
  // half the interval, at most 5 s.
  std::chrono::milliseconds read_deadline{0};
  // --profiling-source: which source serves DCGM_FI_PROF_* per GPU (collect/profiling_source.h).
  ProfilingChoice profiling = ProfilingChoice::kAuto;
  // CUPTI for PM sampling, loaded on first need (a GPU without GPM, or a forced PM source), so
  // that GPUs GPM serves cost nothing; returns null when it cannot be loaded (it warns once).
  // Empty: no PM sampling. What it returns must outlive the Collector. Called from the GPUs' fast
  // workers, at start and on a reload, possibly at once: it must be thread-safe (and memoise).
  std::function<const cupti::Library*()> cupti;
  // PM sampling's interval and backoff (collect_interval and paused are set by the Collector).
  PmSamplingOptions pm_sampling;
  // The node's fault watch (--kubernetes-node-conditions): the Xid watcher runs whatever the
  // plan, and each GPU's snapshot carries its Xid totals (DeviceSnapshot::fault_xids).
  bool watch_faults = false;
  // Called (on that GPU's worker) when a GPU whose set-up outlasted the set-up deadline finishes
  // it: such a GPU can only be collected by a new start (the daemon re-executes). Empty: it stays
  // unread, and its set-up's end is only logged.
  std::function<void()> on_late_gpu;
};

class Collector {
 public:
  using PublishFn = std::function<void(std::shared_ptr<const model::Snapshot>)>;

  // Enumerates the selected GPUs and reads their identity. `lib` must outlive the Collector
  // (its per-device readers keep a reference). Fails when a GPU named by the
  // selector does not exist (as dcgm-exporter's verifyDevicePresence does).
  static constexpr std::chrono::milliseconds kOnceGpmWindow{150};
  // CollectOnce waits this long (or the read deadline, if longer) for every GPU's reads, slow
  // ones included: --once prints one complete page, and SIGTERM still ends it (app/app.cc).
  static constexpr std::chrono::seconds kOnceReadDeadline{10};

  // Each GPU is set up (opened, identified, its readers built and primed) on its own worker, all
  // at once; Create waits for them up to kSetUpDeadline (the read deadline, if longer) and then
  // returns with a GPU still in its set-up published stale (DeviceSnapshot::setting_up), so that
  // one call hung in the driver does not keep the other GPUs (and the port) waiting. A device
  // selector that lists MIG instances by number waits for every GPU (the numbering needs them).
  static constexpr std::chrono::seconds kSetUpDeadline{5};
  static Result<std::unique_ptr<Collector>> Create(const nvml::Library& lib,
                                                   CollectorOptions options);
  ~Collector();
  Collector(const Collector&) = delete;
  Collector& operator=(const Collector&) = delete;

  // One full collection, slow fields included (for --once), waiting up to kOnceReadDeadline. Must
  // not be called while the loops run. With GPM fields it first waits until kOnceGpmWindow has
  // passed since the priming sample, so that --once prints them.
  std::shared_ptr<const model::Snapshot> CollectOnce();

  // Starts the loop; `publish` receives every snapshot (first one immediately, after at most
  // one read deadline, before Start returns; with GPM fields a second one, on the loop's
  // thread, as soon as GPM can answer, ~100 ms later, when that is under half an interval away).
  void Start(PublishFn publish);
  // Stops the loop and every thread, waiting for a read in progress until `deadline` (steady
  // clock). True when every thread has ended; false when some are stuck inside NVML
  // (StuckCalls() says where): the Collector must then not be destroyed before they return.
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
  const std::vector<model::DeviceIdentity>& identities() const { return *identities_; }
  std::chrono::milliseconds interval() const { return options_.interval; }
  // Pauses (true) or resumes PM sampling on every GPU (SIGUSR1 / SIGUSR2): the next collection
  // releases or retakes the counters. GPM is unaffected (it does not block other profilers).
  // Thread-safe.
  void SetProfilingPaused(bool paused) { profiling_paused_.store(paused); }
  bool ProfilingPaused() const { return profiling_paused_.load(); }

 private:
  struct Device {
    nvml::Device handle = nullptr;
    std::unique_ptr<fields::DeviceReader> fast;
    std::unique_ptr<fields::DeviceReader> slow;
    // GPM or PM sampling (collect/profiling_source.h); null: no profiling fields enabled, or no
    // source for this GPU.
    std::unique_ptr<ProfilingSource> gpm;
    std::unique_ptr<ProcessReader> processes;  // null unless options.process_metrics
    // Null unless DCGM_EXP_CLOCK_EVENTS_COUNT is enabled. Fast loop only.
    std::unique_ptr<ClockEventWindow> clock_events;
    // Null unless DCGM_EXP_CLOCK_EVENTS_TOTAL is enabled and this is a GPU. Fast loop only.
    std::unique_ptr<ClockEventTotals> clock_event_totals;
    // Null unless DCGM_EXP_GPU_HEALTH_STATUS is enabled and this is a GPU. Fast worker only.
    std::unique_ptr<PcieReplayWindow> pcie_replays;
    // The NVLINK health watch's readings (link states, error totals), one reader per GPU (it is
    // not thread-safe and the GPUs are read on their own workers); as pcie_replays.
    std::unique_ptr<NvlinkHealthReader> nvlink_health;
    std::atomic<bool> lost{false};
    // Which fields of a plan it reads: a GPU as a whole, a MIG-enabled GPU's GPU-wide part, or
    // a MIG instance.
    plan::Scope scope = plan::Scope::kWhole;
    unsigned index = 0;                 // NVML index of the GPU, for GPM's messages
    nvml::Device gpm_device = nullptr;  // GPM samples come from the GPU
    bool mig_gpu = false;               // a MIG-enabled GPU or one of its instances
    std::string pci_bus_id;             // for PM sampling's CUDA index
    std::optional<unsigned> gpm_gi;     // and, on a MIG instance, its GPU instance
    uint64_t fast_version = 0;          // the plan the fast readers were built from
    uint64_t slow_version = 0;          // the plan the slow reader was built from
    // The fields those readers read (fast worker's; slow_fields the slow worker's).
    std::vector<const fields::FieldDef*> fast_fields, profiling_fields, slow_fields;
    // The slow worker's: one reader per set of fields read at a watch group's cadence
    // (plan::EntityFields::periodic), the sets, and when each set was last read.
    std::vector<std::unique_ptr<fields::DeviceReader>> periodic;
    std::vector<plan::PeriodicFields> periodic_fields;
    std::vector<std::optional<util::Clock::TimePoint>> periodic_read_at;
    // A MIG instance: the position of its GPU in devices_ (lost together with it).
    std::optional<size_t> parent;
    // A GPU watched by the XidWatcher: its position there.
    std::optional<size_t> xid_slot;
  };
  // One physical GPU and its MIG instances: what one pair of workers reads.
  struct Group {
    std::vector<size_t> devices;  // positions in devices_, the GPU first
    std::unique_ptr<DeviceWorker> fast;
    std::unique_ptr<DeviceWorker> slow;
    // Set at the end of a fast job, cleared once the slow read that follows it is posted (or
    // skipped): between the two neither worker is busy, yet a read is on its way.
    // ReadsInProgress() counts it, so that a test waiting for "reads done" does not see a dip.
    std::unique_ptr<std::atomic<bool>> slow_handoff = std::make_unique<std::atomic<bool>>(false);
    // The fast loop's own: inside a stale streak (logged once at its start and end).
    bool fast_stale = false;
    bool stale_in_set_up = false;  // that streak began before its set-up finished
    bool fast_late = false;        // the last answer came after its round's deadline
    bool slow_stale = false;
    // Its set-up at start has not finished: a GPU known by its index only, never read (its
    // probe outlasted the set-up deadline; its end asks for a restart: on_late_gpu). Fixed.
    bool never_read = false;
    // Its readers are built and primed (set by its fast worker at the end of PrimeGroups' job):
    // until then it is published stale as setting up, and its profiling source is not read.
    std::unique_ptr<std::atomic<bool>> set_up = std::make_unique<std::atomic<bool>>(false);
  };
  // One GPU's probe at start: opened, identified and its MIG layout read on its own fast worker.
  // Shared by that job and Create: `state` says who owns the other members, the job until it
  // ends (kDone), or nobody once Create stopped waiting (kAbandoned: the job's end is late).
  struct GpuProbe {
    enum : int { kRunning, kDone, kAbandoned };
    unsigned index = 0;
    std::atomic<int> state{kRunning};
    Status open;  // DeviceByIndex's failure; OK when opened
    nvml::Device handle = nullptr;
    model::DeviceIdentity identity;
    bool mig_on = false;
    std::vector<MigInstance> instances;
  };
  // A probed GPU with the workers that will read it.
  struct ProbedGpu {
    std::shared_ptr<GpuProbe> probe;
    std::unique_ptr<DeviceWorker> fast;
    std::unique_ptr<DeviceWorker> slow;
    bool claimed = false;  // the probe ended in time: its results are Create's
  };
  // On device i's fast (slow) worker: rebuilds its readers for `plan` if they are older.
  void ApplyFastPlan(size_t i, const plan::FieldPlan& plan);
  void ApplySlowPlan(size_t i, const plan::FieldPlan& plan);

  Collector(const nvml::Library& lib, CollectorOptions options);

  // --- Create's steps (collector.cc). ---
  // Fails when the selector names a GPU that does not exist.
  Status CheckGpuSelector(unsigned count) const;
  // Probes every GPU the selector may collect, each on its own new workers, and waits for them
  // (AwaitSetUp; `wait_for_all`: without the set-up deadline).
  std::vector<ProbedGpu> ProbeGpus(unsigned count, bool wait_for_all);
  // On the GPU's fast worker: opens it, reads its identity and (`read_mig`) its MIG layout.
  void Probe(GpuProbe* probe, bool read_mig);
  // A probe that ended after Create stopped waiting: logged, and on_late_gpu called.
  void NoteLateProbe(const GpuProbe& probe);
  // Waits for the jobs of set-up round `round` up to the set-up deadline (`wait_for_all`: for
  // ever), naming each GPU of `workers` still busy, and its call, at the read deadline and when
  // it gives up. `step`: what those jobs do, for the log.
  void AwaitSetUp(uint64_t round, const char* step,
                  const std::vector<std::pair<unsigned, const DeviceWorker*>>& workers,
                  bool wait_for_all);
  // Adds a probed GPU's entities (the GPU, and the chosen MIG instances after it) and its group,
  // unless the selector leaves it out or it cannot be opened. `instance_count` numbers the host's
  // MIG instances.
  void AddGpu(ProbedGpu p, unsigned* instance_count,
              std::vector<model::DeviceIdentity>* identities);
  // Adds one entity (GPU or MIG instance), without its readers (PrimeGroups builds them).
  void AddEntity(nvml::Device handle, model::DeviceIdentity identity, plan::Scope scope,
                 nvml::Device gpm_device, std::optional<unsigned> gpm_gpu_instance,
                 std::optional<size_t> parent, std::vector<model::DeviceIdentity>* identities);
  // The group of `devices` (positions in devices_, the GPU first), read by p's workers.
  void AddGroup(ProbedGpu p, std::vector<size_t> devices, bool never_read);
  // The Xid watcher, when the start-up plan needs it (end of Create).
  void StartXidWatcher();
  // Each group's readers for the start-up plan, built on its workers with their priming reads
  // (rate fields' first raw sample, GPM's first sample, PM sampling's session), all at once,
  // waiting for them up to the set-up deadline.
  void PrimeGroups();

  // --- One round (collector.cc). ---
  // Posts the reads, waits for them at most `wait`, builds the snapshot. Null when the collector
  // is stopping.
  std::shared_ptr<const model::Snapshot> Collect(bool read_slow_inline, util::Clock::Duration wait);
  // Posts every group's fast read of `round` under `plan` (a group still busy gets none).
  void PostReads(uint64_t round, const std::shared_ptr<const plan::FieldPlan>& plan,
                 bool read_slow_inline);
  // The publish step: the snapshot of `round` from the groups' answers, the slow cache, the
  // stale and lost marks, the attribution.
  std::shared_ptr<model::Snapshot> Assemble(uint64_t round, std::vector<GroupResult> results,
                                            const plan::FieldPlan& plan);
  // Group g did not answer `round` in time: its entities stale (logged once per streak).
  void MarkUnanswered(size_t g, util::Clock::TimePoint now, model::Snapshot* snap);
  // Group g's slow values: merged when fresh, left out (and logged once) when a slow read has
  // been running past the deadline.
  void MergeSlow(size_t g, bool answered, const GroupResult& result, util::Clock::TimePoint now,
                 model::Snapshot* snap);
  // The entities whose readers are built (their group is set up): the only ones whose readers
  // the controlling thread may look at while a set-up may still run on a worker.
  std::vector<size_t> SetUpDevices() const;
  // Lost GPUs keep only their health series, and their peers' P2P entries toward them go.
  void SettleLost(const plan::FieldPlan& plan, model::Snapshot* snap) const;
  // On group g's fast worker, once its fast read of `round` is done: posts the group's slow read
  // unless the previous one still runs. `counted`: this round waits for it (--once, Start).
  void PostSlowAfterFast(size_t g, uint64_t round, bool counted);

  // --- Reading, on a group's workers (collector_read.cc, collector_plan.cc). ---
  void ReadSlowGroup(size_t g);
  // On device i's slow worker: reads the periodic sets that are due into the slow cache.
  void ReadPeriodic(size_t i);
  // Group g's fast reads under `plan`: everything but the slow cache.
  void ReadGroup(size_t g, const plan::FieldPlan& plan, GroupResult* out);
  void ReadDevice(size_t i, const plan::FieldPlan& plan, model::DeviceSnapshot* ds,
                  bool* all_failed);
  // The Xid watcher's part of device i: the last Xid, the window's counts, health.
  void ReadXidsAndHealth(size_t i, const plan::FieldPlan& plan, model::DeviceSnapshot* ds);
  // `more` appended to `into`, then ordered by field id (stable: equal ids keep their order).
  static void MergeSorted(std::vector<model::Sample>* into, const std::vector<model::Sample>& more);
  // "gpu=N" for log lines and StuckCalls.
  std::string GpuOf(size_t g) const;
  // Logs a field failure once per (device, field); marks the device lost on GPU_IS_LOST.
  void NoteErrors(size_t device, const std::vector<fields::FieldError>& errors);
  // Marks the device lost (logged once, with `why`); its series stop from this collection on.
  // A MIG instance marks its GPU: the instance cannot be lost on its own.
  void MarkLost(size_t device, const Status& why);
  bool Lost(size_t device) const;
  // The profiling source of one entity: GPM, PM sampling or none, per options_.profiling.
  std::unique_ptr<ProfilingSource> MakeProfilingSource(
      const Device& d, const std::vector<const fields::FieldDef*>& f);
  // A whole GPM call failed: logged once per device; GPU_IS_LOST marks the device lost.
  void NoteGpmFailure(size_t device, const Status& status);
  // A per-process read failed: logged once per device; GPU_IS_LOST marks the device lost.
  void NoteProcessFailure(size_t device, const Status& status);

  // Samples the reasons bitmask of device i into its window and fills the snapshot's counts.
  void ReadClockEvents(size_t device, model::DeviceSnapshot* out);
  // DCGM_EXP_GPU_HEALTH_STATUS of GPU i (collect/health.h): its readings plus the Xids of the
  // window, evaluated into out->health.
  void ReadHealth(size_t device, const std::vector<model::XidCount>& xids,
                  model::DeviceSnapshot* out);
  // DCGM_EXP_GPU_HEALTH_STATUS of lost GPU i (LostGpuHealth: ALL fails, fallen off the bus), as
  // DCGM reports a GPU that fell off the bus; MIG instances and a plan without health get none.
  void ReadLostHealth(size_t device, const plan::FieldPlan& plan, model::DeviceSnapshot* out) const;
  // DCGM_EXP_P2P_STATUS of GPU i: NVML's NVLink P2P status to every other collected GPU.
  void ReadP2p(size_t device, model::DeviceSnapshot* out);

  const nvml::Library& lib_;
  CollectorOptions options_;
  util::Clock* const clock_;  // options_.clock, or the real clock
  std::shared_ptr<const std::vector<model::DeviceIdentity>> identities_;
  std::vector<std::unique_ptr<Device>> devices_;
  // Null unless the start-up plan needs it (fields::NeedsXidWatcher). Runs from Create to
  // destruction, so that --once sees the Xids already delivered too.
  std::unique_ptr<XidWatcher> xids_;
  std::atomic<bool> xid_stuck_{false};  // Stop found the Xid watcher inside NVML

  std::chrono::milliseconds read_deadline_;  // options_.read_deadline or its default
  std::vector<Group> groups_;                // fixed after Create

  util::Latest<plan::FieldPlan> plan_;  // the plan of the next round (SetPlan)
  RoundBoard rounds_;
  SlowCache slow_;
  OnceLog logged_;

  std::atomic<bool> profiling_paused_{false};  // SetProfilingPaused; read by PM samplers

  PublishFn publish_;  // set by Start before the fast loop runs; read by that loop only
  // Set by Start before the loop runs; then the loop's own: when Start's GPM round is due.
  std::optional<std::chrono::steady_clock::time_point> gpm_catchup_at_;
  // Last: stopped (by their destructors, after ~Collector's Stop) before the members above go.
  util::PeriodicWorker fast_loop_;
};

}  // namespace nvmlx::collect

#endif  // NVML_EXPORTER_COLLECT_COLLECTOR_H_
