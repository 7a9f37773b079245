// GpuGroup: one physical GPU and its collected MIG instances, read by their own pair of
// DeviceWorkers, and the reading code that runs on those workers.
//
// The Collector (collect/collector.h) only orchestrates rounds: it posts a group's fast read to
// the group's fast worker, whose job (FastReads) reads every entity of the group and then hands
// the expensive fields to the group's slow worker (SlowReads). One GPU's NVML calls therefore
// never run on two threads at once, and a call stuck in the driver holds that GPU's workers only.
// What the reading code needs from the Collector comes through a GroupContext of references.
#ifndef NVML_EXPORTER_COLLECT_GPU_GROUP_H_
#define NVML_EXPORTER_COLLECT_GPU_GROUP_H_

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "collect/collector_options.h"
#include "collect/collector_parts.h"
#include "collect/device_worker.h"
#include "collect/gpu_entity.h"
#include "collect/xid_watcher.h"
#include "fields/reader.h"
#include "model/snapshot.h"
#include "nvml/nvml.h"
#include "plan/field_plan.h"
#include "util/clock.h"
#include "util/status.h"

namespace nvmlx::collect {

// The Collector's parts that the groups' workers use. Every member outlives the workers (the
// Collector owns them and joins its workers first).
// Thread-safety: any thread; each referenced part has its own rule: the options are read-only,
// Entities is fixed after Create (collect/gpu_entity.h), SlowCache and OnceLog lock, `xids` is
// set before any group is primed and thread-safe, the paused flag is atomic.
struct GroupContext {
  const nvml::Library& lib;
  const CollectorOptions& options;
  util::Clock* clock;  // options.clock, or the real clock
  Entities& entities;
  const std::unique_ptr<XidWatcher>& xids;  // null unless the start-up plan (or faults) need it
  SlowCache& slow;
  OnceLog& logged;
  const std::atomic<bool>& profiling_paused;

  // Logs each field failure once per (entity, field); marks the entity lost on GPU_IS_LOST.
  void NoteErrors(size_t entity, const std::vector<fields::FieldError>& errors) const;
};

// `more` appended to `into`, then ordered by field id (stable: equal ids keep their order).
void MergeSorted(std::vector<model::Sample>* into, const std::vector<model::Sample>& more);

// The fast reads of one group: its entities' FastState, built from the plan and read.
// Thread-safety: owned by the GPU's fast worker: every method but ReadyAt/OnceReadyAt runs in one
// of its jobs (one at a time). ReadyAt and OnceReadyAt: any thread (atomics the jobs publish).
class FastReads {
 public:
  FastReads(const GroupContext& ctx, std::vector<size_t> devices)
      : ctx_(ctx), devices_(std::move(devices)) {}

  // Builds (or, after a reload, rebuilds) every entity's readers for `plan` with their priming
  // reads (rate fields' first raw sample, GPM's first sample, PM sampling's session).
  void Prime(const plan::FieldPlan& plan);
  // One collection's fast reads under `plan`: everything but the slow cache.
  void Read(const plan::FieldPlan& plan, GroupResult* out);

  // The latest of the profiling sources' ReadyAt (OnceReadyAt) after the last job, as
  // ProfilingSource::Clock time; time_point::min() when the group has no profiling source.
  ProfilingSource::Clock::time_point ReadyAt() const;
  ProfilingSource::Clock::time_point OnceReadyAt() const;

 private:
  // Rebuilds entity i's readers for `plan` if they are older.
  void ApplyPlan(size_t i, const plan::FieldPlan& plan);
  // The profiling source of entity i: GPM, PM sampling or none, per options.profiling.
  std::unique_ptr<ProfilingSource> MakeProfilingSource(
      size_t i, const std::vector<const fields::FieldDef*>& f) const;
  void ReadDevice(size_t i, const plan::FieldPlan& plan, model::DeviceSnapshot* ds,
                  bool* all_failed);
  // Entity i's profiling source into *ds; adds its good, failed and unsupported reads.
  void ReadProfiling(size_t i, model::DeviceSnapshot* ds, size_t* good, size_t* bad,
                     size_t* unsupported);
  // Samples the reasons bitmask of entity i into its window and fills the snapshot's counts.
  void ReadClockEvents(size_t i, model::DeviceSnapshot* out);
  // The Xid watcher's part of entity i: the last Xid, the window's counts, health.
  void ReadXidsAndHealth(size_t i, const plan::FieldPlan& plan, model::DeviceSnapshot* ds);
  // DCGM_EXP_GPU_HEALTH_STATUS of GPU i (collect/health.h): its readings plus the Xids of the
  // window, evaluated into out->health.
  void ReadHealth(size_t i, const std::vector<model::XidCount>& xids, model::DeviceSnapshot* out);
  // DCGM_EXP_P2P_STATUS of GPU i: NVML's NVLink P2P status to every other collected GPU.
  void ReadP2p(size_t i, model::DeviceSnapshot* out);
  // A whole GPM call failed: logged once per entity; GPU_IS_LOST marks it lost.
  void NoteProfilingFailure(size_t i, const Status& status) const;
  // A per-process read failed: logged once per entity; GPU_IS_LOST marks it lost.
  void NoteProcessFailure(size_t i, const Status& status) const;
  // Stores the profiling sources' ready times for ReadyAt and OnceReadyAt.
  void PublishReadyTimes();

  const GroupContext& ctx_;
  const std::vector<size_t> devices_;  // positions in ctx_.entities, the GPU first
  std::atomic<ProfilingSource::Clock::rep> ready_at_{
      ProfilingSource::Clock::time_point::min().time_since_epoch().count()};
  std::atomic<ProfilingSource::Clock::rep> once_ready_at_{
      ProfilingSource::Clock::time_point::min().time_since_epoch().count()};
};

// The slow reads of one group: its entities' SlowState, read into the slow cache.
// Thread-safety: owned by the GPU's slow worker: every method runs in one of its jobs (Prime:
// in Create, before that worker's first job).
class SlowReads {
 public:
  SlowReads(const GroupContext& ctx, std::vector<size_t> devices)
      : ctx_(ctx), devices_(std::move(devices)) {}

  // Builds every entity's slow readers for `plan` (they make no NVML call until they read).
  void Prime(const plan::FieldPlan& plan);
  // One collection's slow reads under `plan`, and the periodic sets that are due, into the
  // slow cache.
  void Read(const plan::FieldPlan& plan);

 private:
  void ApplyPlan(size_t i, const plan::FieldPlan& plan);
  // Reads entity i's periodic sets that are due into the slow cache.
  void ReadPeriodic(size_t i);

  const GroupContext& ctx_;
  const std::vector<size_t> devices_;
};

// What the fast loop remembers of a group between rounds, to log each streak once.
// Thread-safety: owned by the fast loop's thread (Collector::Assemble); Create's before that.
struct GroupStreaks {
  bool fast_stale = false;       // inside a stale streak (logged once at its start and end)
  bool stale_in_set_up = false;  // that streak began before its set-up finished
  bool fast_late = false;        // the last answer came after its round's deadline
  bool slow_stale = false;       // a slow read has run past the read deadline
};

// One physical GPU and its MIG instances: what one pair of workers reads.
// Thread-safety: devices(), gpu(), never_read() and the workers' own methods from any thread;
// fast_reads() only inside jobs of fast_worker(), slow_reads() inside jobs of slow_worker();
// streaks the fast loop's; set_up and slow_handoff are atomic.
class GpuGroup {
 public:
  // `devices`: positions in ctx.entities, the GPU first. `never_read`: its set-up at start did
  // not finish in time (a GPU known by its index only, never read; its end asks for a restart:
  // CollectorOptions::on_late_gpu).
  GpuGroup(const GroupContext& ctx, std::vector<size_t> devices, std::unique_ptr<DeviceWorker> fast,
           std::unique_ptr<DeviceWorker> slow, bool never_read);

  const std::vector<size_t>& devices() const { return devices_; }
  // The GPU's NVML index as text, for log lines and StuckCalls.
  const std::string& gpu() const { return gpu_; }
  bool never_read() const { return never_read_; }
  DeviceWorker& fast_worker() const { return *fast_; }
  DeviceWorker& slow_worker() const { return *slow_; }
  FastReads& fast_reads() { return fast_reads_; }
  const FastReads& fast_reads() const { return fast_reads_; }
  SlowReads& slow_reads() { return slow_reads_; }

  GroupStreaks streaks;
  // Its readers are built and primed (set by its fast worker at the end of the priming job):
  // until then it is published stale as setting up, and its profiling source is not read.
  std::atomic<bool> set_up{false};
  // Set at the end of a fast job, cleared once the slow read that follows it is posted (or
  // skipped): between the two neither worker is busy, yet a read is on its way.
  // Collector::ReadsInProgress counts it, so that a test waiting for "reads done" sees no dip.
  std::atomic<bool> slow_handoff{false};

 private:
  const std::vector<size_t> devices_;
  const std::string gpu_;
  const bool never_read_;
  FastReads fast_reads_;
  SlowReads slow_reads_;
  // Last: joined (by their destructors) before the readers above go.
  std::unique_ptr<DeviceWorker> fast_;
  std::unique_ptr<DeviceWorker> slow_;
};

}  // namespace nvmlx::collect

#endif  // NVML_EXPORTER_COLLECT_GPU_GROUP_H_
