#include "events.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>

namespace nvmlx::simgpu {
namespace {

// Event types a registration accepts (the 0xff9f an H200 reports as supported); only Xid
// events are ever generated.
constexpr unsigned long long kSupportedEventTypes = 0xff9fULL;

}  // namespace

EventSet::EventSet(std::shared_ptr<const World> world)
    : world_(std::move(world)),
      registered_(world_->device_count(), 0),
      delivered_(world_->scenario().xids.size(), false) {}

nvmlReturn_t EventSet::Register(const Device& device, unsigned long long types) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return NVML_ERROR_UNINITIALIZED;
  if ((types & kSupportedEventTypes) == 0) return NVML_ERROR_NOT_SUPPORTED;
  registered_.at(device.index) |= types & kSupportedEventTypes;
  return NVML_SUCCESS;
}

nvmlReturn_t EventSet::Wait(nvmlEventData_t* data, unsigned timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  const auto& xids = world_->scenario().xids;  // sorted by at_s
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (closed_) return NVML_ERROR_UNINITIALIZED;
    const double now = world_->Now();
    std::optional<double> next_due;
    for (size_t i = 0; i < xids.size(); ++i) {
      const XidEvent& x = xids[i];
      if (delivered_[i] || (registered_[x.gpu] & nvmlEventTypeXidCriticalError) == 0) continue;
      if (x.at_s <= now) {
        // A scheduled Xid is delivered once it is due, even if it fell due before the set was
        // registered: a frozen clock could otherwise never deliver one.
        delivered_[i] = true;
        *data = nvmlEventData_t{};
        data->device = world_->handle(x.gpu);
        data->eventType = nvmlEventTypeXidCriticalError;
        data->eventData = x.xid;
        data->gpuInstanceId = 0xFFFFFFFFu;  // not attributable to a MIG instance
        data->computeInstanceId = 0xFFFFFFFFu;
        return NVML_SUCCESS;
      }
      if (!next_due) next_due = x.at_s;
    }
    auto wake = deadline;
    if (next_due && !world_->frozen()) wake = std::min(wake, world_->SteadyAt(*next_due));
    if (std::chrono::steady_clock::now() >= deadline) return NVML_ERROR_TIMEOUT;
    cv_.wait_until(lock, wake);
  }
}

void EventSet::Wake() {
  { std::lock_guard<std::mutex> lock(mu_); }  // a waiter between its check and its wait sees it
  cv_.notify_all();
}

void EventSet::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  cv_.notify_all();
}

}  // namespace nvmlx::simgpu
