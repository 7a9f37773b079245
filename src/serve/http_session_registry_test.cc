// The session registry (serve/http_session.h, Core) under eviction racing with sessions that end
// on their own: the hardening-round-three deadlock. An eviction used to take a strong reference
// to every registered session under Core::mu; when a session's own last reference went meanwhile,
// the eviction's was the last, ~Session ran under mu and locked it again, and the server's io
// thread hung for good (then the next, then Stop). Sessions here are fakes whose destructor
// unregisters exactly as the real one does, so the race is driven far harder than a network
// client can drive it. Before the fix this aborts (util::Mutex's self-deadlock check) or hangs.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "serve/http_session.h"

namespace nvmlx::serve {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A session that only registers, counts its interrupts, and unregisters in its destructor (the
// real Session's order: the registry entry goes first).
class FakeSession : public SessionBase {
 public:
  FakeSession(Core* core, std::string address, std::atomic<int>* interrupts)
      : core_(core), interrupts_(interrupts) {
    peer = std::move(address);
  }
  ~FakeSession() override {
    if (id_ != 0) core_->Unregister(id_, peer);
  }
  void Register(const std::shared_ptr<FakeSession>& self) {
    id_ = core_->Register(self, self.get(), peer);
  }
  void Interrupt(bool /*stopping*/) override { interrupts_->fetch_add(1); }

 private:
  Core* core_;
  std::atomic<int>* interrupts_;
  uint64_t id_ = 0;
};

TEST(SessionRegistryTest, EvictionRacingWithSessionsThatEndOnTheirOwnNeverDeadlocks) {
  Core core;
  std::atomic<int> interrupts{0};
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> evictions{0};
  std::atomic<uint64_t> listed{0};
  // Two evictors, as two io threads accepting at the limit; one also lists every session (Stop's
  // drain), which takes strong references under mu too.
  std::vector<std::thread> evictors;
  for (int t = 0; t < 2; ++t) {
    evictors.emplace_back([&, t] {
      const std::string peer = "10.0.0." + std::to_string(t);
      while (!stop.load(std::memory_order_relaxed)) {
        if (core.EvictOldestWaiting(t == 0 ? nullptr : &peer)) evictions.fetch_add(1);
        if (t == 1) listed.fetch_add(core.All().size());
      }
    });
  }
  // Two churners: each keeps up to 8 sessions alive, registering new ones (waiting, some past the
  // grace period, some having completed a request) and dropping the oldest: its last reference
  // outside the registry. Few alive: each drop is then likelier to meet an eviction holding it
  // (6 of 6 runs of the old registry aborted).
  std::vector<std::thread> churners;
  std::atomic<uint64_t> ended{0};
  for (int t = 0; t < 2; ++t) {
    churners.emplace_back([&] {
      std::deque<std::shared_ptr<FakeSession>> alive;
      const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
      for (uint64_t i = 0; std::chrono::steady_clock::now() < until; ++i) {
        auto s =
            std::make_shared<FakeSession>(&core, "10.0.0." + std::to_string(i % 3), &interrupts);
        s->waiting_since.store(NowNs() - (i % 2 == 0 ? 2'000'000'000 : 0));
        s->completed_request.store(i % 5 == 0);
        s->Register(s);
        alive.push_back(std::move(s));
        if (alive.size() > 8) {
          alive.pop_front();  // usually the last reference: ~FakeSession unregisters here
          ended.fetch_add(1);
        }
      }
      ended.fetch_add(alive.size());
      alive.clear();
    });
  }
  for (std::thread& t : churners) t.join();
  stop = true;
  for (std::thread& t : evictors) t.join();
  EXPECT_GT(ended.load(), 1000u) << "the churn did not run";
  EXPECT_GT(evictions.load(), 100u) << "the evictions did not run";
  EXPECT_GT(interrupts.load(), 0);
  EXPECT_GT(listed.load(), 0u);
  util::MutexLock lock(&core.mu);
  EXPECT_TRUE(core.sessions.empty()) << "every ended session unregistered";
  EXPECT_TRUE(core.per_peer.empty());
}

// The ranking reads sessions without taking references: it still picks the one that waited the
// longest without completing a request, and never the same one twice.
TEST(SessionRegistryTest, EvictionOrderIsUnchanged) {
  Core core;
  std::atomic<int> interrupts{0};
  const int64_t now = NowNs();
  std::vector<std::shared_ptr<FakeSession>> s;
  for (int i = 0; i < 4; ++i) {
    s.push_back(std::make_shared<FakeSession>(&core, "127.0.0.1", &interrupts));
  }
  s[0]->waiting_since = now - 100'000'000;  // young, no request yet: tier 2
  s[0]->completed_request = false;
  s[1]->waiting_since = now - 5'000'000'000;  // kept alive between requests: tier 1
  s[1]->completed_request = true;
  s[2]->waiting_since = now - 3'000'000'000;  // a slowloris: tier 0
  s[3]->waiting_since = 0;                    // busy: never
  for (auto& x : s) x->Register(x);
  EXPECT_TRUE(core.EvictOldestWaiting());
  EXPECT_EQ(s[2]->waiting_since.load(), 0);
  EXPECT_NE(s[1]->waiting_since.load(), 0);
  EXPECT_TRUE(core.EvictOldestWaiting());
  EXPECT_EQ(s[1]->waiting_since.load(), 0);
  EXPECT_TRUE(core.EvictOldestWaiting());
  EXPECT_EQ(s[0]->waiting_since.load(), 0);
  EXPECT_FALSE(core.EvictOldestWaiting());
  EXPECT_EQ(interrupts.load(), 3);
  const std::string other = "127.0.0.9";
  s[1]->waiting_since = now;
  EXPECT_FALSE(core.EvictOldestWaiting(&other));
}

}  // namespace
}  // namespace nvmlx::serve
