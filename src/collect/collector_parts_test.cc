// The Collector's shared parts (collect/collector_parts.h): RoundBoard's hand-over of answers,
// late ones included, and its wait.
#include "collect/collector_parts.h"

#include <gtest/gtest.h>

#include <thread>
#include <utility>
#include <vector>

#include "util/clock.h"

namespace nvmlx::collect {
namespace {

// An answer of one device whose gauge value says which round read it.
GroupResult AnswerOf(int value) {
  GroupResult r;
  model::DeviceSnapshot ds;
  ds.samples.push_back(model::Sample{150, int64_t{value}});
  r.devices.push_back(std::move(ds));
  r.all_failed.push_back(false);
  return r;
}

int64_t ValueOf(const GroupResult& r) {
  return std::get<int64_t>(r.devices.at(0).samples.at(0).value);
}

// A group that misses its round's deadline (slow, not stuck) has its answer handed to the next
// round, marked late, once; the group that answered in time is never late.
TEST(RoundBoardTest, AnswerAfterItsDeadlineIsHandedToTheNextRoundAsLate) {
  util::FakeClock clock;  // never moves: every Await below is past its deadline at once
  RoundBoard board;
  board.Resize(2);

  const std::optional<uint64_t> r1 = board.Begin(2);
  ASSERT_TRUE(r1);
  board.Deliver(0, *r1, AnswerOf(1));
  board.FinishJob(*r1);
  // Group 1 has not answered: the round's deadline (now) has passed.
  std::optional<std::vector<GroupResult>> got = board.Await(*r1, &clock, clock.Now());
  ASSERT_TRUE(got);
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[0].round, *r1);
  EXPECT_FALSE((*got)[0].late);
  EXPECT_EQ(ValueOf((*got)[0]), 1);
  EXPECT_NE((*got)[1].round, *r1) << "group 1 did not answer round 1 in time";
  EXPECT_TRUE((*got)[1].devices.empty());

  // Group 1's answer to round 1 comes after round 1 was handed over (its job's end is ignored).
  board.Deliver(1, *r1, AnswerOf(11));
  board.FinishJob(*r1);

  const std::optional<uint64_t> r2 = board.Begin(2);
  ASSERT_TRUE(r2);
  board.Skip(1);  // group 1 is idle again, but say its round-2 read is not posted
  board.Deliver(0, *r2, AnswerOf(2));
  board.FinishJob(*r2);
  got = board.Await(*r2, &clock, clock.Now());
  ASSERT_TRUE(got);
  EXPECT_EQ((*got)[0].round, *r2);
  EXPECT_FALSE((*got)[0].late);
  EXPECT_EQ(ValueOf((*got)[0]), 2);
  EXPECT_EQ((*got)[1].round, *r1) << "round 1's late answer, handed to round 2";
  EXPECT_TRUE((*got)[1].late);
  ASSERT_EQ((*got)[1].devices.size(), 1u);
  EXPECT_EQ(ValueOf((*got)[1]), 11);

  // Each answer is handed over once: round 3 gets neither old answer again.
  const std::optional<uint64_t> r3 = board.Begin(2);
  ASSERT_TRUE(r3);
  got = board.Await(*r3, &clock, clock.Now());
  ASSERT_TRUE(got);
  for (const GroupResult& r : *got) {
    EXPECT_NE(r.round, *r3);
    EXPECT_FALSE(r.late);
    EXPECT_TRUE(r.devices.empty());
  }
}

// An answer to a newer round than the one awaited (a stale Await) is kept for its own round.
TEST(RoundBoardTest, AnswerToANewerRoundIsNotHandedToAnOlderOne) {
  util::FakeClock clock;
  RoundBoard board;
  board.Resize(1);
  const std::optional<uint64_t> r1 = board.Begin(1);
  const std::optional<uint64_t> r2 = board.Begin(1);
  ASSERT_TRUE(r1 && r2);
  board.Deliver(0, *r2, AnswerOf(2));
  std::optional<std::vector<GroupResult>> got = board.Await(*r1, &clock, clock.Now());
  ASSERT_TRUE(got);
  EXPECT_TRUE((*got)[0].devices.empty());
  got = board.Await(*r2, &clock, clock.Now());
  ASSERT_TRUE(got);
  EXPECT_EQ((*got)[0].round, *r2);
  EXPECT_FALSE((*got)[0].late);
}

// Await returns as soon as the round's last job finishes on another thread, without the clock
// reaching the deadline; Stop ends a wait with nullopt.
TEST(RoundBoardTest, AwaitWakesOnTheLastJobAndOnStop) {
  util::FakeClock clock;  // never advanced: only the jobs (or Stop) can end the waits
  RoundBoard board;
  board.Resize(1);
  const std::optional<uint64_t> r1 = board.Begin(1);
  ASSERT_TRUE(r1);
  std::thread worker([&] {
    ASSERT_TRUE(clock.AwaitWaiters(1));
    board.Deliver(0, *r1, AnswerOf(7));
    board.FinishJob(*r1);
  });
  std::optional<std::vector<GroupResult>> got =
      board.Await(*r1, &clock, clock.Now() + std::chrono::hours(1));
  worker.join();
  ASSERT_TRUE(got);
  EXPECT_EQ((*got)[0].round, *r1);
  EXPECT_EQ(ValueOf((*got)[0]), 7);

  const std::optional<uint64_t> r2 = board.Begin(1);
  ASSERT_TRUE(r2);
  std::thread stopper([&] {
    ASSERT_TRUE(clock.AwaitWaiters(1));
    board.Stop();
  });
  got = board.Await(*r2, &clock, clock.Now() + std::chrono::hours(1));
  stopper.join();
  EXPECT_FALSE(got);
  EXPECT_FALSE(board.Begin(1)) << "no round after Stop";
}

}  // namespace
}  // namespace nvmlx::collect
