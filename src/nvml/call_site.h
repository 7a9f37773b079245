// nvml::CallSite: which NVML function a thread is inside right now, for a watchdog on another
// thread ("GPU 0's read has been stuck in nvmlDeviceGetTemperature for 12 s").
//
// A thread opts in with TrackCallsOnThisThread(site); from then on every Library call it makes
// stores the function's name in `site` for the duration of the call (CallScope, in nvml.cc and
// nvml_process.cc), and null between calls. Threads that did not opt in pay one thread-local
// load per call.
//
// Thread-safety: CallSite::current() from any thread, concurrently with the tracked thread's
// calls (one atomic pointer). The names are string literals (static storage), so a pointer read
// stays valid whatever the tracked thread does afterwards.
#ifndef NVML_EXPORTER_NVML_CALL_SITE_H_
#define NVML_EXPORTER_NVML_CALL_SITE_H_

#include <atomic>

namespace nvmlx::nvml {

class CallSite {
 public:
  // The NVML function the tracked thread is in, or null between calls.
  const char* current() const { return function_.load(std::memory_order_acquire); }

 private:
  friend class CallScope;
  std::atomic<const char*> function_{nullptr};
};

// Makes the calling thread record its NVML calls in `site` (null: stop). `site` must outlive
// the thread's calls.
void TrackCallsOnThisThread(CallSite* site);

// Records `function` (a string literal) in the calling thread's CallSite, if any, for its scope.
class CallScope {
 public:
  explicit CallScope(const char* function);
  ~CallScope();
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

 private:
  CallSite* site_;
};

}  // namespace nvmlx::nvml

#endif  // NVML_EXPORTER_NVML_CALL_SITE_H_
