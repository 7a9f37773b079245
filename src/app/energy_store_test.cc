#include "app/energy_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "util/log.h"

namespace nvmlx::app {
namespace {

using ::testing::HasSubstr;
using Ledger = render::PodEnergyLedger;
using std::chrono::milliseconds;

const auto kNow = std::chrono::system_clock::from_time_t(1796000000);
const Ledger::KnownGpus kGpus = {{0, "GPU-0"}};

// A saved file of one series (GPU 0, ns/a/main) holding `joules`.
std::string SavedText(double joules) {
  std::ostringstream s;
  s.precision(17);
  s << R"({"version": 1, "saved": 1796000000, "readings_mj": {"GPU-0": 5},
           "series": [{"gpu": 0, "uuid": "GPU-0", "profile": "", "gpu_instance": "",
                       "namespace": "ns", "pod": "a", "container": "main", "joules": )"
    << joules << R"(, "grown": 1796000000}]})";
  return s.str();
}

std::shared_ptr<const Ledger> LedgerOf(double joules) {
  auto l = std::make_shared<Ledger>();
  EXPECT_TRUE(l->Restore(SavedText(joules), kNow, kGpus).ok());
  return l;
}

double JoulesOf(const Ledger& l) { return l.Joules(0, "", "ns", "a", "main"); }

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A fresh path in the test's temporary folder, nothing left there from an earlier run.
std::string FreshPath(const std::string& name) {
  const std::string p = ::testing::TempDir() + "energy_store_test_" + name;
  for (const std::string& q : {p, p + ".bad", p + ".tmp"}) {
    ::unlink(q.c_str());
    ::rmdir(q.c_str());
  }
  return p;
}

class EnergyStoreTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { log::Init(log::Format::kText, false); }
};

// Issue 36: the collection thread hands over its ledger and goes on at once, however long the
// write takes; until the write is done, the page keeps showing what is already on disk.
TEST_F(EnergyStoreTest, OfferReturnsAtOnceAndNothingIsServedBeforeItIsWritten) {
  std::atomic<bool> release{false};
  std::atomic<int> calls{0};
  EnergyStore store("unused", LedgerOf(10), [&](const std::string&, const std::string&) {
    ++calls;
    while (!release.load()) std::this_thread::sleep_for(milliseconds(1));  // a hung disk
    return Status::Ok();
  });
  const auto t0 = std::chrono::steady_clock::now();
  store.Offer(LedgerOf(20), kNow);
  while (calls.load() == 0) std::this_thread::sleep_for(milliseconds(1));
  store.Offer(LedgerOf(30), kNow);  // while the first write hangs
  EXPECT_LT(std::chrono::steady_clock::now() - t0, milliseconds(500));
  EXPECT_EQ(JoulesOf(*store.Servable()), 10) << "20 J is not written yet";
  release.store(true);
  ASSERT_TRUE(store.AwaitWrites(2, milliseconds(5000)));
  EXPECT_EQ(calls.load(), 2) << "the newest offer is written next, once";
  EXPECT_EQ(JoulesOf(*store.Servable()), 30);
}

// With the real file: whatever the page shows is never more than the file holds, at any moment,
// so a SIGKILL between two collections restores at least what was scraped.
TEST_F(EnergyStoreTest, ServedNeverExceedsTheFile) {
  const std::string path = FreshPath("served");
  EnergyStore store(path, LedgerOf(0));
  double last_served = 0;
  for (int i = 1; i <= 300; ++i) {
    store.Offer(LedgerOf(i), kNow);
    const double served = JoulesOf(*store.Servable());
    EXPECT_GE(served, last_served) << "the page never goes back";
    last_served = served;
    if (served == 0) continue;  // nothing written yet
    Ledger on_disk;
    ASSERT_TRUE(on_disk.Restore(ReadAll(path), kNow, kGpus).ok());
    EXPECT_GE(JoulesOf(on_disk), served) << "collection " << i;
    if (i % 30 == 0) std::this_thread::sleep_for(milliseconds(2));  // let some writes finish
  }
  ASSERT_TRUE(store.AwaitWrites(1, milliseconds(5000)));
  last_served = JoulesOf(*store.Servable());
  store.Stop();
  Ledger final_state;
  ASSERT_TRUE(final_state.Restore(ReadAll(path), kNow, kGpus).ok());
  EXPECT_EQ(JoulesOf(final_state), 300) << "Stop writes the last offer";
  EXPECT_GT(last_served, 0);
}

// A file that cannot be written (here a path under a regular file: ENOTDIR, as root too): one
// error line; the page then shows the newest ledger, never an older one than before.
TEST_F(EnergyStoreTest, FailingWritesLogOnceAndServeTheNewest) {
  const std::string file = FreshPath("not_a_dir");
  std::ofstream(file) << "x";
  ::testing::internal::CaptureStderr();
  {
    EnergyStore store(file + "/pod-energy.json", LedgerOf(1));
    for (int i = 2; i <= 5; ++i) {
      store.Offer(LedgerOf(i), kNow);
      ASSERT_TRUE(store.AwaitWrites(static_cast<uint64_t>(i - 1), milliseconds(5000)));
    }
    EXPECT_EQ(JoulesOf(*store.Servable()), 5);
  }
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 1) << log;
  EXPECT_THAT(log, HasSubstr("cannot save the counters"));
  EXPECT_THAT(log, HasSubstr("Not a directory"));
  std::remove(file.c_str());
}

// The temporary file's path taken by a FIFO (or a link): removed, never written through.
TEST_F(EnergyStoreTest, WriteNeverBlocksOnAFifoAtTheTemporaryPath) {
  const std::string path = FreshPath("tmp_fifo");
  ASSERT_EQ(::mkfifo((path + ".tmp").c_str(), 0600), 0);
  ASSERT_TRUE(EnergyStore::WriteAtomically(path, "{}\n").ok());
  EXPECT_EQ(ReadAll(path), "{}\n");
  struct stat st {};
  EXPECT_NE(::lstat((path + ".tmp").c_str(), &st), 0) << "nothing left at the temporary path";
  std::remove(path.c_str());
}

// What Load finds at the state path: everything but a good file is set aside with ONE error line
// naming the file and what was wrong, at once, and the counters start from 0.
struct Hostile {
  std::string name;
  std::function<void(const std::string& path)> make;
  std::string why;  // in the error line
};

TEST_F(EnergyStoreTest, LoadSetsAsideWhateverIsNotAGoodFileAtOnce) {
  const std::vector<Hostile> cases = {
      {"fifo", [](const std::string& p) { ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0); },
       "energy per pod state file is not a regular file"},
      {"devzero", [](const std::string& p) { ASSERT_EQ(::symlink("/dev/zero", p.c_str()), 0); },
       "energy per pod state file is not a regular file"},
      {"dir", [](const std::string& p) { ASSERT_EQ(::mkdir(p.c_str(), 0700), 0); },
       "energy per pod state file is a directory"},
      {"huge",
       [](const std::string& p) {
         std::ofstream out(p);
         out << SavedText(1);
         out.seekp(EnergyStore::kMaxFileBytes + 10);
         out << ' ';
       },
       "is larger than the 16 MiB limit (16777227 bytes)"},
      {"types", [](const std::string& p) { std::ofstream(p) << R"({"version": "1"})"; },
       "version: expected 1"},
      {"saved",
       [](const std::string& p) {
         std::ofstream(p) << R"({"version": 1, "saved": "x", "readings_mj": {}, "series": []})";
       },
       "saved: expected Unix seconds"},
      {"index",
       [](const std::string& p) {
         std::string t = SavedText(1);
         t.replace(t.find("\"gpu\": 0"), 8, "\"gpu\": 1099511627776");
         std::ofstream(p) << t;
       },
       "series[0].gpu: expected a GPU index"},
      {"joules", [](const std::string& p) { std::ofstream(p) << SavedText(1e308); },
       "series[0].joules: expected a number of joules from 0 to 1e15"},
      {"binary", [](const std::string& p) { std::ofstream(p) << std::string("\0\xff{[\x01", 5); },
       "expected a JSON object"},
  };
  for (const Hostile& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = FreshPath("load_" + c.name);
    c.make(path);
    Ledger ledger;
    ::testing::internal::CaptureStderr();
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_FALSE(EnergyStore::Load(path, kGpus, kNow, &ledger));
    const auto took = std::chrono::steady_clock::now() - t0;
    const std::string log = ::testing::internal::GetCapturedStderr();
    EXPECT_LT(took, milliseconds(1000));
    EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 1) << log;
    EXPECT_THAT(log, HasSubstr("level=error"));
    EXPECT_THAT(log, HasSubstr("file=" + path));
    EXPECT_THAT(log, HasSubstr(c.why));
    EXPECT_THAT(log, HasSubstr("kept_as=" + path + ".bad"));
    struct stat st {};
    EXPECT_NE(::lstat(path.c_str(), &st), 0) << "set aside";
    EXPECT_EQ(::lstat((path + ".bad").c_str(), &st), 0);
    EXPECT_EQ(JoulesOf(ledger), 0) << "from 0";
    // The next write puts a good file in its place.
    EXPECT_TRUE(EnergyStore::WriteAtomically(path, SavedText(2)).ok());
    Ledger again;
    EXPECT_TRUE(EnergyStore::Load(path, kGpus, kNow, &again));
    EXPECT_EQ(JoulesOf(again), 2);
    std::remove(path.c_str());
    ::unlink((path + ".bad").c_str());
    ::rmdir((path + ".bad").c_str());
  }
}

TEST_F(EnergyStoreTest, LoadOfNothingOrAGoodFileOrALinkToOne) {
  const std::string path = FreshPath("good");
  Ledger ledger;
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(EnergyStore::Load(path, kGpus, kNow, &ledger));
  EXPECT_THAT(::testing::internal::GetCapturedStderr(), HasSubstr("no saved counters"));
  const std::string target = FreshPath("good_target");
  std::ofstream(target) << SavedText(42);
  ASSERT_EQ(::symlink(target.c_str(), path.c_str()), 0);  // a hostPath may be a link
  ::testing::internal::CaptureStderr();
  EXPECT_TRUE(EnergyStore::Load(path, kGpus, kNow, &ledger));
  EXPECT_THAT(::testing::internal::GetCapturedStderr(), HasSubstr("counters restored"));
  EXPECT_EQ(JoulesOf(ledger), 42);
  std::remove(path.c_str());
  std::remove(target.c_str());
}

}  // namespace
}  // namespace nvmlx::app
