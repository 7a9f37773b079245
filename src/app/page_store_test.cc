#include "app/page_store.h"

#include <gtest/gtest.h>

namespace nvmlx::app {
namespace {

using std::chrono::milliseconds;

TEST(PageStoreTest, UnhealthyBeforeFirstPage) {
  PageStore store(milliseconds(1000));
  EXPECT_EQ(store.Latest(), nullptr);
  serve::Health h = store.Health();
  EXPECT_FALSE(h.ok);
  EXPECT_EQ(h.reason, "no collection has completed yet");
}

TEST(PageStoreTest, HealthyWithinThreeIntervalsThenStale) {
  PageStore store(milliseconds(1000));
  const auto t0 = PageStore::Clock::now();
  auto page = std::make_shared<serve::Page>();
  page->body = "x 1\n";
  store.Publish(page, 2, 2, t0);
  EXPECT_EQ(store.Latest()->body, "x 1\n");
  EXPECT_TRUE(store.Health(t0 + milliseconds(2999)).ok);
  serve::Health stale = store.Health(t0 + milliseconds(3500));
  EXPECT_FALSE(stale.ok);
  EXPECT_NE(stale.reason.find("3500 ms ago"), std::string::npos) << stale.reason;
}

TEST(PageStoreTest, LostGpuIsReportedButStillServing) {
  PageStore store(milliseconds(1000));
  const auto t0 = PageStore::Clock::now();
  store.Publish(std::make_shared<serve::Page>(), 8, 7, t0);
  serve::Health h = store.Health(t0);
  EXPECT_TRUE(h.ok);
  EXPECT_EQ(h.reason, "OK: 1 of 8 GPU(s) lost");
}

TEST(PageStoreTest, NoGpusIsUnhealthy) {
  PageStore store(milliseconds(1000));
  const auto t0 = PageStore::Clock::now();
  store.Publish(std::make_shared<serve::Page>(), 0, 0, t0);
  EXPECT_FALSE(store.Health(t0).ok);
}

}  // namespace
}  // namespace nvmlx::app
