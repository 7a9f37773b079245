// The kubelet client and refresher against a real gRPC server (test/fixtures/fake_kubelet.h) on a
// unix socket: normal answers, the faults of issue 4 (missing socket, refused connection, slow
// past the deadline, an error status, huge answers, a restart), and what gets published.
#include "attribute/kubelet_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "attribute/pod_resources_refresher.h"
#include "fake_kubelet.h"
#include "util/clock.h"

namespace nvmlx::attribute {
namespace {

using fixtures::FakeAnswer;
using fixtures::FakeKubelet;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kGpu0[] = "GPU-00000000-0000-0000-0000-000000000000";

// A unix stream socket bound to `path` (not listening), or -1.
int BoundUnixSocket(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

class KubeletClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kubelet_client_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    socket_ = dir_ + "/kubelet.sock";
  }
  void TearDown() override {
    kubelet_.Stop();
    std::filesystem::remove_all(dir_);
  }

  static FakeAnswer OnePod(const std::string& pod) {
    FakeAnswer a;
    auto* p = a.response.add_pod_resources();
    p->set_namespace_("ns");
    p->set_name(pod);
    auto* c = p->add_containers();
    c->set_name("main");
    auto* d = c->add_devices();
    d->set_resource_name("nvidia.com/gpu");
    d->add_device_ids(kGpu0);
    return a;
  }
  static FakeAnswer Error(int code) {
    FakeAnswer a;
    a.error_code = code;
    a.error_message = "scripted failure";
    return a;
  }
  KubeletClientOptions Options(int deadline_ms = 2000) {
    KubeletClientOptions o;
    o.socket_path = socket_;
    o.deadline = std::chrono::milliseconds(deadline_ms);
    return o;
  }
  std::unique_ptr<PodResourcesLister> Client(int deadline_ms = 2000) {
    return std::make_unique<KubeletClient>(Options(deadline_ms));
  }
  PodMatcher Matcher() {
    model::DeviceIdentity id;
    id.index = 0;
    id.uuid = kGpu0;
    return PodMatcher({id}, {});
  }
  static std::string PodOn(const std::shared_ptr<const model::DeviceAttribution>& a) {
    if (a == nullptr) return "<none>";
    auto it = a->pods_by_device.find(kGpu0);
    return it == a->pods_by_device.end() ? "<free>" : it->second.front().pod;
  }

  std::string dir_, socket_;
  FakeKubelet kubelet_;
};

TEST_F(KubeletClientTest, ListsPods) {
  kubelet_.SetScript({OnePod("p")});
  ASSERT_TRUE(kubelet_.Start(socket_).ok());
  KubeletClient client(Options());
  Result<v1::ListPodResourcesResponse> r = client.ListProto();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->pod_resources_size(), 1);
  EXPECT_EQ(r->pod_resources(0).name(), "p");
  EXPECT_EQ(r->pod_resources(0).containers(0).devices(0).device_ids(0), kGpu0);
  // The plain answer the daemon sees (pod_resources.h), over the same channel.
  Result<KubeletPodList> plain = client.List();
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  ASSERT_EQ(plain->pods.size(), 1u);
  EXPECT_EQ(plain->pods[0].name, "p");
  ASSERT_EQ(plain->pods[0].containers.size(), 1u);
  ASSERT_EQ(plain->pods[0].containers[0].devices.size(), 1u);
  EXPECT_THAT(plain->pods[0].containers[0].devices[0].device_ids, ElementsAre(kGpu0));
  EXPECT_EQ(kubelet_.calls(), 2);
}

TEST_F(KubeletClientTest, MissingSocketIsNotFoundWithoutACall) {
  KubeletClient client(Options());
  Result<v1::ListPodResourcesResponse> r = client.ListProto();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr(socket_));
}

TEST_F(KubeletClientTest, RefusedConnectionIsUnavailable) {
  // A socket file nobody listens on: what a crashed kubelet leaves behind.
  const int fd = BoundUnixSocket(socket_);
  ASSERT_GE(fd, 0);
  close(fd);  // bound, never listened: connect() is refused
  KubeletClient client(Options());
  Result<v1::ListPodResourcesResponse> r = client.ListProto();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().ToString();
}

TEST_F(KubeletClientTest, ConnectionDroppedWhileSettingUpIsRetriedWithinTheDeadline) {
  // The first connection is accepted and closed at once (what a kubelet restarting, or one too
  // loaded to finish the handshake, looks like); then the real server takes the socket. The call
  // waits for the channel to reconnect instead of failing on the dropped connection (the
  // integration_dra_test of a loaded CI run lost the only page of --once to it).
  const int fd = BoundUnixSocket(socket_);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(listen(fd, 4), 0);
  kubelet_.SetScript({OnePod("p")});
  std::thread dropper([&] {
    const int conn = accept(fd, nullptr, nullptr);
    if (conn >= 0) close(conn);
    close(fd);
    unlink(socket_.c_str());
    (void)kubelet_.Start(socket_);
  });
  KubeletClient client(Options(/*deadline_ms=*/5000));
  Result<v1::ListPodResourcesResponse> r = client.ListProto();
  dropper.join();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->pod_resources(0).name(), "p");
  EXPECT_EQ(kubelet_.calls(), 1);
}

// A unix-socket proxy in front of the fake kubelet that holds each connection `delay` before it
// connects it through (bytes piped both ways): a kubelet slow to send its HTTP/2 SETTINGS frame.
class SlowHandshakeProxy {
 public:
  SlowHandshakeProxy(std::string listen_path, std::string target_path,
                     std::chrono::milliseconds delay)
      : target_(std::move(target_path)), delay_(delay) {
    listen_fd_ = BoundUnixSocket(listen_path);
    ok_ = listen_fd_ >= 0 && listen(listen_fd_, 8) == 0;
    if (ok_) acceptor_ = std::thread([this] { AcceptLoop(); });
  }
  ~SlowHandshakeProxy() {
    shutdown(listen_fd_, SHUT_RDWR);
    close(listen_fd_);
    if (acceptor_.joinable()) acceptor_.join();
    for (std::thread& t : pipes_) t.join();
  }
  bool ok() const { return ok_; }

 private:
  static sockaddr_un Address(const std::string& path) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
    return addr;
  }
  void AcceptLoop() {
    for (;;) {
      const int client = accept(listen_fd_, nullptr, nullptr);
      if (client < 0) return;
      pipes_.emplace_back([this, client] { Pipe(client); });
    }
  }
  void Pipe(int client) {
    std::this_thread::sleep_for(delay_);
    const int server = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr = Address(target_);
    if (server >= 0 && connect(server, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
      pollfd fds[2] = {{client, POLLIN, 0}, {server, POLLIN, 0}};
      char buf[16384];
      bool open = true;
      while (open && poll(fds, 2, 5000) > 0) {
        for (int i = 0; i < 2 && open; ++i) {
          if (fds[i].revents == 0) continue;
          const ssize_t n = read(fds[i].fd, buf, sizeof(buf));
          open = n > 0 && send(fds[1 - i].fd, buf, static_cast<size_t>(n), MSG_NOSIGNAL) == n;
        }
      }
    }
    if (server >= 0) close(server);
    close(client);
  }

  const std::string target_;
  const std::chrono::milliseconds delay_;
  int listen_fd_ = -1;
  bool ok_ = false;
  std::thread acceptor_;
  std::vector<std::thread> pipes_;  // only the acceptor adds, joined after it
};

TEST_F(KubeletClientTest, KubeletSlowToFinishTheHandshakeIsWaitedForWithinTheDeadline) {
  // Every connection waits 600 ms before the kubelet's SETTINGS frame can arrive. gRPC takes
  // GRPC_ARG_MIN_RECONNECT_BACKOFF_MS as the time a connection attempt may take: set to 100 ms
  // it failed every attempt, and so every refresh on a loaded node (kubelet_client.cc).
  kubelet_.SetScript({OnePod("p")});
  const std::string real = dir_ + "/real.sock";
  ASSERT_TRUE(kubelet_.Start(real).ok());
  SlowHandshakeProxy proxy(socket_, real, std::chrono::milliseconds(600));
  ASSERT_TRUE(proxy.ok());
  KubeletClient client(Options(/*deadline_ms=*/5000));
  Result<v1::ListPodResourcesResponse> r = client.ListProto();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->pod_resources(0).name(), "p");
}

TEST_F(KubeletClientTest, SlowPastTheDeadlineFails) {
  FakeAnswer slow = OnePod("p");
  slow.delay_ms = 3000;
  kubelet_.SetScript({slow});
  ASSERT_TRUE(kubelet_.Start(socket_).ok());
  KubeletClient client(Options(/*deadline_ms=*/200));
  Result<v1::ListPodResourcesResponse> r = client.ListProto();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(r.status().message(), HasSubstr("DEADLINE_EXCEEDED"));
  EXPECT_THAT(r.status().message(), HasSubstr("200 ms"));
}

TEST_F(KubeletClientTest, ErrorStatusIsReported) {
  kubelet_.SetScript({Error(13)});  // INTERNAL
  ASSERT_TRUE(kubelet_.Start(socket_).ok());
  KubeletClient client(Options());
  Result<v1::ListPodResourcesResponse> r = client.ListProto();
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("INTERNAL: scripted failure"));
}

TEST_F(KubeletClientTest, TwentyMebibyteAnswerFitsTheDefaultLimit) {
  FakeAnswer huge;
  fixtures::GeneratePods(2000, {kGpu0}, "nvidia.com/gpu", 20u << 20, &huge.response);
  ASSERT_GT(huge.response.ByteSizeLong(), 20u << 20);
  kubelet_.SetScript({huge});
  ASSERT_TRUE(kubelet_.Start(socket_).ok());
  KubeletClient client(Options(10000));
  Result<v1::ListPodResourcesResponse> r = client.ListProto();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->pod_resources_size(), 2000);
}

TEST_F(KubeletClientTest, AnswerOverTheLimitIsAnError) {
  FakeAnswer big;
  fixtures::GeneratePods(100, {kGpu0}, "nvidia.com/gpu", 2u << 20, &big.response);
  kubelet_.SetScript({big});
  ASSERT_TRUE(kubelet_.Start(socket_).ok());
  KubeletClientOptions o = Options();
  o.max_receive_bytes = 1 << 20;
  KubeletClient client(o);
  Result<v1::ListPodResourcesResponse> r = client.ListProto();
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("RESOURCE_EXHAUSTED"));
}

TEST_F(KubeletClientTest, RestartedKubeletIsReachedAgain) {
  kubelet_.SetScript({OnePod("before")});
  ASSERT_TRUE(kubelet_.Start(socket_).ok());
  KubeletClient client(Options());
  ASSERT_TRUE(client.ListProto().ok());
  kubelet_.Stop();
  EXPECT_FALSE(client.ListProto().ok());
  kubelet_.SetScript({OnePod("after")});
  ASSERT_TRUE(kubelet_.Start(socket_).ok());
  Result<v1::ListPodResourcesResponse> r = client.ListProto();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->pod_resources(0).name(), "after");
}

TEST_F(KubeletClientTest, RefresherKeepsTheLastGoodAttributionAndCountsFailures) {
  // good, error, slow, good: the failures leave "p1" published.
  FakeAnswer slow = OnePod("never");
  slow.delay_ms = 2000;
  kubelet_.SetScript({OnePod("p1"), Error(14), slow, OnePod("p2")});
  auto errors = std::make_shared<model::SourceErrors>();
  PodResourcesRefresher refresher(Client(/*deadline_ms=*/200), Matcher(), std::chrono::hours(1),
                                  errors);
  ASSERT_EQ(errors->Counts().size(), 1u);
  EXPECT_EQ(errors->Counts()[0].second, 0u);  // registered at zero
  EXPECT_EQ(PodOn(refresher.Latest()), "<none>");
  ASSERT_TRUE(kubelet_.Start(socket_).ok());
  EXPECT_TRUE(refresher.RefreshOnce());
  EXPECT_EQ(PodOn(refresher.Latest()), "p1");
  EXPECT_FALSE(refresher.RefreshOnce());
  EXPECT_FALSE(refresher.RefreshOnce());
  EXPECT_EQ(PodOn(refresher.Latest()), "p1");
  EXPECT_EQ(errors->Counts()[0], std::make_pair(std::string("kubelet"), uint64_t{2}));
  EXPECT_TRUE(refresher.RefreshOnce());
  EXPECT_EQ(PodOn(refresher.Latest()), "p2");
  kubelet_.Stop();
  EXPECT_FALSE(refresher.RefreshOnce());  // socket gone
  EXPECT_EQ(PodOn(refresher.Latest()), "p2");
  EXPECT_EQ(errors->Counts()[0].second, 3u);
}

TEST_F(KubeletClientTest, RefresherThreadRefreshesSoonOnRequest) {
  kubelet_.SetScript({OnePod("p1"), OnePod("p2")});
  ASSERT_TRUE(kubelet_.Start(socket_).ok());
  util::FakeClock clock;  // never advanced: only RefreshSoon can bring the second refresh
  PodResourcesRefresher refresher(Client(), Matcher(), std::chrono::hours(1), nullptr, &clock);
  ASSERT_TRUE(refresher.RefreshOnce());
  EXPECT_EQ(PodOn(refresher.Latest()), "p1");
  refresher.Start();
  ASSERT_TRUE(clock.AwaitWaiters(1));
  refresher.RefreshSoon();
  // Waits (bounded) for the refresh's effect; no time is asserted.
  for (int i = 0; i < 500 && PodOn(refresher.Latest()) != "p2"; ++i) usleep(10000);
  EXPECT_EQ(PodOn(refresher.Latest()), "p2");
  refresher.Stop();
}

TEST_F(KubeletClientTest, RefresherThreadRefreshesEveryPeriodOnItsClock) {
  kubelet_.SetScript({OnePod("p1"), OnePod("p2"), OnePod("p3")});
  ASSERT_TRUE(kubelet_.Start(socket_).ok());
  util::FakeClock clock;
  PodResourcesRefresher refresher(Client(), Matcher(), std::chrono::seconds(10), nullptr, &clock);
  ASSERT_TRUE(refresher.RefreshOnce());
  refresher.Start();
  ASSERT_TRUE(clock.AwaitWaiters(1));  // parked until t+10 s
  clock.Advance(std::chrono::seconds(9));
  EXPECT_EQ(clock.waiters(), 1u) << "no refresh before the period is over";
  EXPECT_EQ(PodOn(refresher.Latest()), "p1");
  clock.Advance(std::chrono::seconds(1));
  // Parked again only after the refresh has published.
  ASSERT_TRUE(clock.AwaitWaiters(1));
  EXPECT_EQ(PodOn(refresher.Latest()), "p2");
  clock.Advance(std::chrono::seconds(10));
  ASSERT_TRUE(clock.AwaitWaiters(1));
  EXPECT_EQ(PodOn(refresher.Latest()), "p3");
  refresher.Stop();
  EXPECT_EQ(kubelet_.calls(), 3);
}

// DRA: each refresh resolves claims with the slices the provider gives at that moment, and asks
// for a new slice list only when more claims than before name a device the slices do not know.
TEST_F(KubeletClientTest, RefresherResolvesDraClaimsWithTheLatestSlices) {
  auto claims = [](int n) {
    FakeAnswer a;
    auto* p = a.response.add_pod_resources();
    p->set_namespace_("ml");
    p->set_name("train");
    auto* c = p->add_containers();
    c->set_name("main");
    for (int i = 0; i < n; ++i) {
      auto* dr = c->add_dynamic_resources();
      dr->set_claim_name("claim" + std::to_string(i));
      dr->set_claim_namespace("ml");
      auto* res = dr->add_claim_resources();
      res->set_driver_name("gpu.nvidia.com");
      res->set_pool_name("node1");
      res->set_device_name("gpu-" + std::to_string(i));
    }
    return a;
  };
  // One claim (gpu-0), unknown twice; then two (gpu-0, gpu-1).
  FakeAnswer one = claims(1);
  one.repeat = 2;
  kubelet_.SetScript({one, claims(2)});
  ASSERT_TRUE(kubelet_.Start(socket_).ok());
  PodResourcesRefresher refresher(Client(), Matcher(), std::chrono::hours(1), nullptr);
  std::shared_ptr<const DraSlices> slices = std::make_shared<DraSlices>();
  int soon = 0;
  refresher.UseDraSlices([&] { return slices; }, [&] { ++soon; });

  ASSERT_TRUE(refresher.RefreshOnce());
  EXPECT_EQ(PodOn(refresher.Latest()), "<free>");
  EXPECT_EQ(soon, 1);  // a claim on an unknown device: list the slices again
  ASSERT_TRUE(refresher.RefreshOnce());
  EXPECT_EQ(soon, 1);  // the same unknown claim: no new list
  auto known = std::make_shared<DraSlices>();
  known->by_pool_device["node1/gpu-0"] = {false, kGpu0, "", ""};
  slices = known;
  ASSERT_TRUE(refresher.RefreshOnce());
  EXPECT_EQ(PodOn(refresher.Latest()), "train");
  ASSERT_TRUE(refresher.Latest()->pods_by_device.at(kGpu0).front().dra.has_value());
  EXPECT_EQ(refresher.Latest()->pods_by_device.at(kGpu0).front().dra->claim_name, "claim0");
  EXPECT_EQ(soon, 2);  // gpu-1 is new and unknown
}

// The counter of `source`, or -1 when it is not registered.
int64_t CountOf(const model::SourceErrors& errors, std::string_view source) {
  for (const auto& [name, n] : errors.Counts()) {
    if (name == source) return static_cast<int64_t>(n);
  }
  return -1;
}

fixtures::FakeAllocatable Allocatable(std::initializer_list<std::string> gpus) {
  fixtures::FakeAllocatable a;
  auto* gpu = a.response.add_devices();
  gpu->set_resource_name("nvidia.com/gpu");
  for (const std::string& id : gpus) gpu->add_device_ids(id);
  auto* mig = a.response.add_devices();
  mig->set_resource_name("nvidia.com/mig-1g.10gb");
  mig->add_device_ids("MIG-1");
  auto* nic = a.response.add_devices();
  nic->set_resource_name("example.com/nic");
  nic->add_device_ids("nic-0");
  return a;
}

TEST_F(KubeletClientTest, GetsAllocatableDevices) {
  kubelet_.SetAllocatable(Allocatable({kGpu0, "GPU-1"}));
  ASSERT_TRUE(kubelet_.Start(socket_).ok());
  KubeletClient client(Options());
  Result<KubeletAllocatable> r = client.GetAllocatable();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->devices.size(), 3u);
  EXPECT_EQ(r->devices[0].resource_name, "nvidia.com/gpu");
  EXPECT_THAT(r->devices[0].device_ids, ElementsAre(kGpu0, "GPU-1"));
}

TEST_F(KubeletClientTest, AllocatableUnimplementedIsNotSupported) {
  ASSERT_TRUE(kubelet_.Start(socket_).ok());  // no allocatable part: an old kubelet
  KubeletClient client(Options());
  Result<KubeletAllocatable> r = client.GetAllocatable();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotSupported);
  EXPECT_THAT(r.status().message(), HasSubstr("GetAllocatableResources"));
  EXPECT_THAT(r.status().message(), HasSubstr("UNIMPLEMENTED"));
}

TEST_F(KubeletClientTest, RefresherPublishesAllocatableGpuDevices) {
  kubelet_.SetScript({OnePod("p1")});
  kubelet_.SetAllocatable(Allocatable({kGpu0}));
  ASSERT_TRUE(kubelet_.Start(socket_).ok());
  auto errors = std::make_shared<model::SourceErrors>();
  PodResourcesRefresher refresher(Client(), Matcher(), std::chrono::hours(1), errors);
  EXPECT_EQ(CountOf(*errors, "kubelet_allocatable"), -1);  // not asked: not registered
  refresher.EnableAllocatable();
  EXPECT_EQ(CountOf(*errors, "kubelet_allocatable"), 0);
  ASSERT_TRUE(refresher.RefreshOnce());
  auto a = refresher.LatestAllocatable();
  ASSERT_NE(a, nullptr);
  // GPU resource names only: the NIC is left out, the MIG profile kept apart.
  EXPECT_EQ(a->device_ids_by_resource,
            (std::map<std::string, std::vector<std::string>>{
                {"nvidia.com/gpu", {kGpu0}}, {"nvidia.com/mig-1g.10gb", {"MIG-1"}}}));
  // A failing call keeps the last good answer and counts apart from List.
  fixtures::FakeAllocatable failing;
  failing.error_code = 13;
  failing.error_message = "boom";
  kubelet_.SetAllocatable(failing);
  ASSERT_TRUE(refresher.RefreshOnce());  // List still succeeds
  EXPECT_EQ(refresher.LatestAllocatable(), a);
  EXPECT_EQ(CountOf(*errors, "kubelet_allocatable"), 1);
  EXPECT_EQ(CountOf(*errors, "kubelet"), 0);
  // A kubelet that is gone counts once, as "kubelet", not twice.
  kubelet_.Stop();
  EXPECT_FALSE(refresher.RefreshOnce());
  EXPECT_EQ(CountOf(*errors, "kubelet"), 1);
  EXPECT_EQ(CountOf(*errors, "kubelet_allocatable"), 1);
  EXPECT_EQ(refresher.LatestAllocatable(), a);
}

TEST_F(KubeletClientTest, RefresherDegradesOnceWithoutGetAllocatable) {
  kubelet_.SetScript({OnePod("p1")});
  ASSERT_TRUE(kubelet_.Start(socket_).ok());  // answers GetAllocatableResources UNIMPLEMENTED
  auto errors = std::make_shared<model::SourceErrors>();
  PodResourcesRefresher refresher(Client(), Matcher(), std::chrono::hours(1), errors);
  refresher.EnableAllocatable();
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(refresher.RefreshOnce()) << i;  // List-based attribution is unaffected
    EXPECT_EQ(PodOn(refresher.Latest()), "p1");
  }
  EXPECT_EQ(refresher.LatestAllocatable(), nullptr);
  EXPECT_EQ(kubelet_.allocatable_calls(), 1);  // asked once, then never again
  EXPECT_EQ(CountOf(*errors, "kubelet_allocatable"), 1);
  EXPECT_EQ(CountOf(*errors, "kubelet"), 0);
}

TEST(FakeKubeletScriptTest, AllocatablePart) {
  auto none = fixtures::ParseAllocatable(R"({"answers": [{}]})", "s.json");
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_FALSE(none->has_value());
  auto some = fixtures::ParseAllocatable(
      R"({"allocatable": {"devices": [{"resource_name": "nvidia.com/gpu", "device_ids": ["G"]}],)"
      R"( "error": {"code": 12}}})",
      "s.json");
  ASSERT_TRUE(some.ok()) << some.status().ToString();
  ASSERT_TRUE(some->has_value());
  EXPECT_EQ((*some)->response.devices(0).device_ids(0), "G");
  EXPECT_EQ((*some)->error_code, 12);
  auto bad = fixtures::ParseAllocatable(R"({"allocatable": {"devices": 3}})", "s.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("s.json: allocatable"));
}

TEST(KubeletDeadlineTest, FollowsThePeriodWithinBounds) {
  EXPECT_EQ(KubeletDeadlineFor(std::chrono::milliseconds(1000)).count(), 1000);
  EXPECT_EQ(KubeletDeadlineFor(std::chrono::milliseconds(30000)).count(), 10000);
  EXPECT_EQ(KubeletDeadlineFor(std::chrono::milliseconds(10)).count(), 100);
}

TEST(FakeKubeletScriptTest, BadScriptsNameTheProblem) {
  auto r = fixtures::ParseScript("{\"answers\": []}", "s.json");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("s.json: answers"));
  EXPECT_FALSE(fixtures::ParseScript("{", "s.json").ok());
}

}  // namespace
}  // namespace nvmlx::attribute
