#include "app/gpu_binding_watch.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "util/clock.h"

namespace nvmlx::app {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

class GpuBindingWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gpu_bind_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    // What the kernel's directory holds besides the bound devices.
    for (const char* f : {"bind", "unbind", "new_id", "remove_id", "uevent"}) Touch(f);
    fs::create_directory(dir_ + "/module");
    Touch("0000:3b:00.0");
    Touch("0000:86:00.0");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Touch(const std::string& name) { std::ofstream(dir_ + "/" + name).put('\n'); }
  void Remove(const std::string& name) { fs::remove(dir_ + "/" + name); }
  // One poll: the worker runs at the next tick and parks again.
  void Tick() {
    clock_.Advance(milliseconds(100));
    ASSERT_TRUE(clock_.AwaitWaiters(1));
  }

  // A watch of dir_ that counts its changes in fired_, started and parked before its first poll.
  std::unique_ptr<GpuBindingWatch> StartWatch() {
    auto w = std::make_unique<GpuBindingWatch>(
        dir_, milliseconds(100), [this] { ++fired_; }, &clock_);
    EXPECT_TRUE(w->Start().ok());
    EXPECT_TRUE(clock_.AwaitWaiters(1));
    return w;
  }

  std::string dir_;
  util::FakeClock clock_;
  std::atomic<int> fired_{0};
};

TEST_F(GpuBindingWatchTest, BoundDevicesAreThePciAddresses) {
  Touch("00000001:02:03.4");  // a 32-bit PCI domain
  Touch("0000:3b:00.8");      // function 8 does not exist
  Touch("0000:3B:00.0");      // sysfs writes lower case
  Result<std::set<std::string>> got = GpuBindingWatch::BoundDevices(dir_);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, (std::set<std::string>{"00000001:02:03.4", "0000:3b:00.0", "0000:86:00.0"}));
  Result<std::set<std::string>> missing = GpuBindingWatch::BoundDevices(dir_ + "/nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find(dir_ + "/nope"), std::string::npos);
}

TEST_F(GpuBindingWatchTest, UnreadableDirectoryFailsStart) {
  GpuBindingWatch w(
      dir_ + "/nope", milliseconds(100), [] {}, &clock_);
  EXPECT_EQ(w.Start().code(), StatusCode::kNotFound);
}

// A change fires once the new set held still for one more poll; a flicker back to the baseline
// fires nothing; after firing, later changes are not reported again (the daemon is going away).
TEST_F(GpuBindingWatchTest, FiresOnceWhenTheSetSettles) {
  std::unique_ptr<GpuBindingWatch> w = StartWatch();
  Tick();
  EXPECT_EQ(fired_.load(), 0) << "nothing changed";

  Remove("0000:86:00.0");  // unbound ...
  Tick();
  Touch("0000:86:00.0");  // ... and back before the next poll: a flicker
  Tick();
  Tick();
  EXPECT_EQ(fired_.load(), 0);

  Remove("0000:86:00.0");
  Touch("0000:af:00.0");
  Tick();
  EXPECT_EQ(fired_.load(), 0) << "first sight: wait one more poll";
  Touch("0000:d8:00.0");  // still moving: the set seen last is the one to settle
  Tick();
  EXPECT_EQ(fired_.load(), 0);
  Tick();
  EXPECT_EQ(fired_.load(), 1);
  const GpuBindingWatch::Change c = w->Changes();
  EXPECT_EQ(c.added, (std::set<std::string>{"0000:af:00.0", "0000:d8:00.0"}));
  EXPECT_EQ(c.removed, (std::set<std::string>{"0000:86:00.0"}));
  Touch("0000:86:00.0");
  Tick();
  Tick();
  EXPECT_EQ(fired_.load(), 1);
  w->Stop();
}

// The driver's directory vanishes while the nvidia module is reloaded: no change while it is
// gone, and a change once it is back, even with the same GPUs (the NVML session is dead).
TEST_F(GpuBindingWatchTest, DriverReloadIsAChange) {
  std::unique_ptr<GpuBindingWatch> w = StartWatch();
  const std::string moved = dir_ + ".away";
  fs::rename(dir_, moved);
  Tick();
  Tick();
  EXPECT_EQ(fired_.load(), 0);
  fs::rename(moved, dir_);
  Tick();
  EXPECT_EQ(fired_.load(), 0) << "first sight: wait one more poll";
  Tick();
  EXPECT_EQ(fired_.load(), 1);
  const GpuBindingWatch::Change c = w->Changes();
  EXPECT_TRUE(c.driver_reloaded);
  EXPECT_TRUE(c.added.empty());
  EXPECT_TRUE(c.removed.empty());
  w->Stop();
}

// Out of descriptors (a connection flood): the directory cannot be read, which says nothing
// about the GPUs. Retried, and no change once it can be read again.
TEST_F(GpuBindingWatchTest, OutOfDescriptorsIsNoChange) {
  std::unique_ptr<GpuBindingWatch> w = StartWatch();
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
  rlimit low = old;
  low.rlim_cur = 3;  // every new descriptor fails with EMFILE
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  Result<std::set<std::string>> direct = GpuBindingWatch::BoundDevices(dir_);
  Tick();
  Tick();
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &old), 0);
  ASSERT_FALSE(direct.ok());
  EXPECT_EQ(direct.status().code(), StatusCode::kUnavailable) << direct.status().ToString();
  Tick();
  Tick();
  EXPECT_EQ(fired_.load(), 0);
  w->Stop();
}

}  // namespace
}  // namespace nvmlx::app
