#include "util/mutex.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

namespace nvmlx::util {
namespace {

using std::chrono::milliseconds;

class Counter {
 public:
  void Add() NVMLX_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    ++n_;
  }
  int Get() const NVMLX_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return n_;
  }

 private:
  mutable Mutex mu_;
  int n_ NVMLX_GUARDED_BY(mu_) = 0;
};

TEST(MutexTest, MutexLockExcludesOtherThreads) {
  Counter c;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&c] {
      for (int i = 0; i < 20000; ++i) c.Add();
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(c.Get(), 80000);
}

TEST(CondVarTest, SignalWakesTheWaiter) {
  Mutex mu;
  CondVar cv;
  bool ready = false;  // guarded by mu (a local: the analysis has no annotation for it)
  std::thread waiter([&] {
    MutexLock lock(&mu);
    while (!ready) cv.Wait(&mu);
  });
  {
    MutexLock lock(&mu);
    ready = true;
  }
  cv.Signal();
  waiter.join();  // hangs (and the ctest timeout fails the test) if the signal were lost
}

TEST(CondVarTest, WaitForTimesOutAndWaitUntilMaxWaitsForASignal) {
  Mutex mu;
  CondVar cv;
  MutexLock lock(&mu);
  const auto start = std::chrono::steady_clock::now();
  bool timed_out = false;
  while (!timed_out) timed_out = cv.WaitFor(&mu, milliseconds(20));
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(20));
  // A past deadline returns at once.
  EXPECT_TRUE(cv.WaitUntil(&mu, std::chrono::steady_clock::now() - milliseconds(1)));
}

TEST(MutexTest, HeldByMeFollowsLockUnlockAndWaits) {
  Mutex mu;
  CondVar cv;
  EXPECT_FALSE(mu.HeldByMe());
  {
    MutexLock lock(&mu);
    EXPECT_TRUE(mu.HeldByMe());
    // Another thread does not hold it.
    bool other = true;
    std::thread([&] { other = mu.HeldByMe(); }).join();
    EXPECT_FALSE(other);
    (void)cv.WaitFor(&mu, milliseconds(1));
    EXPECT_TRUE(mu.HeldByMe());  // held again after the wait
  }
  EXPECT_FALSE(mu.HeldByMe());
}

// While a thread waits on a CondVar it does not hold the mutex: another thread's lock must not
// be taken for a recursive one, nor the waiter's return.
TEST(MutexTest, AWaiterDoesNotOwnTheMutexWhileItWaits) {
  Mutex mu;
  CondVar cv;
  bool ready = false;
  std::thread waiter([&] {
    MutexLock lock(&mu);
    while (!ready) cv.Wait(&mu);
    EXPECT_TRUE(mu.HeldByMe());
  });
  for (int i = 0; i < 3; ++i) {
    MutexLock lock(&mu);
    EXPECT_TRUE(mu.HeldByMe());
  }
  {
    MutexLock lock(&mu);
    ready = true;
  }
  cv.SignalAll();
  waiter.join();
}

// The shape of the round-three server deadlock: the last reference to an object whose destructor
// takes a lock, released while that lock is held. Without the owner check this hangs for good.
struct Registry {
  Mutex mu;
  int live NVMLX_GUARDED_BY(mu) = 0;
};
struct Registered {
  explicit Registered(Registry* r) : registry(r) {
    MutexLock lock(&registry->mu);
    ++registry->live;
  }
  ~Registered() {
    MutexLock lock(&registry->mu);
    --registry->live;
  }
  Registry* registry;
};

// Exempt from the analysis, which refuses the direct case at compile time (good): the run-time
// check is for the cases it cannot see, such as a destructor's lock.
void LockTwice(Mutex* mu) NVMLX_NO_THREAD_SAFETY_ANALYSIS {
  MutexLock outer(mu);
  MutexLock inner(mu);
}

TEST(MutexDeathTest, ALockTakenTwiceByOneThreadDiesWithAStackInsteadOfHanging) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Mutex mu;
  EXPECT_DEATH(LockTwice(&mu),
      "already holds \\(self-deadlock\\)");
  Registry registry;
  EXPECT_DEATH(
      {
        auto last = std::make_unique<Registered>(&registry);
        MutexLock lock(&registry.mu);
        last.reset();  // ~Registered locks registry.mu again
      },
      "locked util::Mutex 0x[0-9a-f]+ that it already holds");
}

}  // namespace
}  // namespace nvmlx::util
