#include "util/clock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace nvmlx::util {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(FakeClockTest, MovesOnlyWhenAdvanced) {
  FakeClock clock;
  const Clock::TimePoint t0 = clock.Now();
  EXPECT_EQ(clock.Now(), t0);
  clock.Advance(seconds(5));
  EXPECT_EQ(clock.Now() - t0, seconds(5));
}

TEST(FakeClockTest, PastDeadlineReturnsAtOnce) {
  FakeClock clock;
  Mutex mu;
  CondVar cv;
  MutexLock lock(&mu);
  EXPECT_TRUE(clock.WaitUntil(&cv, &mu, clock.Now()));
  EXPECT_EQ(clock.waiters(), 0u);
}

TEST(FakeClockTest, AdvanceWakesAWaiterAtItsDeadlineNotBefore) {
  FakeClock clock;
  const Clock::TimePoint deadline = clock.Now() + seconds(10);
  Mutex mu;
  CondVar cv;
  std::atomic<bool> done{false};
  std::thread waiter([&] {
    MutexLock lock(&mu);
    while (!clock.WaitUntil(&cv, &mu, deadline)) {
    }
    done = true;
  });
  ASSERT_TRUE(clock.AwaitWaiters(1));
  clock.Advance(seconds(9));
  // Not due: the waiter is still parked (had it been woken, it would have left the list first).
  EXPECT_EQ(clock.waiters(), 1u);
  EXPECT_FALSE(done);
  clock.Advance(seconds(1));
  waiter.join();
  EXPECT_TRUE(done);
  EXPECT_EQ(clock.waiters(), 0u);
}

TEST(FakeClockTest, SignalWakesAWaiterBeforeItsDeadline) {
  FakeClock clock;
  Mutex mu;
  CondVar cv;
  bool stop = false;  // guarded by mu
  bool timed_out = true;
  std::thread waiter([&] {
    MutexLock lock(&mu);
    while (!stop) timed_out = clock.WaitUntil(&cv, &mu, Clock::TimePoint::max());
  });
  ASSERT_TRUE(clock.AwaitWaiters(1));
  {
    MutexLock lock(&mu);
    stop = true;
  }
  cv.SignalAll();
  waiter.join();
  EXPECT_FALSE(timed_out);
  EXPECT_EQ(clock.waiters(), 0u);
}

TEST(FakeClockTest, SleepUntilEndsWhenTimeGetsThere) {
  FakeClock clock;
  const Clock::TimePoint deadline = clock.Now() + milliseconds(1500);
  std::thread sleeper([&] { clock.SleepUntil(deadline); });
  ASSERT_TRUE(clock.AwaitWaiters(1));
  clock.Advance(seconds(2));
  sleeper.join();
  EXPECT_GE(clock.Now(), deadline);
}

TEST(FakeClockTest, AwaitWaitersGivesUp) {
  FakeClock clock;
  EXPECT_FALSE(clock.AwaitWaiters(1, milliseconds(10)));
}

TEST(RealClockTest, WaitUntilTimesOut) {
  Clock* clock = Clock::Real();
  Mutex mu;
  CondVar cv;
  MutexLock lock(&mu);
  const Clock::TimePoint deadline = clock->Now() + milliseconds(20);
  while (!clock->WaitUntil(&cv, &mu, deadline)) {
  }
  EXPECT_GE(clock->Now(), deadline);
}

TEST(AddSaturatingTest, StopsAtMax) {
  const Clock::TimePoint t(seconds(5));
  EXPECT_EQ(AddSaturating(t, seconds(1)), Clock::TimePoint(seconds(6)));
  EXPECT_EQ(AddSaturating(t, Clock::Duration::max()), Clock::TimePoint::max());
}

}  // namespace
}  // namespace nvmlx::util
