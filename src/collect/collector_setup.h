// CollectorSetUp: Collector::Create's steps. Every selected GPU is opened and identified on its
// own fast worker, all at once; then the entities (GPUs, and the chosen MIG instances after their
// GPU) and their groups are laid out; then each group's readers are built and primed on its fast
// worker, all at once. A call hung in one GPU's set-up thereby holds that GPU only: Create waits
// for the set-up up to the set-up deadline and returns with that GPU stale and the others
// collected (hardening round two, row 5; docs/faults.md).
#ifndef NVML_EXPORTER_COLLECT_COLLECTOR_SETUP_H_
#define NVML_EXPORTER_COLLECT_COLLECTOR_SETUP_H_

#include <atomic>
#include <chrono>
#include <memory>
#include <utility>
#include <vector>

#include "collect/collector_parts.h"
#include "collect/device_worker.h"
#include "collect/gpu_group.h"
#include "collect/mig.h"
#include "collect/xid_watcher.h"
#include "config/device_selector.h"
#include "model/snapshot.h"
#include "nvml/nvml.h"
#include "util/status.h"

namespace nvmlx::collect {

// Thread-safety: used by Collector::Create on the controlling thread only, and gone when Create
// returns. The jobs it posts run on each GPU's fast worker and may outlive it: they hold only
// their GpuProbe (shared; its `state` says who owns its results), the GroupContext and the
// RoundBoard (the Collector's, which joins its workers before they go), never the CollectorSetUp.
class CollectorSetUp {
 public:
  // How long Create waits for the GPUs' set-up (the read deadline, if longer).
  static constexpr std::chrono::seconds kSetUpDeadline{5};

  // `rounds` runs the set-up rounds (jobs counted, no answers).
  CollectorSetUp(const GroupContext& ctx, std::chrono::milliseconds read_deadline,
                 RoundBoard* rounds)
      : ctx_(ctx), read_deadline_(read_deadline), rounds_(*rounds) {}

  // Steps 1 and 2: probes the `count` GPUs and lays out their entities (into ctx.entities) and
  // groups. Fails when the selector names a GPU or MIG instance that does not exist (as
  // dcgm-exporter's verifyDevicePresence does).
  Result<std::vector<std::unique_ptr<GpuGroup>>> LayOut(unsigned count);
  // The Xid watcher, started, when the start-up plan (or the fault watch) needs it; else null.
  std::unique_ptr<XidWatcher> StartXidWatcher();
  // Step 3: each group's readers for the start-up plan, built on its workers with their priming
  // reads, all at once, waiting for them up to the set-up deadline.
  void PrimeGroups(const std::vector<std::unique_ptr<GpuGroup>>& groups);

 private:
  // One GPU's probe: opened, identified and its MIG layout read on its own fast worker. Shared
  // by that job and Create: `state` says who owns the other members, the job until it ends
  // (kDone), or nobody once Create stopped waiting (kAbandoned: the job's end is late).
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
  using Groups = std::vector<std::unique_ptr<GpuGroup>>;

  // Fails when the selector names a GPU that does not exist.
  Status CheckGpuSelector(unsigned count) const;
  // Probes every GPU the selector may collect, each on its own new workers, and waits for them
  // (AwaitSetUp; `wait_for_all`: without the set-up deadline).
  std::vector<ProbedGpu> ProbeGpus(unsigned count, bool wait_for_all);
  // On the GPU's fast worker: opens it, reads its identity and (`read_mig`) its MIG layout.
  static void Probe(const GroupContext& ctx, GpuProbe* probe, bool read_mig);
  // A probe that ended after Create stopped waiting: logged, and on_late_gpu called.
  static void NoteLateProbe(const GroupContext& ctx, const GpuProbe& probe);
  // Waits for the jobs of set-up round `round` up to the set-up deadline (`wait_for_all`: for
  // ever), naming each GPU of `workers` still busy, and its call, at the read deadline and when
  // it gives up. `step`: what those jobs do, for the log.
  void AwaitSetUp(uint64_t round, const char* step,
                  const std::vector<std::pair<unsigned, const DeviceWorker*>>& workers,
                  bool wait_for_all);
  // Adds a probed GPU's entities (the GPU, and the chosen MIG instances after it) and its group
  // to *groups, unless the selector leaves it out or it cannot be opened. `instance_count`
  // numbers the host's MIG instances.
  void AddGpu(ProbedGpu p, unsigned* instance_count, Groups* groups);
  // A GPU with no handle and no readers, known by its index only: still in its set-up
  // (never read) or lost before it could be opened (lost).
  void AddPlaceholder(ProbedGpu p, bool lost, Groups* groups);
  // Adds one entity (GPU or MIG instance), without its readers (PrimeGroups builds them).
  void AddEntity(nvml::Device handle, model::DeviceIdentity identity, plan::Scope scope,
                 nvml::Device gpm_device, std::optional<unsigned> gpm_gpu_instance,
                 std::optional<size_t> parent);
  // The group of `devices` (positions in the entities, the GPU first), read by p's workers.
  void AddGroup(ProbedGpu p, std::vector<size_t> devices, bool never_read, Groups* groups);

  const GroupContext& ctx_;
  const std::chrono::milliseconds read_deadline_;
  RoundBoard& rounds_;
};

}  // namespace nvmlx::collect

#endif  // NVML_EXPORTER_COLLECT_COLLECTOR_SETUP_H_
