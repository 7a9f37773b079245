#include "util/clock.h"

#include <algorithm>
#include <cassert>

namespace nvmlx::util {

Clock* Clock::Real() {
  static Clock* const real = new RealClock();  // leaked: usable until the very end of the process
  return real;
}

void Clock::SleepUntil(TimePoint deadline) {
  Mutex mu;
  CondVar cv;  // nothing signals it: only the deadline (or a spurious wake-up) ends a wait
  MutexLock lock(&mu);
  while (!WaitUntil(&cv, &mu, deadline)) {
  }
}

Clock::TimePoint AddSaturating(Clock::TimePoint now, Clock::Duration d) {
  if (d > Clock::TimePoint::max() - now) return Clock::TimePoint::max();
  return now + d;
}

bool RealClock::WaitUntil(CondVar* cv, Mutex* mu, TimePoint deadline) {
  return cv->WaitUntil(mu, deadline);
}

FakeClock::FakeClock(TimePoint start) : now_(start) {}

FakeClock::~FakeClock() {
  MutexLock lock(&mu_);
  assert(waiters_.empty() && "FakeClock destroyed while a thread waits on it");
}

Clock::TimePoint FakeClock::Now() const {
  MutexLock lock(&mu_);
  return now_;
}

bool FakeClock::WaitUntil(CondVar* cv, Mutex* mu, TimePoint deadline) {
  Waiter self{cv, mu, deadline};
  {
    MutexLock lock(&mu_);
    if (now_ >= deadline) return true;
    waiters_.push_back(&self);
    changed_.SignalAll();
  }
  // `mu` has been held since the check above, so an Advance that found `self` due cannot signal
  // before this wait has released `mu`: no wake-up is lost.
  cv->Wait(mu);
  bool due = false;
  {
    MutexLock lock(&mu_);
    auto it = std::find(waiters_.begin(), waiters_.end(), &self);
    if (it != waiters_.end()) waiters_.erase(it);  // woken by someone else (or spuriously)
    due = now_ >= deadline;
    changed_.SignalAll();
  }
  // Advance may still be about to lock `mu` to signal `self`; `self` lives on this stack, so wait
  // until it is done. `mu` is released meanwhile, or Advance could never take it.
  mu->Unlock();
  {
    MutexLock lock(&mu_);
    while (self.in_flight) changed_.Wait(&mu_);
  }
  mu->Lock();
  return due;
}

void FakeClock::Advance(Duration d) {
  std::vector<Waiter*> due;
  {
    MutexLock lock(&mu_);
    now_ += d;
    for (auto it = waiters_.begin(); it != waiters_.end();) {
      if ((*it)->deadline <= now_) {
        (*it)->in_flight = true;
        due.push_back(*it);
        it = waiters_.erase(it);
      } else {
        ++it;
      }
    }
    if (!due.empty()) changed_.SignalAll();
  }
  for (Waiter* w : due) {
    MutexLock lock(w->mu);
    w->cv->SignalAll();
  }
  if (due.empty()) return;
  MutexLock lock(&mu_);
  for (Waiter* w : due) w->in_flight = false;
  changed_.SignalAll();
}

bool FakeClock::AwaitWaiters(size_t n, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  MutexLock lock(&mu_);
  while (waiters_.size() < n) {
    if (changed_.WaitUntil(&mu_, deadline)) return waiters_.size() >= n;
  }
  return true;
}

size_t FakeClock::waiters() const {
  MutexLock lock(&mu_);
  return waiters_.size();
}

}  // namespace nvmlx::util
