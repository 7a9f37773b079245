// An NVML event set: the devices and event types registered on it, and which scheduled Xid
// events (scenario `xids:`) it has already delivered.
//
// Thread-safe: Register, Wait and Close may be called from different threads; Wait blocks on a
// condition variable that Close wakes, so freeing a set (or the last nvmlShutdown) never leaves
// a waiter stuck.
#ifndef NVML_EXPORTER_TOOLS_SIMGPU_EVENTS_H_
#define NVML_EXPORTER_TOOLS_SIMGPU_EVENTS_H_

#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

#include "nvml/nvml_api.h"
#include "world.h"

namespace nvmlx::simgpu {

class EventSet {
 public:
  explicit EventSet(std::shared_ptr<const World> world);

  // NOT_SUPPORTED when none of `types` can be delivered (the set stays usable, as in NVML).
  nvmlReturn_t Register(const Device& device, unsigned long long types);
  // Delivers the earliest due, not yet delivered Xid of a registered device, waiting up to
  // timeout_ms for one to fall due; NVML_ERROR_TIMEOUT when none does.
  nvmlReturn_t Wait(nvmlEventData_t* data, unsigned timeout_ms);
  // Wakes waiters; later calls answer UNINITIALIZED.
  void Close();
  // Wakes waiters to look at the clock again (the frozen clock moved).
  void Wake();

 private:
  const std::shared_ptr<const World> world_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<unsigned long long> registered_;  // per GPU index; guarded by mu_
  std::vector<bool> delivered_;                 // per scenario xid; guarded by mu_
  bool closed_ = false;                         // guarded by mu_
};

}  // namespace nvmlx::simgpu

#endif  // NVML_EXPORTER_TOOLS_SIMGPU_EVENTS_H_
