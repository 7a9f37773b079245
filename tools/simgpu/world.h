// The simulator's global state: the init reference count, the World built from the scenario at
// each 0 -> 1 init, and the registry of event sets.
//
// A World is immutable once built, and shared by shared_ptr: a call copies the pointer under the
// Simulator's mutex and then works on its own reference without any lock, so a concurrent
// nvmlShutdown never frees a World that a call still reads. Simulator methods are thread-safe.
#ifndef NVML_EXPORTER_TOOLS_SIMGPU_WORLD_H_
#define NVML_EXPORTER_TOOLS_SIMGPU_WORLD_H_

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "faults.h"
#include "nvml/nvml_api.h"
#include "scenario.h"

namespace nvmlx::simgpu {

class EventSet;

// One simulated GPU; nvmlDevice_t handles point at these. Immutable.
struct Device {
  unsigned index = 0;                  // the GPU's index (a MIG device's: its parent's)
  const GpuSpec* spec = nullptr;       // owned by the World's scenario
  const MigDeviceSpec* mig = nullptr;  // set on a MIG device handle only
};

// Everything one init session simulates. Immutable after Build(); read from any thread.
class World {
 public:
  // Reads NVMLX_SIMGPU_SCENARIO and NVMLX_SIMGPU_FROZEN_TIME_S. On error returns null and sets
  // *error to "<file>:<line>: <what was expected>".
  static std::shared_ptr<const World> Build(std::string* error);

  const Scenario& scenario() const { return scenario_; }
  const FaultSet& faults() const { return faults_; }
  size_t device_count() const { return devices_.size(); }
  nvmlDevice_t handle(unsigned index) const;
  // The device behind a handle (a GPU or a MIG device), or null when the handle is not one of
  // this World's.
  const Device* Find(nvmlDevice_t handle) const;
  // The MIG device of GPU `gpu` in `slot`, or null (an empty slot).
  const Device* MigBySlot(unsigned gpu, unsigned slot) const;
  // The first MIG device of GPU `gpu` in GPU instance `gpu_instance_id`, or null.
  const Device* MigByGpuInstance(unsigned gpu, unsigned gpu_instance_id) const;

  // Simulation time in seconds: the frozen time, or the time since this World was built.
  double Now() const;
  bool frozen() const { return frozen_; }
  // Moves a frozen clock to `t` (nvmlxSimSetFrozenTime): the one part of a World that changes
  // after Build, an atomic, so that a test steps simulated time instead of sleeping.
  void SetFrozenTime(double t) const { frozen_s_.store(t); }
  // The steady-clock instant at which simulation time reaches t (not meaningful when frozen).
  std::chrono::steady_clock::time_point SteadyAt(double t) const;
  // Microseconds since the Unix epoch at simulation time t, for nvmlFieldValue_t.timestamp.
  // With a frozen clock the epoch origin is fixed too, so golden outputs are byte-stable.
  long long EpochMicros(double t) const;
  // Seconds from the boot of the machine (CLOCK_MONOTONIC, the steady clock's epoch on Linux:
  // the same for every process) to this World's origin; 0 with a frozen clock. The energy
  // counter adds max(power_w) for each of them (EnergyMj), so that it only grows from one
  // process (or init) to the next, as the driver's does from its load on, while within one
  // World it still grows by exactly ∫power dt.
  double EnergyCarryS() const { return carry_s_; }

 private:
  World() = default;

  Scenario scenario_;
  FaultSet faults_;
  std::vector<std::unique_ptr<Device>> devices_;
  std::vector<std::unique_ptr<Device>> mig_devices_;  // by GPU, then slot
  std::chrono::steady_clock::time_point origin_;
  long long origin_epoch_us_ = 0;
  double carry_s_ = 0;
  bool frozen_ = false;
  mutable std::atomic<double> frozen_s_{0};
};

// Process-wide simulator state. All methods are thread-safe (one mutex).
class Simulator {
 public:
  static Simulator& Get();

  // nvmlInit_v2 / nvmlShutdown semantics: reference counted; the scenario and the environment
  // are read again whenever the count goes 0 -> 1.
  nvmlReturn_t Init();
  nvmlReturn_t Shutdown();
  // The current World, or null before init / after the last shutdown.
  std::shared_ptr<const World> world() const;

  nvmlReturn_t CreateEventSet(nvmlEventSet_t* out);
  // Null when `set` is not a live event set.
  std::shared_ptr<EventSet> FindEventSet(nvmlEventSet_t set) const;
  nvmlReturn_t FreeEventSet(nvmlEventSet_t set);
  // Moves the frozen clock of the current World to `t` and wakes every event set's waiters, so
  // that an Xid falling due is delivered at once. NOT_SUPPORTED when the clock is not frozen.
  nvmlReturn_t SetFrozenTime(double t);

 private:
  Simulator() = default;

  mutable std::mutex mu_;
  int refcount_ = 0;        // guarded by mu_
  long init_failures_ = 0;  // inits failed by NVMLX_SIMGPU_INIT_FAILURES; guarded by mu_
  std::shared_ptr<const World> world_;                        // guarded by mu_
  std::map<nvmlEventSet_t, std::shared_ptr<EventSet>> sets_;  // guarded by mu_
};

}  // namespace nvmlx::simgpu

#endif  // NVML_EXPORTER_TOOLS_SIMGPU_WORLD_H_
