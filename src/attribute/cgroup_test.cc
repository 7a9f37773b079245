// Table-driven tests of ParseCgroupPath / ParseCgroupFile over the cgroup path shapes that real
// nodes produce (docs/nvml.md §4), plus malformed input.
#include "attribute/cgroup.h"

#include <gtest/gtest.h>

#include <string>

namespace nvmlx::attribute {
namespace {

constexpr char kUid[] = "8f1c2d3e-4a5b-6c7d-8e9f-0a1b2c3d4e5f";
constexpr char kUidUnderscore[] = "8f1c2d3e_4a5b_6c7d_8e9f_0a1b2c3d4e5f";
constexpr char kCid[] = "3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a";

struct PathCase {
  const char* name;
  std::string path;
  bool has_owner;
  std::string uid;
  std::string cid;
};

std::string U(const char* s) { return s; }

class CgroupPathTest : public ::testing::TestWithParam<PathCase> {};

TEST_P(CgroupPathTest, Parses) {
  const PathCase& c = GetParam();
  std::optional<model::ProcessOwner> got = ParseCgroupPath(c.path);
  ASSERT_EQ(got.has_value(), c.has_owner) << c.path;
  if (!c.has_owner) return;
  EXPECT_EQ(got->pod_uid, c.uid) << c.path;
  EXPECT_EQ(got->container_id, c.cid) << c.path;
}

const std::string kSlices = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" +
                            U(kUidUnderscore) + ".slice/";

INSTANTIATE_TEST_SUITE_P(
    Shapes, CgroupPathTest,
    ::testing::Values(
        // systemd driver (kubeadm default), cgroup v2
        PathCase{"systemd_containerd_burstable", kSlices + "cri-containerd-" + kCid + ".scope",
                 true, kUid, kCid},
        PathCase{"systemd_crio", kSlices + "crio-" + kCid + ".scope", true, kUid, kCid},
        PathCase{"systemd_crio_conmon", kSlices + "crio-conmon-" + kCid + ".scope", true, kUid, ""},
        PathCase{"systemd_docker", kSlices + "docker-" + kCid + ".scope", true, kUid, kCid},
        PathCase{"systemd_besteffort",
                 "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" +
                     U(kUidUnderscore) + ".slice/cri-containerd-" + kCid + ".scope",
                 true, kUid, kCid},
        PathCase{"systemd_guaranteed_no_qos",
                 "/kubepods.slice/kubepods-pod" + U(kUidUnderscore) + ".slice/cri-containerd-" +
                     kCid + ".scope",
                 true, kUid, kCid},
        PathCase{"systemd_pod_level", kSlices, true, kUid, ""},
        PathCase{"systemd_nested_below_scope",
                 kSlices + "cri-containerd-" + U(kCid) + ".scope/init.scope", true, kUid, kCid},
        // cgroupfs driver
        PathCase{"cgroupfs_burstable", "/kubepods/burstable/pod" + U(kUid) + "/" + kCid, true, kUid,
                 kCid},
        PathCase{"cgroupfs_besteffort", "/kubepods/besteffort/pod" + U(kUid) + "/" + kCid, true,
                 kUid, kCid},
        PathCase{"cgroupfs_guaranteed", "/kubepods/pod" + U(kUid) + "/" + kCid, true, kUid, kCid},
        PathCase{"cgroupfs_crio", "/kubepods/burstable/pod" + U(kUid) + "/crio-" + kCid, true, kUid,
                 kCid},
        // private cgroup namespace (the default under v2): relative, with /..
        PathCase{"namespaced_relative",
                 "/../../kubepods-burstable-pod" + U(kUidUnderscore) + ".slice/cri-containerd-" +
                     kCid + ".scope",
                 true, kUid, kCid},
        PathCase{"namespaced_root_only", "/", false, "", ""},
        // kind / nested kubelet: the innermost pod wins
        PathCase{"kind_nested",
                 "/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/"
                 "kubelet-kubepods-besteffort-pod" +
                     U(kUidUnderscore) + ".slice/cri-containerd-" + kCid + ".scope",
                 true, kUid, kCid},
        // upper-case hex is normalised
        PathCase{"upper_case", "/kubepods/pod8F1C2D3E-4A5B-6C7D-8E9F-0A1B2C3D4E5F/" + U(kCid), true,
                 kUid, kCid},
        // static pod: the kubelet's uid is the 32-hex manifest hash
        PathCase{"static_pod_hash",
                 "/kubepods.slice/kubepods-burstable.slice/"
                 "kubepods-burstable-pod0123456789abcdef0123456789abcdef.slice/cri-containerd-" +
                     U(kCid) + ".scope",
                 true, "0123456789abcdef0123456789abcdef", kCid},
        // not Kubernetes
        PathCase{"host_user_session", "/user.slice/user-1000.slice/session-3.scope", false, "", ""},
        PathCase{"systemd_service", "/system.slice/containerd.service", false, "", ""},
        PathCase{"plain_docker_systemd", "/system.slice/docker-" + U(kCid) + ".scope", false, "",
                 ""},
        PathCase{"plain_docker_cgroupfs", "/docker/" + U(kCid), false, "", ""},
        PathCase{"firecracker", "/process_api/" + U(kCid), false, "", ""},
        PathCase{"empty", "", false, "", ""},
        // near misses
        PathCase{"short_uid", "/kubepods/pod8f1c2d3e-4a5b-6c7d-8e9f/" + U(kCid), false, "", ""},
        PathCase{"uid_with_tail", "/kubepods/pod" + U(kUid) + "x/" + kCid, false, "", ""},
        PathCase{"bad_cid_length", "/kubepods/pod" + U(kUid) + "/abc123", true, kUid, ""},
        PathCase{"non_hex_cid", "/kubepods/pod" + U(kUid) + "/" + std::string(63, 'a') + "g", true,
                 kUid, ""}),
    [](const ::testing::TestParamInfo<PathCase>& info) { return std::string(info.param.name); });

TEST(CgroupFileTest, CgroupV2SingleLine) {
  const std::string text = "0::" + kSlices + "cri-containerd-" + kCid + ".scope\n";
  auto got = ParseCgroupFile(text);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->pod_uid, kUid);
  EXPECT_EQ(got->container_id, kCid);
}

TEST(CgroupFileTest, CgroupV1ManyControllers) {
  const std::string p = "/kubepods/burstable/pod" + U(kUid) + "/" + kCid;
  const std::string text = "12:blkio:" + p + "\n11:memory:" + p + "\n10:cpu,cpuacct:" + p +
                           "\n9:pids:" + p + "\n1:name=systemd:" + p + "\n0::/\n";
  auto got = ParseCgroupFile(text);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->pod_uid, kUid);
  EXPECT_EQ(got->container_id, kCid);
}

TEST(CgroupFileTest, PrefersALineWithAContainer) {
  // Hybrid hierarchy: one controller only knows the pod, another knows the container too.
  const std::string text = "5:freezer:/kubepods/pod" + U(kUid) + "\n4:memory:/kubepods/pod" +
                           U(kUid) + "/" + kCid + "\n";
  auto got = ParseCgroupFile(text);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->container_id, kCid);
}

TEST(CgroupFileTest, PodOnlyWhenNoContainer) {
  auto got = ParseCgroupFile("0::/kubepods/pod" + U(kUid) + "\n");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->pod_uid, kUid);
  EXPECT_EQ(got->container_id, "");
}

TEST(CgroupFileTest, HostProcessHasNoOwner) {
  EXPECT_FALSE(ParseCgroupFile("0::/user.slice/user-0.slice/session-1.scope\n"));
  EXPECT_FALSE(ParseCgroupFile("12:memory:/\n11:cpu:/\n0::/init.scope\n"));
}

TEST(CgroupFileTest, MalformedLinesAreSkipped) {
  const std::string text = "garbage\n:\n1\n\n0::/kubepods/pod" + U(kUid) + "/" + kCid + "\r\n";
  auto got = ParseCgroupFile(text);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->container_id, kCid);
  EXPECT_FALSE(ParseCgroupFile(""));
  EXPECT_FALSE(ParseCgroupFile(std::string("\0\0\0", 3)));
}

TEST(CgroupFileTest, PathWithColons) {
  // The path is everything after the second ':'.
  auto got = ParseCgroupFile("0::/weird:name/kubepods/pod" + U(kUid) + "/" + kCid + "\n");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->pod_uid, kUid);
}

}  // namespace
}  // namespace nvmlx::attribute
