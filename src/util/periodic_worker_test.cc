#include "util/periodic_worker.h"

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

namespace nvmlx::util {
namespace {

using std::chrono::seconds;

// Records the fake time of every run; lets the test wait for a number of runs.
class Runs {
 public:
  explicit Runs(Clock* clock) : clock_(clock) {}
  void Record() NVMLX_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    at_.push_back(clock_->Now());
    cv_.SignalAll();
  }
  // Waits (real time, bounded so that a broken worker fails rather than hangs) for n runs.
  bool Await(size_t n) NVMLX_EXCLUDES(mu_) {
    const auto deadline = std::chrono::steady_clock::now() + seconds(30);
    MutexLock lock(&mu_);
    while (at_.size() < n) {
      if (cv_.WaitUntil(&mu_, deadline)) return at_.size() >= n;
    }
    return true;
  }
  std::vector<Clock::TimePoint> at() const NVMLX_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return at_;
  }

 private:
  Clock* const clock_;
  mutable Mutex mu_;
  CondVar cv_;
  std::vector<Clock::TimePoint> at_ NVMLX_GUARDED_BY(mu_);
};

PeriodicWorker::Options Every(Clock::Duration period, Clock* clock,
                              PeriodicWorker::Schedule schedule) {
  PeriodicWorker::Options o;
  o.name = "test";
  o.period = period;
  o.clock = clock;
  o.schedule = schedule;
  return o;
}

TEST(PeriodicWorkerTest, AfterRunRunsOnePeriodAfterStartAndAfterEachRun) {
  FakeClock clock;
  const Clock::TimePoint t0 = clock.Now();
  Runs runs(&clock);
  PeriodicWorker w(Every(seconds(10), &clock, PeriodicWorker::Schedule::kAfterRun),
                   [&] { runs.Record(); });
  w.Start();
  ASSERT_TRUE(clock.AwaitWaiters(1));
  clock.Advance(seconds(9));
  EXPECT_EQ(clock.waiters(), 1u) << "not due yet: still waiting";
  EXPECT_TRUE(runs.at().empty());
  clock.Advance(seconds(1));
  ASSERT_TRUE(runs.Await(1));
  ASSERT_TRUE(clock.AwaitWaiters(1));  // parked for the next period
  clock.Advance(seconds(10));
  ASSERT_TRUE(runs.Await(2));
  w.Stop();
  EXPECT_EQ(runs.at(), (std::vector<Clock::TimePoint>{t0 + seconds(10), t0 + seconds(20)}));
  EXPECT_FALSE(w.running());
}

TEST(PeriodicWorkerTest, AfterRunCountsThePeriodFromTheEndOfALongRun) {
  FakeClock clock;
  const Clock::TimePoint t0 = clock.Now();
  Runs runs(&clock);
  PeriodicWorker w(Every(seconds(10), &clock, PeriodicWorker::Schedule::kAfterRun), [&] {
    runs.Record();
    clock.Advance(seconds(4));  // the run takes 4 s
  });
  w.Start();
  ASSERT_TRUE(clock.AwaitWaiters(1));
  clock.Advance(seconds(10));  // t0+10: run, ends at t0+14
  ASSERT_TRUE(runs.Await(1));
  ASSERT_TRUE(clock.AwaitWaiters(1));
  clock.Advance(seconds(9));  // t0+23: not yet
  EXPECT_EQ(runs.at().size(), 1u);
  clock.Advance(seconds(1));  // t0+24
  ASSERT_TRUE(runs.Await(2));
  w.Stop();
  EXPECT_EQ(runs.at()[1], t0 + seconds(24));
}

TEST(PeriodicWorkerTest, FixedRateKeepsItsTicksAndSkipsTheOnesAnOverrunMissed) {
  FakeClock clock;
  const Clock::TimePoint t0 = clock.Now();
  Runs runs(&clock);
  int calls = 0;  // worker thread only
  PeriodicWorker w(Every(seconds(10), &clock, PeriodicWorker::Schedule::kFixedRate), [&] {
    runs.Record();
    if (++calls == 1) clock.Advance(seconds(25));  // the first run overruns two ticks
  });
  w.Start();
  ASSERT_TRUE(clock.AwaitWaiters(1));
  clock.Advance(seconds(10));  // t0+10: run; it ends at t0+35, so t0+20 and t0+30 are skipped
  ASSERT_TRUE(runs.Await(1));
  ASSERT_TRUE(clock.AwaitWaiters(1));
  clock.Advance(seconds(4));  // t0+39
  EXPECT_EQ(runs.at().size(), 1u);
  clock.Advance(seconds(1));  // t0+40: the next tick
  ASSERT_TRUE(runs.Await(2));
  ASSERT_TRUE(clock.AwaitWaiters(1));
  clock.Advance(seconds(10));  // t0+50
  ASSERT_TRUE(runs.Await(3));
  w.Stop();
  EXPECT_EQ(runs.at(),
            (std::vector<Clock::TimePoint>{t0 + seconds(10), t0 + seconds(40), t0 + seconds(50)}));
}

TEST(PeriodicWorkerTest, RunSoonRunsNowAndIsRememberedBeforeStart) {
  FakeClock clock;
  const Clock::TimePoint t0 = clock.Now();
  Runs runs(&clock);
  PeriodicWorker w(Every(seconds(10), &clock, PeriodicWorker::Schedule::kAfterRun),
                   [&] { runs.Record(); });
  w.RunSoon();
  w.RunSoon();  // two requests before the run: one run
  w.Start();
  ASSERT_TRUE(runs.Await(1));
  ASSERT_TRUE(clock.AwaitWaiters(1));
  EXPECT_EQ(runs.at().size(), 1u);
  w.RunSoon();
  ASSERT_TRUE(runs.Await(2));
  w.Stop();
  EXPECT_EQ(runs.at(), (std::vector<Clock::TimePoint>{t0, t0})) << "no time had to pass";
}

TEST(PeriodicWorkerTest, InfinitePeriodRunsOnlyOnRequestAndStopIsPrompt) {
  FakeClock clock;
  Runs runs(&clock);
  PeriodicWorker w(Every(Clock::Duration::max(), &clock, PeriodicWorker::Schedule::kAfterRun),
                   [&] { runs.Record(); });
  w.Start();
  ASSERT_TRUE(clock.AwaitWaiters(1));
  clock.Advance(std::chrono::hours(24 * 365));
  EXPECT_EQ(clock.waiters(), 1u);
  EXPECT_TRUE(runs.at().empty());
  w.RunSoon();
  ASSERT_TRUE(runs.Await(1));
  w.Stop();  // wakes the parked thread: returns without any time passing
  EXPECT_EQ(clock.waiters(), 0u);
  // Restartable.
  w.Start();
  w.RunSoon();
  ASSERT_TRUE(runs.Await(2));
  w.Stop();
}

TEST(PeriodicWorkerTest, RealClockByDefault) {
  PeriodicWorker::Options o;
  o.period = std::chrono::milliseconds(1);
  Runs runs(Clock::Real());
  PeriodicWorker w(o, [&] { runs.Record(); });
  EXPECT_EQ(w.clock(), Clock::Real());
  w.Start();
  ASSERT_TRUE(runs.Await(3));
  w.Stop();
}

}  // namespace
}  // namespace nvmlx::util
