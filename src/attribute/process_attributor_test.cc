// ProcessAttributor over fake /proc trees: testdata/proc (the integration fixture) and trees
// built per test to cover recycled PIDs, exits mid-read and unreadable roots.
#include "attribute/process_attributor.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace nvmlx::attribute {
namespace {

namespace fs = std::filesystem;

const std::string kFixture = std::string(NVMLX_SOURCE_DIR) + "/testdata/proc";
constexpr char kUidA[] = "8f1c2d3e-4a5b-6c7d-8e9f-0a1b2c3d4e5f";
constexpr char kUidB[] = "11111111-2222-3333-4444-555555555555";

model::Snapshot SnapshotWith(const std::vector<std::vector<unsigned>>& pids_per_device) {
  model::Snapshot s;
  for (const auto& pids : pids_per_device) {
    model::DeviceSnapshot d;
    for (unsigned pid : pids) d.processes.push_back({pid, 0, false, 0, 0});
    s.devices.push_back(d);
  }
  return s;
}

uint64_t ErrorsOf(const model::SourceErrors& c, const std::string& source) {
  for (const auto& [s, n] : c.Counts()) {
    if (s == source) return n;
  }
  return 0;
}

// A proc tree in the test's temporary directory.
class ProcTree {
 public:
  explicit ProcTree(const std::string& name) : root_(::testing::TempDir() + "/" + name) {
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  ~ProcTree() {
    std::error_code ec;
    fs::permissions(root_, fs::perms::owner_all, ec);
    fs::remove_all(root_, ec);
  }
  void Add(unsigned pid, uint64_t start, const std::string& cgroup_path) {
    const fs::path dir = fs::path(root_) / std::to_string(pid);
    fs::create_directories(dir);
    std::ofstream(dir / "stat") << pid << " (proc) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 "
                                << start << " 0 0\n";
    std::ofstream(dir / "cgroup") << "0::" << cgroup_path << "\n";
  }
  void Remove(unsigned pid) { fs::remove_all(fs::path(root_) / std::to_string(pid)); }
  const std::string& root() const { return root_; }

 private:
  std::string root_;
};

std::string PodPath(const std::string& uid_with_dashes, char container_digit) {
  std::string uid = uid_with_dashes;
  for (char& c : uid) c = c == '-' ? '_' : c;
  return "/kubepods.slice/kubepods-pod" + uid + ".slice/cri-containerd-" +
         std::string(64, container_digit) + ".scope";
}

TEST(ProcessAttributorTest, ResolvesTheFixtureTree) {
  model::SourceErrors errors;
  ProcessAttributor a({kFixture, &errors});
  EXPECT_EQ(a.Latest(), nullptr);
  a.Observe(SnapshotWith({{4101, 4102, 4201, 4301, 4401, 4999}, {5101, 5102}}));
  a.ResolveNow();
  auto got = a.Latest();
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(got->by_pid.size(), 6u);  // 4301 is a host process, 4999 has exited
  EXPECT_EQ(got->by_pid.at(4101).pod_uid, kUidA);
  EXPECT_EQ(got->by_pid.at(4102).pod_uid, kUidA);
  EXPECT_NE(got->by_pid.at(4101).container_id, got->by_pid.at(4102).container_id);
  EXPECT_EQ(got->by_pid.at(4201).pod_uid, kUidB);
  EXPECT_EQ(got->by_pid.at(5101).pod_uid, "0123456789abcdef0123456789abcdef");
  EXPECT_EQ(got->by_pid.count(4301), 0u);
  // An exit between NVML's list and the read is not an error.
  EXPECT_EQ(ErrorsOf(errors, "cgroup"), 0u);
}

TEST(ProcessAttributorTest, PidStillListedButNeverInProcIsAnError) {
  model::SourceErrors errors;
  ProcessAttributor a({kFixture, &errors});
  a.Observe(SnapshotWith({{4101, 4999}}));
  a.ResolveNow();
  EXPECT_EQ(ErrorsOf(errors, "cgroup"), 0u);
  // NVML lists 4999 again one collection later: not a race, /proc is not the host's.
  a.ResolveNow();
  EXPECT_EQ(ErrorsOf(errors, "cgroup"), 1u);
  EXPECT_EQ(a.Latest()->by_pid.count(4101), 1u);  // the rest is still attributed
}

TEST(ProcessAttributorTest, RecycledPidIsReadAgain) {
  ProcTree tree("recycled");
  tree.Add(300, 1000, PodPath(kUidA, 'a'));
  ProcessAttributor a({tree.root(), nullptr});
  a.Observe(SnapshotWith({{300}}));
  a.ResolveNow();
  EXPECT_EQ(a.Latest()->by_pid.at(300).pod_uid, kUidA);
  // Same start time: the cached owner stands even if the file changed (it is not re-read).
  tree.Add(300, 1000, PodPath(kUidB, 'b'));
  a.ResolveNow();
  EXPECT_EQ(a.Latest()->by_pid.at(300).pod_uid, kUidA);
  // Another start time: another process with the same PID, which gets its own pod.
  tree.Add(300, 2000, PodPath(kUidB, 'b'));
  a.ResolveNow();
  EXPECT_EQ(a.Latest()->by_pid.at(300).pod_uid, kUidB);
  // Recycled into a host process: no owner any more.
  tree.Add(300, 3000, "/user.slice/user-0.slice/session-2.scope");
  a.ResolveNow();
  EXPECT_EQ(a.Latest()->by_pid.count(300), 0u);
}

TEST(ProcessAttributorTest, ExitedPidsLeaveTheAttribution) {
  ProcTree tree("exited");
  tree.Add(301, 10, PodPath(kUidA, 'a'));
  tree.Add(302, 11, PodPath(kUidB, 'b'));
  ProcessAttributor a({tree.root(), nullptr});
  a.Observe(SnapshotWith({{301, 302}}));
  a.ResolveNow();
  EXPECT_EQ(a.Latest()->by_pid.size(), 2u);
  tree.Remove(302);
  a.Observe(SnapshotWith({{301}}));
  a.ResolveNow();
  EXPECT_EQ(a.Latest()->by_pid.size(), 1u);
}

TEST(ProcessAttributorTest, MissingProcRootIsAnErrorAndKeepsNothingStale) {
  model::SourceErrors errors;
  ProcessAttributor a({"/nonexistent/proc-root", &errors});
  a.Observe(SnapshotWith({{1}}));
  a.ResolveNow();
  EXPECT_EQ(ErrorsOf(errors, "cgroup"), 1u);
  ASSERT_NE(a.Latest(), nullptr);
  EXPECT_TRUE(a.Latest()->by_pid.empty());
}

TEST(ProcessAttributorTest, UnreadableEntryKeepsTheLastOwner) {
  ProcTree tree("unreadable");
  tree.Add(303, 10, PodPath(kUidA, 'a'));
  model::SourceErrors errors;
  ProcessAttributor a({tree.root(), &errors});
  a.Observe(SnapshotWith({{303}}));
  a.ResolveNow();
  // A stat that cannot be read (EISDIR here; EACCES or EIO on a real host, which root would
  // not see through file modes) is a real error, unlike a vanished process.
  fs::remove(tree.root() + "/303/stat");
  fs::create_directory(tree.root() + "/303/stat");
  a.ResolveNow();
  EXPECT_EQ(ErrorsOf(errors, "cgroup"), 1u);
  EXPECT_EQ(a.Latest()->by_pid.at(303).pod_uid, kUidA);
}

TEST(ProcessAttributorTest, ThreadResolvesAfterObserve) {
  ProcessAttributor a({kFixture, nullptr});
  a.Start();
  a.Observe(SnapshotWith({{4201}}));
  // Wait (bounded) for the thread's pass; the assertion is on the result, not on timing.
  for (int i = 0; i < 500 && a.Latest() == nullptr; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  a.Stop();
  ASSERT_NE(a.Latest(), nullptr);
  EXPECT_EQ(a.Latest()->by_pid.at(4201).pod_uid, kUidB);
}

TEST(LookUpProcessTest, StartTimeSurvivesParenthesesInComm) {
  auto r = LookUpProcess(kFixture, 4102);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->start_time, 700002u);
  ASSERT_TRUE(r->owner);
  EXPECT_TRUE(r->cgroup_read);
  auto cached = LookUpProcess(kFixture, 4102, 700002u);
  ASSERT_TRUE(cached.ok());
  EXPECT_FALSE(cached->cgroup_read);
}

}  // namespace
}  // namespace nvmlx::attribute
