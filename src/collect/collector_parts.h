// The Collector's shared parts, each with its own lock and thread rule, so that the collector
// itself holds no mutex:
//   - RoundBoard: where one collection round meets the GPUs' workers: the round's number, the
//     jobs it still waits for, each GPU group's answer, and the stop flag;
//   - SlowCache: each entity's latest slow samples (energy, PCIe, violations), written by its
//     GPU's slow worker, merged into every snapshot by the fast loop;
//   - OnceLog: which (entity, field) failures have been logged, so each is said once.
// (The plan in use is a util::Latest<plan::FieldPlan>: replaced whole by a reload.)
//
// Thread-safety: every method may be called from any thread; each class guards its state with
// its own mutex, held only for the copy or the bookkeeping (never across an NVML call).
#ifndef NVML_EXPORTER_COLLECT_COLLECTOR_PARTS_H_
#define NVML_EXPORTER_COLLECT_COLLECTOR_PARTS_H_

#include <cstdint>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "model/snapshot.h"
#include "util/clock.h"
#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace nvmlx::collect {

// What one fast job produced for its GPU group (a GPU and its MIG instances), tagged with the
// round that posted it.
struct GroupResult {
  uint64_t round = 0;
  std::vector<model::DeviceSnapshot> devices;  // in the group's device order
  std::vector<bool> all_failed;                // per device: reads were made and all failed
  // Handed out by Await for a later round than its own: the reads finished after their round's
  // deadline (slow, not stuck), and their values are published one collection late.
  bool late = false;
};

class RoundBoard {
 public:
  // Sets the number of GPU groups: once, when Create has laid them out, before the first
  // collection round (Create's set-up rounds before it count jobs only: AwaitJobs).
  void Resize(size_t groups) NVMLX_EXCLUDES(mu_);
  // Opens a new round that waits for `jobs` jobs; its number, or nullopt once stopping.
  std::optional<uint64_t> Begin(int jobs) NVMLX_EXCLUDES(mu_);
  // `jobs` of the current round will not come (a GPU whose previous read still runs).
  void Skip(int jobs) NVMLX_EXCLUDES(mu_);
  // Group g's answer to `round` (on its worker, when its fast read is done).
  void Deliver(size_t g, uint64_t round, GroupResult result) NVMLX_EXCLUDES(mu_);
  // One job of `round` finished; a late job of an earlier round is ignored.
  void FinishJob(uint64_t round) NVMLX_EXCLUDES(mu_);
  // Waits until every job of `round` has finished, `deadline` (on `clock`) has passed, or Stop;
  // then hands over the answers of `round`; a group that did not answer in time gets its answer
  // to an earlier round if that came after its own round was handed over (`late`), else none
  // (round != `round`). Each answer is handed over once. nullopt when stopping.
  std::optional<std::vector<GroupResult>> Await(uint64_t round, util::Clock* clock,
                                                util::Clock::TimePoint deadline)
      NVMLX_EXCLUDES(mu_);
  // Waits until every job of `round` has finished (true), `deadline` (on `clock`) has passed or
  // Stop (false); hands over nothing (Create's set-up rounds have no answers).
  bool AwaitJobs(uint64_t round, util::Clock* clock, util::Clock::TimePoint deadline)
      NVMLX_EXCLUDES(mu_);
  // No new round from now on; a waiting Await returns nullopt.
  void Stop() NVMLX_EXCLUDES(mu_);
  bool stopping() const NVMLX_EXCLUDES(mu_);

 private:
  // Await's and AwaitJobs' wait: until `round`'s jobs are done (or a newer round began), the
  // deadline, or Stop.
  void WaitForJobs(uint64_t round, util::Clock* clock, util::Clock::TimePoint deadline)
      NVMLX_REQUIRES(mu_);

  mutable util::Mutex mu_;
  util::CondVar cv_;  // a job of this round reported, or Stop
  uint64_t round_ NVMLX_GUARDED_BY(mu_) = 0;
  std::vector<GroupResult> results_ NVMLX_GUARDED_BY(mu_);  // per group
  std::vector<bool> handed_ NVMLX_GUARDED_BY(mu_);          // per group: results_ handed over
  // Jobs of round_ not finished yet (fast reads, and with read_slow_inline the slow ones).
  int outstanding_ NVMLX_GUARDED_BY(mu_) = 0;
  bool stopping_ NVMLX_GUARDED_BY(mu_) = false;
};

class SlowCache {
 public:
  void Resize(size_t entities) NVMLX_EXCLUDES(mu_);
  // Slot 0 holds the slow fields read every collection; slot k > 0 the k-th set of fields read
  // at a watch group's cadence (plan::PeriodicFields), held between its reads.
  void Put(size_t entity, size_t slot, std::vector<model::Sample> samples) NVMLX_EXCLUDES(mu_);
  // Keeps only the entity's first `slots` slots (a reload with fewer periodic sets).
  void Truncate(size_t entity, size_t slots) NVMLX_EXCLUDES(mu_);
  // Appends entity's latest slow samples, every slot, to *samples (unsorted; the caller orders
  // them).
  void AppendTo(size_t entity, std::vector<model::Sample>* samples) const NVMLX_EXCLUDES(mu_);

 private:
  mutable util::Mutex mu_;
  // Per entity, per slot.
  std::vector<std::vector<std::vector<model::Sample>>> latest_ NVMLX_GUARDED_BY(mu_);
};

class OnceLog {
 public:
  // True the first time (entity, key) is seen: log it then. Keys are field ids; 0 stands for an
  // entity's profiling source as a whole, -1 for its per-process reads.
  bool First(size_t entity, int key) NVMLX_EXCLUDES(mu_);

 private:
  util::Mutex mu_;
  std::set<std::pair<size_t, int>> seen_ NVMLX_GUARDED_BY(mu_);
};

}  // namespace nvmlx::collect

#endif  // NVML_EXPORTER_COLLECT_COLLECTOR_PARTS_H_
