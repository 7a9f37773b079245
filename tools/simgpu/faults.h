// Fault injection: which NVML call answers which error, blocks, or finds its GPU lost, at
// simulation time t (SCENARIO.md "Faults").
//
// A FaultSet is built once from a Scenario and never changes afterwards, so its const methods
// may be called from any number of threads at once without locking.
#ifndef NVML_EXPORTER_TOOLS_SIMGPU_FAULTS_H_
#define NVML_EXPORTER_TOOLS_SIMGPU_FAULTS_H_

#include <condition_variable>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include "scenario.h"

namespace nvmlx::simgpu {

// What the active faults make of one call (or of one FieldValues element).
struct FaultAction {
  std::optional<int> error;  // nvmlReturn_t to answer instead of the real value
  double block_ms = 0;       // sleep this long before answering (longest active rule wins)
  bool hang = false;         // block until released (HangGate), then answer
};

// The gate every `hang: true` call waits at: closed from init until released, for good, by
// nvmlxSimReleaseHangs() or by the file named in NVMLX_SIMGPU_RELEASE_FILE appearing (a test
// that runs the exporter as a real process releases it that way). Once released, hang rules no
// longer block, so "the stuck call returned" can be tested; the next init (0 -> 1) closes it.
//
// Thread-safety: every function may be called from any thread.
class HangGate {
 public:
  static HangGate& Get();  // process-wide, never destroyed
  // Blocks until released (returns at once when it is).
  void Wait();
  void Release();
  void Reset();  // closed again (nvmlInit_v2 from 0)
  bool released();
  int waiting();  // calls blocked at the gate now

 private:
  HangGate() = default;
  std::mutex mu_;
  std::condition_variable cv_;
  bool released_ = false;
  int waiting_ = 0;  // guarded by mu_
};

class FaultSet {
 public:
  FaultSet() = default;
  explicit FaultSet(std::vector<Fault> faults);

  // The faults for `call` on `gpu` (nullopt = a call that names no GPU) at time t. Only
  // whole-call rules count here, not "nvmlDeviceGetFieldValues:<fi>" ones. The first matching
  // rule with an error decides the error, in scenario order.
  FaultAction ForCall(std::string_view call, std::optional<unsigned> gpu, double t) const;
  // The per-element faults for field `field_id` of nvmlDeviceGetFieldValues.
  FaultAction ForField(unsigned gpu, unsigned field_id, double t) const;
  // True when a lost_after_s rule for `gpu` has fired by time t.
  bool IsLost(unsigned gpu, double t) const;

 private:
  std::vector<Fault> faults_;
};

}  // namespace nvmlx::simgpu

#endif  // NVML_EXPORTER_TOOLS_SIMGPU_FAULTS_H_
