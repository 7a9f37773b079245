#include "util/mutex.h"

#include <gtest/gtest.h>

#include <chrono>
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

}  // namespace
}  // namespace nvmlx::util
