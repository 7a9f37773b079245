#include "app/stop_deadline.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "util/mutex.h"

namespace nvmlx::app {
namespace {

using std::chrono::milliseconds;

// What an expired deadline reported, for the test thread to wait on.
struct Expired {
  util::Mutex mu;
  util::CondVar cv;
  std::string step NVMLX_GUARDED_BY(mu);
  bool fired NVMLX_GUARDED_BY(mu) = false;
};

TEST(StopDeadlineTest, ExpiresWithTheStepInProgress) {
  auto expired = std::make_shared<Expired>();
  NoteStopStep("HTTP server");
  const auto start = std::chrono::steady_clock::now();
  auto flag = StartStopDeadline(milliseconds(150), [expired](const char* step) {
    util::MutexLock lock(&expired->mu);
    expired->step = step;
    expired->fired = true;
    expired->cv.SignalAll();
  });
  util::MutexLock lock(&expired->mu);
  const auto until = start + std::chrono::seconds(5);
  while (!expired->fired && !expired->cv.WaitUntil(&expired->mu, until)) {
  }
  ASSERT_TRUE(expired->fired);
  EXPECT_EQ(expired->step, "HTTP server");
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(150));
}

TEST(StopDeadlineTest, ACancelledDeadlineNeverFires) {
  auto fired = std::make_shared<std::atomic<bool>>(false);
  auto flag = StartStopDeadline(milliseconds(100), [fired](const char*) { fired->store(true); });
  flag->store(true);
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_FALSE(fired->load());
}

TEST(StopDeadlineDeathTest, ExitForStuckStopNamesTheStepAndExitsNonZero) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(ExitForStuckStop("collector", milliseconds(10000)), testing::ExitedWithCode(1),
              "did not finish within 10000 ms; exiting anyway \\(stuck in: collector\\)");
}

// The whole path, as app::Run arms it: a stop that hangs (here, a deadlock's shape: the thread
// waits for ever) still ends the process, non-zero, naming the step.
TEST(StopDeadlineDeathTest, AStopThatHangsEndsTheProcessWithinTheLimit) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        (void)StartStopDeadline(
            milliseconds(200), [](const char* step) { ExitForStuckStop(step, milliseconds(200)); });
        NoteStopStep("EMF pipeline");
        util::Mutex mu;
        util::CondVar cv;
        util::MutexLock lock(&mu);
        for (;;) cv.Wait(&mu);  // never signalled
      },
      testing::ExitedWithCode(1), "stuck in: EMF pipeline");
}

}  // namespace
}  // namespace nvmlx::app
