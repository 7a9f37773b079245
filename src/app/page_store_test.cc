#include "app/page_store.h"

#include <gtest/gtest.h>

namespace nvmlx::app {
namespace {

using serve::Probe;
using std::chrono::milliseconds;

const PageStore::Clock::time_point kT0 = PageStore::Clock::time_point(std::chrono::hours(100));

// Before the first page: alive (starting) until max_age has passed since the start; not ready.
TEST(PageStoreTest, StartingIsLiveButNotReady) {
  PageStore store(milliseconds(30000), kT0);
  EXPECT_EQ(store.Latest(), nullptr);
  serve::Health live = store.Health(Probe::kLive, kT0 + milliseconds(29000));
  EXPECT_TRUE(live.ok);
  EXPECT_EQ(live.reason, "OK: starting, no collection has completed yet");
  serve::Health ready = store.Health(Probe::kReady, kT0 + milliseconds(29000));
  EXPECT_FALSE(ready.ok);
  EXPECT_EQ(ready.reason, "no collection has completed yet");
  serve::Health stuck = store.Health(Probe::kLive, kT0 + milliseconds(31000));
  EXPECT_FALSE(stuck.ok);
  EXPECT_EQ(stuck.reason, "no collection has completed in 31000 ms (--health-max-age 30000 ms)");
  EXPECT_FALSE(store.Health(Probe::kReady, kT0 + milliseconds(31000)).ok);
}

TEST(PageStoreTest, HealthyWithinMaxAgeThenStale) {
  PageStore store(milliseconds(3000), kT0);
  auto page = std::make_shared<serve::Page>();
  page->body = "x 1\n";
  store.Publish(page, {.total = 2}, kT0);
  EXPECT_EQ(store.Latest()->body, "x 1\n");
  for (Probe p : {Probe::kLive, Probe::kReady}) {
    EXPECT_TRUE(store.Health(p, kT0 + milliseconds(3000)).ok);
    serve::Health stale = store.Health(p, kT0 + milliseconds(3500));
    EXPECT_FALSE(stale.ok);
    EXPECT_EQ(stale.reason, "last collection was 3500 ms ago (--health-max-age 3000 ms)");
  }
}

// GPU state goes in the body, never in the status: a restart fixes no lost or absent GPU.
TEST(PageStoreTest, LostOrNoGpusAreReportedButHealthy) {
  PageStore store(milliseconds(30000), kT0);
  store.Publish(std::make_shared<serve::Page>(), {.total = 8, .lost = 1}, kT0);
  serve::Health h = store.Health(Probe::kLive, kT0);
  EXPECT_TRUE(h.ok);
  EXPECT_EQ(h.reason, "OK: 1 of 8 GPU(s) lost");
  store.Publish(std::make_shared<serve::Page>(), {.total = 2, .lost = 2}, kT0);
  EXPECT_TRUE(store.Health(Probe::kLive, kT0).ok);
  EXPECT_EQ(store.Health(Probe::kReady, kT0).reason, "OK: 2 of 2 GPU(s) lost");
  store.Publish(std::make_shared<serve::Page>(), {}, kT0);
  serve::Health none = store.Health(Probe::kReady, kT0);
  EXPECT_TRUE(none.ok);
  EXPECT_EQ(none.reason, "OK: no GPU is being collected");
  // A stuck driver call or a GPU whose reads all fail is said as such, not as "lost".
  store.Publish(std::make_shared<serve::Page>(),
                {.total = 4, .lost = 1, .stale = 1, .unreadable = 1}, kT0);
  serve::Health mixed = store.Health(Probe::kLive, kT0);
  EXPECT_TRUE(mixed.ok);
  EXPECT_EQ(mixed.reason,
            "OK: 1 of 4 GPU(s) lost, 1 of 4 GPU(s) stale (a driver call is stuck), 1 of 4 GPU(s) "
            "unreadable (every read failed)");
}

// Hardening round two, row 5: a GPU whose set-up at start never finished is the one GPU state
// that fails the probes (the start is incomplete; only a new start can collect it), naming the
// call it is stuck in; once it is set up, the probes pass again.
TEST(PageStoreTest, GpuStillInItsSetUpFailsTheProbesNamingTheCall) {
  PageStore store(milliseconds(30000), kT0);
  store.Publish(std::make_shared<serve::Page>(),
                {.total = 2, .setting_up = 1, .setting_up_calls = "gpu 0 in nvmlDeviceGetUUID"},
                kT0);
  for (Probe p : {Probe::kLive, Probe::kReady}) {
    serve::Health h = store.Health(p, kT0);
    EXPECT_FALSE(h.ok);
    EXPECT_EQ(h.reason,
              "start-up incomplete: 1 of 2 GPU(s) still in their set-up (gpu 0 in "
              "nvmlDeviceGetUUID); the others are served");
  }
  store.Publish(std::make_shared<serve::Page>(), {.total = 2}, kT0);
  EXPECT_TRUE(store.Health(Probe::kLive, kT0).ok);
  EXPECT_EQ(store.Health(Probe::kReady, kT0).reason, "OK");
}

// --health-require-gpus: a page that collected no GPU fails both probes; GPUs that are there but
// lost still pass (dcgm-exporter keys on a GPU collector existing, not on its GPUs' state), and
// the start-up grace before the first page is unchanged.
TEST(PageStoreTest, RequireGpusFailsOnlyWhenNoGpuIsCollected) {
  PageStore store(milliseconds(30000), /*require_gpus=*/true, kT0);
  EXPECT_TRUE(store.Health(Probe::kLive, kT0 + milliseconds(1000)).ok);  // starting
  store.Publish(std::make_shared<serve::Page>(), {}, kT0);
  for (Probe p : {Probe::kLive, Probe::kReady}) {
    serve::Health h = store.Health(p, kT0);
    EXPECT_FALSE(h.ok);
    EXPECT_EQ(h.reason, "no GPU is being collected (--health-require-gpus)");
  }
  store.Publish(std::make_shared<serve::Page>(), {.total = 2, .lost = 2}, kT0);
  serve::Health lost = store.Health(Probe::kLive, kT0);
  EXPECT_TRUE(lost.ok);
  EXPECT_EQ(lost.reason, "OK: 2 of 2 GPU(s) lost");
  store.Publish(std::make_shared<serve::Page>(), {.total = 1}, kT0);
  EXPECT_TRUE(store.Health(Probe::kReady, kT0).ok);
  // Staleness still wins, with its own reason.
  store.Publish(std::make_shared<serve::Page>(), {}, kT0);
  EXPECT_EQ(store.Health(Probe::kLive, kT0 + milliseconds(31000)).reason,
            "last collection was 31000 ms ago (--health-max-age 30000 ms)");
}

TEST(PageStoreTest, DefaultMaxAgeIsThreeIntervalsAtLeast30s) {
  EXPECT_EQ(PageStore::DefaultMaxAge(milliseconds(1000)), milliseconds(30000));
  EXPECT_EQ(PageStore::DefaultMaxAge(milliseconds(30000)), milliseconds(90000));
}

}  // namespace
}  // namespace nvmlx::app
