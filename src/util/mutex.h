// util::Mutex, util::MutexLock and util::CondVar: std::mutex and std::condition_variable with
// clang thread-safety annotations (util/thread_annotations.h), so that clang++ -Wthread-safety
// checks every NVMLX_GUARDED_BY member and NVMLX_REQUIRES function. Modelled on leveldb's
// port::Mutex / port::CondVar; unlike leveldb's, CondVar takes the mutex on each wait (as
// absl::CondVar does), which lets the analysis check that the caller holds it.
//
// Use:
//   mutable util::Mutex mu_;
//   util::CondVar cv_;
//   bool ready_ NVMLX_GUARDED_BY(mu_) = false;
//   ...
//   util::MutexLock lock(&mu_);
//   while (!ready_) cv_.Wait(&mu_);
// Waits are written as explicit loops rather than with predicate lambdas: the analysis checks a
// lambda's body on its own and would not know that the lock is held there.
//
// Self-deadlock check: a Mutex knows which thread holds it, and a thread that locks a Mutex it
// already holds dies at once with a stack trace on stderr (util/mutex.cc) instead of hanging for
// good. The usual way in is implicit: the last reference to an object released under a lock, whose
// destructor takes the same lock (hardening round three, docs/faults.md §4). It is on in every
// build: a crash report and a restart beat a process that no signal short of SIGKILL stops, and it
// costs one relaxed store per lock and unlock.
//
// Thread-safety: Mutex and CondVar are, as their std counterparts, safe to use from any thread;
// MutexLock is a scope guard of one thread.
#ifndef NVML_EXPORTER_UTIL_MUTEX_H_
#define NVML_EXPORTER_UTIL_MUTEX_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "util/thread_annotations.h"

namespace nvmlx::util {

class CondVar;
class Mutex;

// Writes which mutex the calling thread tried to lock again, and the thread's stack, to stderr,
// then aborts. Out of line: the failure path needs no inlining.
[[noreturn]] void DieOnRecursiveLock(const Mutex* mu);

// A non-recursive mutex that refuses to be locked twice by one thread (see above).
class NVMLX_CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() NVMLX_ACQUIRE() {
    // Relaxed is enough: only this thread ever stores its own id, so reading it back means this
    // thread holds the mutex; any other value (none, another thread's) means it does not.
    if (owner_.load(std::memory_order_relaxed) == std::this_thread::get_id()) {
      DieOnRecursiveLock(this);
    }
    mu_.lock();
    owner_.store(std::this_thread::get_id(), std::memory_order_relaxed);
  }
  void Unlock() NVMLX_RELEASE() {
    owner_.store(std::thread::id(), std::memory_order_relaxed);
    mu_.unlock();
  }
  // True when the calling thread holds the mutex (tests, and checks that a callback is not run
  // under a lock it may take).
  bool HeldByMe() const {
    return owner_.load(std::memory_order_relaxed) == std::this_thread::get_id();
  }
  // Tells the analysis that the calling thread holds the mutex (for code it cannot follow, e.g.
  // a callback that is documented to run under the lock). Checks nothing at run time: std::mutex
  // does not know its owner.
  void AssertHeld() const NVMLX_ASSERT_CAPABILITY(this) {}

 private:
  friend class CondVar;
  std::mutex mu_;
  std::atomic<std::thread::id> owner_{};
};

// Holds a Mutex for its scope.
class NVMLX_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) NVMLX_ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() NVMLX_RELEASE() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

// A condition variable for util::Mutex. Every wait may return spuriously: callers re-check their
// condition in a loop.
class CondVar {
 public:
  using SteadyTime = std::chrono::steady_clock::time_point;

  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  // Releases `mu` while waiting and holds it again on return.
  void Wait(Mutex* mu) NVMLX_REQUIRES(mu) {
    mu->owner_.store(std::thread::id(), std::memory_order_relaxed);  // released while waiting
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();  // `mu` stays held: the caller's MutexLock unlocks it
    mu->owner_.store(std::this_thread::get_id(), std::memory_order_relaxed);
  }
  // As Wait, until the steady clock reaches `deadline` at the latest (SteadyTime::max(): no
  // deadline). True when the deadline has passed.
  bool WaitUntil(Mutex* mu, SteadyTime deadline) NVMLX_REQUIRES(mu) {
    if (deadline == SteadyTime::max()) {
      Wait(mu);
      return false;
    }
    mu->owner_.store(std::thread::id(), std::memory_order_relaxed);
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    const bool timed_out = cv_.wait_until(lock, deadline) == std::cv_status::timeout;
    lock.release();
    mu->owner_.store(std::this_thread::get_id(), std::memory_order_relaxed);
    return timed_out || std::chrono::steady_clock::now() >= deadline;
  }
  // As WaitUntil, `timeout` from now.
  template <typename Rep, typename Period>
  bool WaitFor(Mutex* mu, std::chrono::duration<Rep, Period> timeout) NVMLX_REQUIRES(mu) {
    return WaitUntil(mu, std::chrono::steady_clock::now() +
                             std::chrono::duration_cast<SteadyTime::duration>(timeout));
  }

  // Wakes one waiter / every waiter. Need not be called with the mutex held.
  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace nvmlx::util

#endif  // NVML_EXPORTER_UTIL_MUTEX_H_
