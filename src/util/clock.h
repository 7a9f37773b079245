// util::Clock: the steady time that timers and periodic loops run on, injectable so that tests
// drive time instead of sleeping on the wall clock.
//
//  - RealClock (Clock::Real()): std::chrono::steady_clock and condition-variable timeouts.
//  - FakeClock: time that moves only when a test calls Advance(); Advance() wakes every waiter
//    whose deadline it reached. AwaitWaiters() lets a test wait until a worker thread is parked
//    on the clock, so that "advance, then look" is deterministic.
//
// A clock waits on the caller's own Mutex/CondVar (WaitUntil), so that whatever else signals that
// condition variable (a stop request, a "refresh now") still wakes the waiter at once.
//
// Only durations and deadlines are measured on a Clock. Wall time (Snapshot::time) and the time a
// piece of work really took (collect_seconds) stay on the system and steady clocks.
//
// Thread-safety: every method of every clock may be called from any thread.
#ifndef NVML_EXPORTER_UTIL_CLOCK_H_
#define NVML_EXPORTER_UTIL_CLOCK_H_

#include <chrono>
#include <cstddef>
#include <vector>

#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace nvmlx::util {

class Clock {
 public:
  using Duration = std::chrono::steady_clock::duration;
  using TimePoint = std::chrono::steady_clock::time_point;

  virtual ~Clock() = default;

  // The process-wide real clock (never destroyed).
  static Clock* Real();

  virtual TimePoint Now() const = 0;
  // Waits on `cv`, with `mu` held on entry and on return (released while waiting), until this
  // clock reaches `deadline` (TimePoint::max(): never) or `cv` is signalled. May return
  // spuriously: callers re-check their condition. True when Now() >= deadline on return.
  virtual bool WaitUntil(CondVar* cv, Mutex* mu, TimePoint deadline) NVMLX_REQUIRES(mu) = 0;
  // Blocks the calling thread until this clock reaches `deadline`, with nothing to wake it early.
  void SleepUntil(TimePoint deadline);
};

// `now` + `d`, saturating at TimePoint::max() (a period of Duration::max() means "never").
Clock::TimePoint AddSaturating(Clock::TimePoint now, Clock::Duration d);

class RealClock final : public Clock {
 public:
  TimePoint Now() const override { return std::chrono::steady_clock::now(); }
  bool WaitUntil(CondVar* cv, Mutex* mu, TimePoint deadline) override NVMLX_REQUIRES(mu);
};

// A clock for tests. Starts at `start` (an arbitrary point well after the steady epoch, so that
// "now - window" stays meaningful) and moves only by Advance().
class FakeClock final : public Clock {
 public:
  explicit FakeClock(TimePoint start = TimePoint(std::chrono::hours(1000)));
  ~FakeClock() override;
  FakeClock(const FakeClock&) = delete;
  FakeClock& operator=(const FakeClock&) = delete;

  TimePoint Now() const override NVMLX_EXCLUDES(mu_);
  bool WaitUntil(CondVar* cv, Mutex* mu, TimePoint deadline) override NVMLX_REQUIRES(mu)
      NVMLX_EXCLUDES(mu_);

  // Moves time forward by `d` and wakes every waiter whose deadline is now reached. When it
  // returns, those waiters have been signalled (they may not have run yet).
  void Advance(Duration d) NVMLX_EXCLUDES(mu_);
  // Waits in real time, at most `timeout`, until at least `n` threads wait on this clock (with
  // any deadline). False on timeout: a test fails instead of hanging.
  bool AwaitWaiters(size_t n, std::chrono::milliseconds timeout = std::chrono::seconds(30))
      NVMLX_EXCLUDES(mu_);
  // How many threads wait on this clock right now.
  size_t waiters() const NVMLX_EXCLUDES(mu_);

 private:
  struct Waiter {
    CondVar* cv;
    Mutex* mu;
    TimePoint deadline;
    bool in_flight = false;  // Advance took it off the list and is about to signal it
  };

  // Lock order: a waiter's own mutex before mu_. Advance never holds mu_ while it takes a
  // waiter's mutex, so the two never deadlock.
  mutable Mutex mu_;
  CondVar changed_;  // waiters_ changed, or an in-flight signal finished
  TimePoint now_ NVMLX_GUARDED_BY(mu_);
  std::vector<Waiter*> waiters_ NVMLX_GUARDED_BY(mu_);
};

}  // namespace nvmlx::util

#endif  // NVML_EXPORTER_UTIL_CLOCK_H_
