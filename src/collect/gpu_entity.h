// GpuEntity: one collected entity (a GPU, or a MIG instance of a MIG-enabled GPU) and its state,
// split by the thread that owns each part, and Entities, the Collector's table of them.
//
// A GPU and its MIG instances are read by one pair of DeviceWorkers (collect/gpu_group.h): the
// fast worker reads the cheap fields every collection, the slow worker the expensive ones. Each
// part of an entity has one owner, so that no part needs a lock:
//   - EntityFixed: what Create found (handle, scope, index, parent, Xid slot); fixed before any
//     worker reads the entity, read by every thread;
//   - FastState: the fast worker's readers and windows;
//   - SlowState: the slow worker's readers and their read times;
//   - `lost`: atomic, set by whichever thread first sees the GPU gone, read by all.
#ifndef NVML_EXPORTER_COLLECT_GPU_ENTITY_H_
#define NVML_EXPORTER_COLLECT_GPU_ENTITY_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collect/clock_events.h"
#include "collect/health.h"
#include "collect/nvlink_health.h"
#include "collect/process_reader.h"
#include "collect/profiling_source.h"
#include "fields/reader.h"
#include "model/snapshot.h"
#include "nvml/nvml.h"
#include "plan/field_plan.h"
#include "util/clock.h"
#include "util/status.h"

namespace nvmlx::collect {

// Thread-safety: written by Create (the controlling thread) before any worker reads the entity,
// then immutable: any thread may read it.
struct EntityFixed {
  nvml::Device handle = nullptr;  // null: lost at start, or still in its set-up (never read)
  // Which fields of a plan it reads: a GPU as a whole, a MIG-enabled GPU's GPU-wide part, or a
  // MIG instance.
  plan::Scope scope = plan::Scope::kWhole;
  unsigned index = 0;                 // NVML index of the GPU, for GPM's messages
  nvml::Device gpm_device = nullptr;  // GPM samples come from the GPU
  std::optional<unsigned> gpm_gi;     // and, on a MIG instance, its GPU instance
  bool mig_gpu = false;               // a MIG-enabled GPU or one of its instances
  std::string pci_bus_id;             // for PM sampling's CUDA index
  // A MIG instance: the position of its GPU in the Entities (lost together with it).
  std::optional<size_t> parent;
  // A GPU watched by the XidWatcher: its position there.
  std::optional<size_t> xid_slot;
};

// The readers of the fast collection, rebuilt when a reload changes their fields.
// Thread-safety: owned by the GPU's fast worker (its jobs run one at a time). Create builds
// `processes` before the worker's first job.
struct FastState {
  std::unique_ptr<fields::DeviceReader> reader;
  // GPM or PM sampling (collect/profiling_source.h); null: no profiling fields enabled, or no
  // source for this GPU.
  std::unique_ptr<ProfilingSource> profiling;
  std::unique_ptr<ProcessReader> processes;  // null unless options.process_metrics
  // Null unless DCGM_EXP_CLOCK_EVENTS_COUNT is enabled and this is no MIG instance.
  std::unique_ptr<ClockEventWindow> clock_events;
  // Null unless DCGM_EXP_CLOCK_EVENTS_TOTAL is enabled and this is no MIG instance.
  std::unique_ptr<ClockEventTotals> clock_event_totals;
  // Null unless DCGM_EXP_GPU_HEALTH_STATUS is enabled and this is a GPU.
  std::unique_ptr<PcieReplayWindow> pcie_replays;
  // The NVLINK health watch's readings (link states, error totals), one reader per GPU (it is
  // not thread-safe and the GPUs are read on their own workers); as pcie_replays.
  std::unique_ptr<NvlinkHealthReader> nvlink_health;
  uint64_t version = 0;  // the plan the readers were built from (0: none yet)
  // The fields those readers read: a reload that keeps them keeps the readers (and their
  // baselines and windows).
  std::vector<const fields::FieldDef*> fields, profiling_fields;
};

// The readers of the slow collection and of the watch groups' longer cadences.
// Thread-safety: owned by the GPU's slow worker (its jobs run one at a time). Create builds the
// readers before the worker's first job.
struct SlowState {
  std::unique_ptr<fields::DeviceReader> reader;
  uint64_t version = 0;  // the plan the readers were built from (0: none yet)
  std::vector<const fields::FieldDef*> fields;
  // One reader per set of fields read at a watch group's cadence (plan::EntityFields::periodic),
  // the sets, and when each set was last read (on the Collector's clock).
  std::vector<std::unique_ptr<fields::DeviceReader>> periodic;
  std::vector<plan::PeriodicFields> periodic_fields;
  std::vector<std::optional<util::Clock::TimePoint>> periodic_read_at;
};

// One entity: its parts, each with the owner its type names.
// Thread-safety: per member, as above; `lost` is atomic (any thread).
struct GpuEntity {
  EntityFixed fixed;
  FastState fast;
  SlowState slow;
  // Fell off the bus (GPU_IS_LOST, Xid 79): never read again. A MIG instance is lost with its
  // GPU (Entities::Lost).
  std::atomic<bool> lost{false};
};

// Every collected entity, GPUs with their MIG instances after them, and their identities (the
// labels of their series), in the same order.
// Thread-safety: laid out by Create on the controlling thread (Add), then fixed: any thread may
// call the const methods, MarkLost included (the lost flags are atomic); an entity's FastState
// and SlowState belong to its GPU's workers (fast() and slow() are for those only).
class Entities {
 public:
  // Appends an entity (`lost`: lost at start, never read); its position. Create only.
  size_t Add(EntityFixed fixed, model::DeviceIdentity identity, bool lost = false);
  // Create only, before the workers read the entity (it sets the Xid slots).
  EntityFixed& mutable_fixed(size_t i) { return entities_[i]->fixed; }

  size_t size() const { return entities_.size(); }
  const EntityFixed& fixed(size_t i) const { return entities_[i]->fixed; }
  // For the entity's GPU's fast (slow) worker only (and Create before their first job).
  FastState& fast(size_t i) { return entities_[i]->fast; }
  SlowState& slow(size_t i) { return entities_[i]->slow; }

  const model::DeviceIdentity& identity(size_t i) const { return (*identities_)[i]; }
  // Shared by every snapshot (DeviceSnapshot::identity points into it).
  std::shared_ptr<const std::vector<model::DeviceIdentity>> identities() const {
    return identities_;
  }

  // The entity, or its GPU, is lost.
  bool Lost(size_t i) const;
  // Marks the entity lost (logged once, with `why`); its series stop from this collection on.
  // A MIG instance marks its GPU: the instance cannot be lost on its own.
  void MarkLost(size_t i, const Status& why) const;

 private:
  std::vector<std::unique_ptr<GpuEntity>> entities_;  // unique_ptr: GpuEntity has an atomic
  std::shared_ptr<std::vector<model::DeviceIdentity>> identities_ =
      std::make_shared<std::vector<model::DeviceIdentity>>();
};

}  // namespace nvmlx::collect

#endif  // NVML_EXPORTER_COLLECT_GPU_ENTITY_H_
