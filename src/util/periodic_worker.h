// util::PeriodicWorker: one background thread that runs a function every period until Stop(),
// and at once when RunSoon() asks. It replaces the thread + mutex + condition variable + stop
// flag that every refresher and loop used to write by hand.
//
// Schedules:
//  - kAfterRun: the next run starts one period after the previous one ended (refreshers: a slow
//    source is never asked twice at once, nor back to back). The first run is one period after
//    Start().
//  - kFixedRate: runs at Start() + k * period, so the rate does not drift with the time each run
//    takes; a run that overran skips the ticks it missed (logged at debug level).
// RunSoon() makes the next run start now, whatever the schedule, and is remembered if the thread
// is busy or not started yet; several calls before that run make one run. After a RunSoon run, a
// kAfterRun worker waits a full period again; a kFixedRate one keeps its ticks. A period of
// Duration::max() never fires on its own: the worker runs on RunSoon only.
//
// Time comes from a util::Clock (the real one unless a test injects a FakeClock). The first
// deadline is taken in Start(), on the caller's thread, so a test that advances a FakeClock right
// after Start() cannot race the new thread.
//
// Thread-safety: RunSoon() from any thread, the run function included. Start/Stop from one
// controlling thread (never from the run function). `run` runs on the worker's thread only, one
// run at a time; Stop() waits for a run in progress to finish.
#ifndef NVML_EXPORTER_UTIL_PERIODIC_WORKER_H_
#define NVML_EXPORTER_UTIL_PERIODIC_WORKER_H_

#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "util/clock.h"
#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace nvmlx::util {

class PeriodicWorker {
 public:
  enum class Schedule { kAfterRun, kFixedRate };

  struct Options {
    std::string name;  // for log lines, e.g. "kubelet refresher"
    Clock::Duration period = std::chrono::seconds(1);
    Schedule schedule = Schedule::kAfterRun;
    Clock* clock = nullptr;  // null: Clock::Real(); must outlive the worker
  };

  PeriodicWorker(Options options, std::function<void()> run);
  ~PeriodicWorker();  // Stop()s
  PeriodicWorker(const PeriodicWorker&) = delete;
  PeriodicWorker& operator=(const PeriodicWorker&) = delete;

  // Starts the thread (no-op when running). The first run is one period from now, or at once
  // when RunSoon() was called before.
  void Start() NVMLX_EXCLUDES(mu_);
  // Wakes the thread, waits for a run in progress, joins. No-op when not running; Start() may
  // be called again afterwards.
  void Stop() NVMLX_EXCLUDES(mu_);
  // The next run starts now (see above).
  void RunSoon() NVMLX_EXCLUDES(mu_);

  bool running() const { return thread_.joinable(); }
  Clock* clock() const { return clock_; }

 private:
  void Loop(Clock::TimePoint first) NVMLX_EXCLUDES(mu_);

  const std::string name_;
  const Clock::Duration period_;
  const Schedule schedule_;
  Clock* const clock_;
  const std::function<void()> run_;

  Mutex mu_;
  CondVar cv_;
  bool stopping_ NVMLX_GUARDED_BY(mu_) = false;
  bool soon_ NVMLX_GUARDED_BY(mu_) = false;
  std::thread thread_;  // the controlling thread's
};

}  // namespace nvmlx::util

#endif  // NVML_EXPORTER_UTIL_PERIODIC_WORKER_H_
