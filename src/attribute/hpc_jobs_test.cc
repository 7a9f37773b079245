#include "attribute/hpc_jobs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "util/clock.h"

namespace nvmlx::attribute {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kGpu0[] = "GPU-0";
constexpr char kGpu1[] = "GPU-1";
constexpr char kMig[] = "MIG-a";

std::vector<model::DeviceIdentity> Identities() {
  model::DeviceIdentity g0, g1, mig;
  g0.index = 0;
  g0.uuid = kGpu0;
  g1.index = 1;
  g1.uuid = kGpu1;
  mig = g1;
  mig.mig = model::DeviceIdentity::Mig{3, 0, "1g.18gb", kMig};
  return {g0, g1, mig};
}

class HpcJobsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/hpc_jobs_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ + "/" + name) << text;
  }
  std::vector<std::string> Jobs(const model::HpcJobs& jobs, const std::string& key) {
    auto it = jobs.jobs_by_device.find(key);
    return it == jobs.jobs_by_device.end() ? std::vector<std::string>{} : it->second;
  }
  std::string dir_;
};

TEST_F(HpcJobsTest, FilesNameGpusAndMigInstances) {
  Write("0", "job-17\n  job-18  \n\njob-17\n");
  Write("1.3", "mig-job\r\n");
  Write("7", "not-our-gpu\n");    // no GPU 7: ignored
  Write("README", "whatever\n");  // not <n> or <n>.<m>: ignored
  Write("1.x", "bad-name\n");
  Result<HpcReadResult> r = ReadHpcJobDir(dir_, Identities());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_THAT(Jobs(*r->jobs, kGpu0), ElementsAre("job-17", "job-18"));
  EXPECT_THAT(Jobs(*r->jobs, kMig), ElementsAre("mig-job"));
  EXPECT_THAT(Jobs(*r->jobs, kGpu1), IsEmpty());
  EXPECT_EQ(r->jobs->jobs_by_device.size(), 2u);
  EXPECT_THAT(r->problems, IsEmpty());
}

TEST_F(HpcJobsTest, BadLinesAreSkippedWithFileAndLine) {
  Write("1", "good\nbad\xff\xfe\xfe\xfe\n123 alice\ntab\there\nj\xc3\xa9\n");
  Result<HpcReadResult> r = ReadHpcJobDir(dir_, Identities());
  ASSERT_TRUE(r.ok());
  // The whole line is the id, as in dcgm-exporter; UTF-8 is fine.
  EXPECT_THAT(Jobs(*r->jobs, kGpu1), ElementsAre("good", "123 alice", "j\xc3\xa9"));
  ASSERT_EQ(r->problems.size(), 2u);
  EXPECT_THAT(r->problems[0], HasSubstr(dir_ + "/1:2: job id must be UTF-8 text"));
  EXPECT_THAT(r->problems[1], HasSubstr(dir_ + "/1:4: job id must be UTF-8 text"));
}

// Hardening round three: a FIFO in the directory used to block the refresher for good (the read
// waited for a writer); a huge file was read whole. Now the FIFO is skipped with a problem naming
// it, the other files are read, and a file past the cap fails the refresh (last good kept).
TEST_F(HpcJobsTest, AFifoIsSkippedAndAHugeFileIsRefusedWithoutBlocking) {
  Write("0", "job-1\n");
  ASSERT_EQ(::mkfifo((dir_ + "/1").c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  Result<HpcReadResult> r = ReadHpcJobDir(dir_, Identities());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  EXPECT_THAT(Jobs(*r->jobs, kGpu0), ElementsAre("job-1"));
  ASSERT_EQ(r->problems.size(), 1u);
  EXPECT_THAT(r->problems[0], HasSubstr(dir_ + "/1: not a regular file"));
  std::filesystem::remove(dir_ + "/1");
  Write("1", std::string(2 << 20, 'j'));
  r = ReadHpcJobDir(dir_, Identities());
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("larger than the 1 MiB limit"));
}

TEST_F(HpcJobsTest, MissingDirectoryIsNotFound) {
  Result<HpcReadResult> r = ReadHpcJobDir(dir_ + "/absent", Identities());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

TEST_F(HpcJobsTest, RefresherKeepsLastGoodOnUnreadableFileAndEmptiesOnMissingDir) {
  Write("0", "job-1\n");
  auto errors = std::make_shared<model::SourceErrors>();
  HpcJobRefresher refresher(dir_, Identities(), std::chrono::hours(1), errors);
  ASSERT_TRUE(refresher.RefreshOnce());
  EXPECT_THAT(Jobs(*refresher.Latest(), kGpu0), ElementsAre("job-1"));
  // A symlink loop cannot be opened by anyone, root included.
  std::filesystem::remove(dir_ + "/0");
  std::filesystem::create_symlink(dir_ + "/0", dir_ + "/0");
  EXPECT_FALSE(refresher.RefreshOnce());
  EXPECT_THAT(Jobs(*refresher.Latest(), kGpu0), ElementsAre("job-1"));
  EXPECT_EQ(errors->Counts()[0], std::make_pair(std::string("hpc"), uint64_t{1}));
  std::filesystem::remove_all(dir_);
  EXPECT_TRUE(refresher.RefreshOnce());
  EXPECT_THAT(refresher.Latest()->jobs_by_device, IsEmpty());
}

TEST_F(HpcJobsTest, RefresherThreadRereadsTheDirectoryEveryPeriodOnItsClock) {
  Write("0", "job-1\n");
  util::FakeClock clock;
  HpcJobRefresher refresher(dir_, Identities(), std::chrono::seconds(30), nullptr, &clock);
  ASSERT_TRUE(refresher.RefreshOnce());
  refresher.Start();
  ASSERT_TRUE(clock.AwaitWaiters(1));  // parked until t+30 s
  Write("0", "job-2\n");
  clock.Advance(std::chrono::seconds(29));
  EXPECT_EQ(clock.waiters(), 1u) << "no read before the period is over";
  EXPECT_THAT(Jobs(*refresher.Latest(), kGpu0), ElementsAre("job-1"));
  clock.Advance(std::chrono::seconds(1));
  ASSERT_TRUE(clock.AwaitWaiters(1));  // parked again only after the read has published
  EXPECT_THAT(Jobs(*refresher.Latest(), kGpu0), ElementsAre("job-2"));
  refresher.Stop();
  EXPECT_EQ(clock.waiters(), 0u);
}

}  // namespace
}  // namespace nvmlx::attribute
