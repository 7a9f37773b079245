#include "attribute/container_runtime.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "util/log.h"

namespace nvmlx::attribute {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;

constexpr char kGpu0[] = "GPU-aaaa";
constexpr char kGpu1[] = "GPU-bbbb";
constexpr char kMig[] = "MIG-cccc";

// GPU 0, GPU 1, and one MIG instance (GPU instance 3) of GPU 1.
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

// A Docker-compatible engine of our own: HTTP/1.1 on a unix socket, answering GETs from a table
// of path -> (status, body), one request per connection. It can refuse (no socket), hang (accept
// and never answer) or be replaced while a refresher runs.
class FakeEngine {
 public:
  struct Answer {
    unsigned status = 200;
    std::string body;
  };

  explicit FakeEngine(std::string path) : path_(std::move(path)) {}
  ~FakeEngine() { Down(); }

  void Set(const std::string& target, Answer a) {
    std::lock_guard<std::mutex> lock(mu_);
    answers_[target] = std::move(a);
  }
  void Hang(bool hang) { hang_.store(hang); }
  int requests() const { return requests_.load(); }

  void Up() {
    listener_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(listener_, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    ASSERT_LT(path_.size(), sizeof(addr.sun_path));
    path_.copy(addr.sun_path, path_.size());
    ::unlink(path_.c_str());
    ASSERT_EQ(bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    ASSERT_EQ(listen(listener_, 16), 0);
    stop_.store(false);
    thread_ = std::thread([this] { Serve(); });
  }
  // The engine is gone: its socket too, so a connect fails as with a stopped dockerd.
  void Down() {
    if (!thread_.joinable()) return;
    stop_.store(true);
    thread_.join();
    ::close(listener_);
    ::unlink(path_.c_str());
  }

 private:
  void Serve() {
    while (!stop_.load()) {
      pollfd p{listener_, POLLIN, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      const int fd = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      Respond(fd);
      ::close(fd);
    }
  }
  void Respond(int fd) {
    std::string request;
    char buf[4096];
    while (request.find("\r\n\r\n") == std::string::npos) {
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 1000) <= 0) return;
      const ssize_t n = read(fd, buf, sizeof(buf));
      if (n <= 0) return;
      request.append(buf, static_cast<size_t>(n));
    }
    ++requests_;
    while (hang_.load() && !stop_.load()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const size_t sp = request.find(' ');
    const std::string target = request.substr(sp + 1, request.find(' ', sp + 1) - sp - 1);
    FakeEngine::Answer a{404, R"({"message":"No such container"})"};
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (auto it = answers_.find(target); it != answers_.end()) a = it->second;
    }
    const std::string response =
        "HTTP/1.1 " + std::to_string(a.status) +
        " X\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(a.body.size()) +
        "\r\nConnection: close\r\n\r\n" + a.body;
    size_t off = 0;
    while (off < response.size()) {
      const ssize_t n = send(fd, response.data() + off, response.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return;
      off += static_cast<size_t>(n);
    }
  }

  std::string path_;
  int listener_ = -1;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> hang_{false};
  std::atomic<int> requests_{0};
  std::mutex mu_;
  std::map<std::string, Answer> answers_;
};

class ContainerRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/container_runtime_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    engine_ = std::make_unique<FakeEngine>(socket());
  }
  void TearDown() override {
    engine_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::string socket() const { return dir_ + "/docker.sock"; }
  // One running container `id` named `name` with `inspect_rest` (JSON members after Name).
  void Container(const std::string& id, const std::string& name, const std::string& rest) {
    list_ += std::string(list_.empty() ? "" : ",") + R"({"Id":")" + id + R"(","Names":["/)" + name +
             R"("]})";
    engine_->Set("/containers/json", {200, "[" + list_ + "]"});
    engine_->Set("/containers/" + id + "/json",
                 {200, R"({"Id":")" + id + R"(","Name":"/)" + name + R"(")" + rest + "}"});
  }
  ContainerLabelOptions Options() {
    ContainerLabelOptions o;
    o.socket_path = socket();
    o.period = std::chrono::hours(1);  // the tests refresh by hand
    o.errors = errors_;
    return o;
  }
  static std::vector<std::string> Names(const model::RuntimeContainers& c, const std::string& k) {
    auto it = c.names_by_device.find(k);
    return it == c.names_by_device.end() ? std::vector<std::string>{} : it->second;
  }

  std::string dir_;
  std::string list_;
  std::unique_ptr<FakeEngine> engine_;
  std::shared_ptr<model::SourceErrors> errors_ = std::make_shared<model::SourceErrors>();
};

TEST_F(ContainerRuntimeTest, LabelsTheGpusEachContainerIsGiven) {
  Container("c1", "trainer",
            R"(,"HostConfig":{"DeviceRequests":[{"Driver":"nvidia","DeviceIDs":["GPU-aaaa"],)"
            R"("Capabilities":[["gpu"]]}]})");
  Container("c2", "all-gpus", R"(,"Config":{"Env":["PATH=/bin","NVIDIA_VISIBLE_DEVICES=all"]})");
  Container(
      "c3", "count-only",
      R"(,"HostConfig":{"DeviceRequests":[{"Driver":"","Count":1,"Capabilities":[["gpu"]]}]},)"
      R"("Config":{"Env":["NVIDIA_VISIBLE_DEVICES=0"]})");
  Container("c4", "by-index", R"(,"Config":{"Env":["NVIDIA_VISIBLE_DEVICES=nvidia1, 7,none"]})");
  Container("c5", "no-gpu", R"(,"Config":{"Env":["HOME=/root"]})");
  engine_->Up();
  ContainerLabelRefresher r(Options(), Identities());
  ASSERT_TRUE(r.RefreshOnce());
  std::shared_ptr<const model::RuntimeContainers> got = r.Latest();
  ASSERT_NE(got, nullptr);
  EXPECT_THAT(Names(*got, kGpu0), ElementsAre("trainer", "all-gpus"));
  // A whole GPU brings its MIG instances; the count-only request labels nothing (its env is
  // not read: the request decides).
  EXPECT_THAT(Names(*got, kGpu1), ElementsAre("all-gpus", "by-index"));
  EXPECT_THAT(Names(*got, kMig), ElementsAre("all-gpus", "by-index"));
  EXPECT_EQ(got->names_by_device.size(), 3u);
  EXPECT_THAT(errors_->Counts(), ElementsAre(Pair("container_runtime", 0u)));
}

TEST_F(ContainerRuntimeTest, MigNamesOldAndNewStyle) {
  Container("c1", "old-style", R"(,"Config":{"Env":["NVIDIA_VISIBLE_DEVICES=MIG-GPU-bbbb/3/0"]})");
  Container("c2", "new-style", R"(,"Config":{"Env":["NVIDIA_VISIBLE_DEVICES=MIG-cccc"]})");
  Container("c3", "wrong-gi", R"(,"Config":{"Env":["NVIDIA_VISIBLE_DEVICES=MIG-GPU-bbbb/9/0"]})");
  engine_->Up();
  EngineClient client(socket());
  Result<std::shared_ptr<model::RuntimeContainers>> got =
      FetchRuntimeContainers(&client, Identities(), kEngineRefreshTimeout);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_THAT(Names(**got, kMig), ElementsAre("old-style", "new-style"));
  EXPECT_THAT(Names(**got, kGpu1), IsEmpty());
}

TEST_F(ContainerRuntimeTest, ContainerGoneBetweenListAndInspectIsSkipped) {
  Container("c1", "trainer", R"(,"Config":{"Env":["NVIDIA_VISIBLE_DEVICES=GPU-aaaa"]})");
  engine_->Set("/containers/json", {200, R"([{"Id":"gone","Names":["/gone"]},{"Id":"c1"}])"});
  engine_->Up();
  EngineClient client(socket());
  Result<std::shared_ptr<model::RuntimeContainers>> got =
      FetchRuntimeContainers(&client, Identities(), kEngineRefreshTimeout);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_THAT(Names(**got, kGpu0), ElementsAre("trainer"));
}

TEST_F(ContainerRuntimeTest, EngineDownCountsAndKeepsTheLastGoodLabels) {
  Container("c1", "trainer", R"(,"Config":{"Env":["NVIDIA_VISIBLE_DEVICES=GPU-aaaa"]})");
  engine_->Up();
  ContainerLabelRefresher r(Options(), Identities());
  ASSERT_TRUE(r.RefreshOnce());
  engine_->Down();
  EXPECT_FALSE(r.RefreshOnce());
  EXPECT_FALSE(r.RefreshOnce());
  EXPECT_THAT(errors_->Counts(), ElementsAre(Pair("container_runtime", 2u)));
  ASSERT_NE(r.Latest(), nullptr);
  EXPECT_THAT(Names(*r.Latest(), kGpu0), ElementsAre("trainer"));
  // Back, with another container: the new map replaces the kept one.
  Container("c2", "second", R"(,"Config":{"Env":["NVIDIA_VISIBLE_DEVICES=1"]})");
  engine_->Up();
  EXPECT_TRUE(r.RefreshOnce());
  EXPECT_THAT(Names(*r.Latest(), kGpu1), ElementsAre("second"));
}

TEST_F(ContainerRuntimeTest, BadAnswersFailTheRefreshAndKeepTheMap) {
  Container("c1", "trainer", R"(,"Config":{"Env":["NVIDIA_VISIBLE_DEVICES=GPU-aaaa"]})");
  engine_->Up();
  ContainerLabelRefresher r(Options(), Identities());
  ASSERT_TRUE(r.RefreshOnce());
  engine_->Set("/containers/json", {200, "["});
  EXPECT_FALSE(r.RefreshOnce());
  engine_->Set("/containers/json", {500, R"({"message":"daemon is sick"})"});
  EngineClient client(socket());
  Result<std::shared_ptr<model::RuntimeContainers>> got =
      FetchRuntimeContainers(&client, Identities(), kEngineRefreshTimeout);
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(got.status().message(), HasSubstr("GET /containers/json: HTTP 500"));
  EXPECT_THAT(got.status().message(), HasSubstr("daemon is sick"));
  EXPECT_FALSE(r.RefreshOnce());
  EXPECT_THAT(errors_->Counts(), ElementsAre(Pair("container_runtime", 2u)));
  EXPECT_THAT(Names(*r.Latest(), kGpu0), ElementsAre("trainer"));
}

TEST_F(ContainerRuntimeTest, AHungEngineIsCutAtTheTimeout) {
  Container("c1", "trainer", R"(,"Config":{"Env":["NVIDIA_VISIBLE_DEVICES=GPU-aaaa"]})");
  engine_->Up();
  engine_->Hang(true);
  EngineClient client(socket());
  const auto start = std::chrono::steady_clock::now();
  Result<std::shared_ptr<model::RuntimeContainers>> got =
      FetchRuntimeContainers(&client, Identities(), std::chrono::milliseconds(200));
  const auto took = std::chrono::steady_clock::now() - start;
  engine_->Hang(false);
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(got.status().message(), HasSubstr("no answer within the refresh timeout"));
  EXPECT_LT(took, std::chrono::seconds(2));
}

// A container is inspected once for its life: a refresh with nothing new asks only for the list;
// a new container is inspected, one gone is forgotten, a renamed one inspected again (hardening
// round three: 5000 containers were all inspected at every refresh).
TEST_F(ContainerRuntimeTest, EachContainerIsInspectedOnceUnlessRenamed) {
  Container("c1", "trainer", R"(,"Config":{"Env":["NVIDIA_VISIBLE_DEVICES=GPU-aaaa"]})");
  Container("c2", "other", R"(,"Config":{"Env":["NVIDIA_VISIBLE_DEVICES=1"]})");
  engine_->Up();
  EngineClient client(socket());
  InspectCache cache;
  auto fetch = [&] {
    Result<std::shared_ptr<model::RuntimeContainers>> got = FetchRuntimeContainers(
        &client, Identities(), kEngineRefreshTimeout, kMaxContainerLabelsPerDevice, &cache);
    EXPECT_TRUE(got.ok()) << got.status().message();
    return got.ok() ? *got : std::make_shared<model::RuntimeContainers>();
  };
  EXPECT_THAT(Names(*fetch(), kGpu0), ElementsAre("trainer"));
  EXPECT_EQ(engine_->requests(), 3);  // the list and two inspections
  EXPECT_THAT(Names(*fetch(), kGpu1), ElementsAre("other"));
  EXPECT_EQ(engine_->requests(), 4) << "nothing new: the list only";
  Container("c3", "third", R"(,"Config":{"Env":["NVIDIA_VISIBLE_DEVICES=GPU-aaaa"]})");
  EXPECT_THAT(Names(*fetch(), kGpu0), ElementsAre("trainer", "third"));
  EXPECT_EQ(engine_->requests(), 6) << "the list and the new container";
  // c2 gone, c1 renamed: one inspection (c1 under its new name), and c2 forgotten.
  engine_->Set("/containers/json",
               {200, R"([{"Id":"c1","Names":["/renamed"]},{"Id":"c3","Names":["/third"]}])"});
  engine_->Set(
      "/containers/c1/json",
      {200,
       R"({"Id":"c1","Name":"/renamed","Config":{"Env":["NVIDIA_VISIBLE_DEVICES=GPU-aaaa"]}})"});
  std::shared_ptr<model::RuntimeContainers> got = fetch();
  EXPECT_THAT(Names(*got, kGpu0), ElementsAre("renamed", "third"));
  EXPECT_THAT(Names(*got, kGpu1), IsEmpty());
  EXPECT_EQ(engine_->requests(), 8);
  EXPECT_EQ(cache.by_id.size(), 2u);
  EXPECT_EQ(cache.by_id.count("c2"), 0u);
}

TEST_F(ContainerRuntimeTest, MissingSocketNamesIt) {
  EngineClient client(dir_ + "/nothing.sock");
  Result<std::shared_ptr<model::RuntimeContainers>> got =
      FetchRuntimeContainers(&client, Identities(), kEngineRefreshTimeout);
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(got.status().message(), HasSubstr(dir_ + "/nothing.sock: connect: "));
}

TEST_F(ContainerRuntimeTest, BackgroundRefresherPicksUpChanges) {
  Container("c1", "trainer", R"(,"Config":{"Env":["NVIDIA_VISIBLE_DEVICES=GPU-aaaa"]})");
  engine_->Up();
  ContainerLabelOptions o = Options();
  o.period = std::chrono::milliseconds(20);
  ContainerLabelRefresher r(o, Identities());
  r.Start();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (r.Latest() == nullptr && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_NE(r.Latest(), nullptr);
  EXPECT_THAT(Names(*r.Latest(), kGpu0), ElementsAre("trainer"));
  r.Stop();
}

// 5000 running containers given GPU 0 (an engine listing them newest first, as Docker does):
// GPU 0 gets the 16 oldest, in age order, the others are counted, and one warning is logged
// for the streak, not one per refresh.
TEST_F(ContainerRuntimeTest, ContainersPerGpuAreCappedOldestFirst) {
  log::Init(log::Format::kText, false);
  constexpr int kContainers = 5000;
  std::string list;
  for (int i = 0; i < kContainers; ++i) {
    const std::string id = "c" + std::to_string(i);
    const int64_t created = 1700000000 + (kContainers - i);  // c4999 is the oldest
    list += std::string(i == 0 ? "" : ",") + R"({"Id":")" + id + R"(","Names":["/n)" +
            std::to_string(i) + R"("],"Created":)" + std::to_string(created) + "}";
    engine_->Set("/containers/" + id + "/json",
                 {200, R"({"Id":")" + id + R"(","Name":"/n)" + std::to_string(i) +
                           R"(","Config":{"Env":["NVIDIA_VISIBLE_DEVICES=GPU-aaaa"]}})"});
  }
  engine_->Set("/containers/json", {200, "[" + list + "]"});
  engine_->Up();
  ContainerLabelOptions o = Options();
  o.timeout = std::chrono::seconds(60);  // 5001 requests to the fake, one connection each
  ContainerLabelRefresher r(std::move(o), Identities());
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(r.RefreshOnce());
  ASSERT_TRUE(r.RefreshOnce());
  const std::string log = ::testing::internal::GetCapturedStderr();
  std::shared_ptr<const model::RuntimeContainers> got = r.Latest();
  ASSERT_NE(got, nullptr);
  std::vector<std::string> want;
  for (int i = kContainers - 1; want.size() < kMaxContainerLabelsPerDevice; --i) {
    want.push_back("n" + std::to_string(i));
  }
  EXPECT_EQ(Names(*got, kGpu0), want);
  EXPECT_EQ(got->dropped, kContainers - kMaxContainerLabelsPerDevice);
  EXPECT_THAT(Names(*got, kGpu1), IsEmpty());
  const std::string warning = "more running containers use a GPU than get";
  ASSERT_NE(log.find(warning), std::string::npos) << log.substr(0, 2000);
  EXPECT_EQ(log.find(warning), log.rfind(warning)) << "once per streak";
  EXPECT_LT(log.size(), 2000u);
}

TEST(ContainerInspect, NameFallbacksAndSanitising) {
  ListedContainer listed{"0123456789abcdef", "/from-list"};
  Result<InspectedContainer> c = ParseContainerInspect(R"({"Id":"0123456789abcdef"})", listed);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->label, "from-list");
  listed.first_name.clear();
  c = ParseContainerInspect(R"({"Id":"0123456789abcdef","Name":"/"})", listed);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->label, "0123456789ab");
  c = ParseContainerInspect(R"({"Name":"/ a\nb\u0085c "})", listed);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->label, "a_b_c");
  EXPECT_FALSE(ParseContainerInspect("[1]", listed).ok());
  EXPECT_FALSE(ParseContainerInspect("{", listed).ok());
}

TEST(ContainerInspect, LabelsAreCutAt128BytesOnACharacterBoundary) {
  EXPECT_EQ(SanitizeContainerLabel(std::string(140, 'a')), std::string(128, 'a'));
  std::string e_acute;
  for (int i = 0; i < 80; ++i) e_acute += "\xc3\xa9";
  const std::string cut = SanitizeContainerLabel(e_acute);
  EXPECT_EQ(cut.size(), 128u);
  EXPECT_EQ(cut, e_acute.substr(0, 128));
  EXPECT_EQ(SanitizeContainerLabel("x" + e_acute).size(), 127u);  // never half an é
  EXPECT_EQ(SanitizeContainerLabel("bad\xff\xfe"), "bad__");
}

TEST(ContainerInspect, DeviceRequestsWinOverTheEnvironment) {
  ListedContainer l{"c", ""};
  Result<InspectedContainer> c = ParseContainerInspect(
      R"({"Name":"/x","HostConfig":{"DeviceRequests":[{"Driver":"nvidia","Count":-1}]},)"
      R"("Config":{"Env":["NVIDIA_VISIBLE_DEVICES=0"]}})",
      l);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->all_gpus);
  EXPECT_THAT(c->gpu_tokens, IsEmpty());
  c = ParseContainerInspect(
      R"({"Name":"/x","HostConfig":{"DeviceRequests":[{"Driver":"other","DeviceIDs":["9"]}]},)"
      R"("Config":{"Env":["NVIDIA_VISIBLE_DEVICES=GPU-1, 0"]}})",
      l);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->all_gpus);
  EXPECT_THAT(c->gpu_tokens, ElementsAre("GPU-1", "0"));
  EXPECT_THAT(DeviceKeysOf(*c, Identities()), ElementsAre(kGpu0));
}

TEST(ContainerList, RejectsWhatIsNotAList) {
  EXPECT_FALSE(ParseContainerList("{}").ok());
  EXPECT_FALSE(ParseContainerList("[1]").ok());
  EXPECT_FALSE(ParseContainerList("").ok());
  Result<std::vector<ListedContainer>> l = ParseContainerList(R"([{"Names":["/x"]},{"Id":"a"}])");
  ASSERT_TRUE(l.ok());
  ASSERT_EQ(l->size(), 1u);
  EXPECT_EQ((*l)[0].id, "a");
}

}  // namespace
}  // namespace nvmlx::attribute
