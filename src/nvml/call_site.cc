#include "nvml/call_site.h"

namespace nvmlx::nvml {
namespace {

// Trivially constructed (a pointer): no global with a constructor.
thread_local CallSite* tracked_site = nullptr;

}  // namespace

void TrackCallsOnThisThread(CallSite* site) { tracked_site = site; }

CallScope::CallScope(const char* function) : site_(tracked_site) {
  if (site_ != nullptr) site_->function_.store(function, std::memory_order_release);
}

CallScope::~CallScope() {
  if (site_ != nullptr) site_->function_.store(nullptr, std::memory_order_release);
}

}  // namespace nvmlx::nvml
