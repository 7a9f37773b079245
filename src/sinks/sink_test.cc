#include "sinks/sink.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "sinks/sink_set.h"
#include "util/log.h"

namespace nvmlx::sinks {
namespace {

using std::chrono::milliseconds;

// Waits (without asserting a time) until `done` holds; gives up after a generous bound so a
// broken sink fails the test instead of hanging it.
bool Eventually(const std::function<bool()>& done) {
  for (int i = 0; i < 2000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(milliseconds(5));
  }
  return done();
}

std::vector<std::shared_ptr<const std::string>> Docs(std::initializer_list<const char*> docs) {
  std::vector<std::shared_ptr<const std::string>> out;
  for (const char* d : docs) out.push_back(std::make_shared<const std::string>(d));
  return out;
}

TEST(ParseSinkSpecTest, KindsAndErrors) {
  Result<SinkSpec> s = ParseSinkSpec("tcp://127.0.0.1:25888");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->kind, SinkSpec::Kind::kTcp);
  EXPECT_EQ(s->host, "127.0.0.1");
  EXPECT_EQ(s->port, 25888);
  s = ParseSinkSpec("udp://[::1]:9");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->kind, SinkSpec::Kind::kUdp);
  EXPECT_EQ(s->host, "::1");
  s = ParseSinkSpec("file:/var/log/emf.log");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->path, "/var/log/emf.log");
  EXPECT_EQ(ParseSinkSpec("stdout")->kind, SinkSpec::Kind::kStdout);
  for (const char* bad : {"tcp://host", "tcp://:1", "udp://h:0", "udp://h:70000", "tcp://h:x",
                          "file:", "http://h:1", "stderr", "tcp://[::1:5"}) {
    Result<SinkSpec> r = ParseSinkSpec(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find(std::string("\"") + bad + "\""), std::string::npos)
        << r.status().message();
  }
}

SinkSpec FakeSpec() {
  SinkSpec s;
  s.text = "fake";
  return s;
}

// A transport scripted by the test.
class FakeTransport : public Transport {
 public:
  std::function<Status(std::string_view)> send;
  int resets = 0;
  Status Send(std::string_view doc, std::chrono::milliseconds) override { return send(doc); }
  void Reset() override { ++resets; }
};

TEST(SinkTest, RetriesUnavailableAndKeepsOrder) {
  auto t = std::make_unique<FakeTransport>();
  FakeTransport* fake = t.get();
  std::mutex mu;
  std::vector<std::string> got;
  int failures = 3;
  fake->send = [&](std::string_view d) {
    std::lock_guard<std::mutex> lock(mu);
    if (failures-- > 0) return Unavailable("down");
    got.emplace_back(d);
    return Status::Ok();
  };
  SinkOptions o;
  o.backoff_initial = milliseconds(1);
  o.backoff_max = milliseconds(4);
  Sink sink(FakeSpec(), o, std::move(t));
  sink.Offer(Docs({"a", "b", "c"}));
  ASSERT_TRUE(Eventually([&] { return sink.sent() == 3; }));
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(got, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(sink.dropped(), 0u);
  EXPECT_EQ(fake->resets, 3);
}

TEST(SinkTest, FullQueueDropsWithoutBlockingAndUnsendableIsDropped) {
  auto t = std::make_unique<FakeTransport>();
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  t->send = [released](std::string_view d) {
    released.wait();  // a receiver that does not read
    if (d == "huge") return InvalidArgument("too big");
    return Status::Ok();
  };
  SinkOptions o;
  o.queue_capacity = 2;
  Sink sink(FakeSpec(), o, std::move(t));
  sink.Offer(Docs({"1", "huge", "3", "4", "5"}));  // returns at once
  EXPECT_EQ(sink.dropped(), 3u);
  EXPECT_EQ(sink.queued(), 2u);
  release.set_value();
  ASSERT_TRUE(Eventually([&] { return sink.queued() == 0; }));
  EXPECT_EQ(sink.sent(), 1u);
  EXPECT_EQ(sink.dropped(), 4u);
}

TEST(SinkTest, StopDropsWhatCannotBeSentInTime) {
  auto t = std::make_unique<FakeTransport>();
  t->send = [](std::string_view) { return Unavailable("down"); };
  SinkOptions o;
  o.backoff_initial = milliseconds(50);
  o.drain_timeout = milliseconds(100);
  Sink sink(FakeSpec(), o, std::move(t));
  sink.Offer(Docs({"a", "b"}));
  sink.Stop();
  EXPECT_EQ(sink.sent(), 0u);
  EXPECT_EQ(sink.dropped(), 2u);
  sink.Offer(Docs({"late"}));
  EXPECT_EQ(sink.dropped(), 3u);
}

std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(FileSinkTest, AppendsLinesAndRotatesBySize) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("emf_sink_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "emf.log").string();
  SinkOptions o;
  o.file_max_bytes = 25;  // two 10-byte lines per file
  o.file_keep = 2;
  Result<SinkSpec> spec = ParseSinkSpec("file:" + path);
  ASSERT_TRUE(spec.ok());
  Sink sink(*spec, o, MakeTransport(*spec, o));
  sink.Offer(Docs(
      {"doc-00001", "doc-00002", "doc-00003", "doc-00004", "doc-00005", "doc-00006", "doc-00007"}));
  ASSERT_TRUE(Eventually([&] { return sink.sent() == 7; }));
  sink.Stop();
  EXPECT_EQ(ReadFile(path), "doc-00007\n");
  EXPECT_EQ(ReadFile(path + ".1"), "doc-00005\ndoc-00006\n");
  EXPECT_EQ(ReadFile(path + ".2"), "doc-00003\ndoc-00004\n");
  EXPECT_FALSE(std::filesystem::exists(path + ".3"));  // keep = 2: the oldest went
  std::filesystem::remove_all(dir);
}

// Binds 127.0.0.1:*port (0: any free port, written back).
int Listen(int type, uint16_t* port) {
  int fd = ::socket(AF_INET, type, 0);
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(*port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  *port = ntohs(a.sin_port);
  if (type == SOCK_STREAM) ::listen(fd, 4);
  return fd;
}

TEST(NetSinkTest, TcpIsNewlineDelimitedAndUdpOneDatagramPerDocument) {
  uint16_t tcp_port = 0, udp_port = 0;
  const int lfd = Listen(SOCK_STREAM, &tcp_port);
  const int ufd = Listen(SOCK_DGRAM, &udp_port);
  Result<std::unique_ptr<SinkSet>> set =
      SinkSet::Create({"tcp://127.0.0.1:" + std::to_string(tcp_port),
                       "udp://127.0.0.1:" + std::to_string(udp_port)},
                      SinkOptions{});
  ASSERT_TRUE(set.ok()) << set.status().message();
  (*set)->Publish({"{\"a\":1}", "{\"b\":2}"});
  const int cfd = ::accept(lfd, nullptr, nullptr);
  ASSERT_GE(cfd, 0);
  std::string stream;
  char buf[256];
  while (stream.size() < 16) {
    const ssize_t n = ::recv(cfd, buf, sizeof(buf), 0);
    ASSERT_GT(n, 0);
    stream.append(buf, static_cast<size_t>(n));
  }
  EXPECT_EQ(stream, "{\"a\":1}\n{\"b\":2}\n");
  for (const char* want : {"{\"a\":1}", "{\"b\":2}"}) {
    const ssize_t n = ::recv(ufd, buf, sizeof(buf), 0);
    ASSERT_GT(n, 0);
    EXPECT_EQ(std::string(buf, static_cast<size_t>(n)), want);  // no newline, one per datagram
  }
  ASSERT_TRUE(Eventually(
      [&] { return (*set)->sinks()[0]->sent() == 2 && (*set)->sinks()[1]->sent() == 2; }));
  // The receiver goes away: the sink notices, reconnects to the new listener, and the document
  // it could not send is delivered there.
  ::close(cfd);
  ::close(lfd);
  (*set)->Publish({"{\"c\":3}"});
  ASSERT_TRUE(Eventually([&] { return (*set)->sinks()[1]->sent() == 3; }));
  const int lfd2 = Listen(SOCK_STREAM, &tcp_port);  // the same port again
  const int cfd2 = ::accept(lfd2, nullptr, nullptr);
  ASSERT_GE(cfd2, 0);
  stream.clear();
  while (stream.size() < 8) {
    const ssize_t n = ::recv(cfd2, buf, sizeof(buf), 0);
    ASSERT_GT(n, 0);
    stream.append(buf, static_cast<size_t>(n));
  }
  EXPECT_EQ(stream, "{\"c\":3}\n");
  ASSERT_TRUE(Eventually([&] { return (*set)->sinks()[0]->sent() == 3; }));
  EXPECT_EQ((*set)->sinks()[0]->dropped(), 0u);
  (*set)->Stop();
  ::close(cfd2);
  ::close(lfd2);
  ::close(ufd);
}

// Hardening round two, row 10: a receiver that accepts and never reads. Documents count as sent
// only once the receiver acknowledged them (what its small receive buffer took), what a dropped
// connection held unacknowledged counts as dropped, the stall shows in stalled(), the streak is
// logged once (it said "recovered" at every reconnection), and every document offered is
// accounted for: sent + dropped + queued.
TEST(NetSinkTest, ReceiverThatNeverReadsIsCountedAsSuch) {
  uint16_t port = 0;
  const int lfd = Listen(SOCK_STREAM, &port);
  const int small = 4096;  // inherited by accepted sockets: the receiver's window stays small
  ::setsockopt(lfd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
  std::vector<int> held;  // accepted, never read
  std::atomic<bool> done{false};
  std::thread acceptor([&] {
    while (!done.load()) {
      pollfd p{lfd, POLLIN, 0};
      if (::poll(&p, 1, 50) > 0) held.push_back(::accept(lfd, nullptr, nullptr));
    }
  });
  SinkOptions o;
  o.io_timeout = milliseconds(300);
  o.backoff_initial = milliseconds(20);
  o.backoff_max = milliseconds(40);
  o.queue_capacity = 100000;
  auto spec = ParseSinkSpec("tcp://127.0.0.1:" + std::to_string(port));
  ASSERT_TRUE(spec.ok());
  log::Init(log::Format::kText, false);  // to stderr, where the test reads it
  ::testing::internal::CaptureStderr();
  Sink sink(*spec, o, MakeTransport(*spec, o));
  const std::string doc(2000, 'x');
  uint64_t offered = 0;
  for (int round = 0; round < 40; ++round) {  // ~2 s of collections
    std::vector<std::shared_ptr<const std::string>> batch;
    for (int k = 0; k < 50; ++k) batch.push_back(std::make_shared<const std::string>(doc));
    sink.Offer(batch);
    offered += batch.size();
    std::this_thread::sleep_for(milliseconds(50));
  }
  ASSERT_TRUE(Eventually([&] { return sink.stalled(); })) << "the stall never showed";
  sink.Stop(milliseconds(300));
  const std::string log = ::testing::internal::GetCapturedStderr();
  done.store(true);
  acceptor.join();
  // 4 MB offered; each connection's receiver took a few KiB at most.
  EXPECT_LT(sink.sent(), 200u) << "documents the receiver never took were counted as sent";
  EXPECT_GT(sink.dropped(), 0u);
  EXPECT_EQ(sink.sent() + sink.dropped() + sink.queued(), offered);
  EXPECT_EQ(log.find("EMF output recovered"), std::string::npos) << log;
  size_t failing = 0;
  for (size_t pos = log.find("EMF output failing"); pos != std::string::npos;
       pos = log.find("EMF output failing", pos + 1)) {
    ++failing;
  }
  EXPECT_EQ(failing, 1u) << log;
  for (int fd : held) ::close(fd);
  ::close(lfd);
}

// Row 10 too: a stop is never held by a stuck receiver. A send waiting on it (io_timeout 5 s)
// ends with the stop's drain budget.
TEST(NetSinkTest, StopIsBoundedWhileASendWaitsOnTheReceiver) {
  uint16_t port = 0;
  const int lfd = Listen(SOCK_STREAM, &port);
  const int small = 4096;
  ::setsockopt(lfd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
  SinkOptions o;
  o.io_timeout = milliseconds(5000);
  o.drain_timeout = milliseconds(5000);
  o.queue_capacity = 100000;
  auto spec = ParseSinkSpec("tcp://127.0.0.1:" + std::to_string(port));
  ASSERT_TRUE(spec.ok());
  Sink sink(*spec, o, MakeTransport(*spec, o));
  std::vector<std::shared_ptr<const std::string>> batch;
  for (int k = 0; k < 3000; ++k) batch.push_back(std::make_shared<const std::string>(4000, 'y'));
  sink.Offer(batch);  // 12 MB: more than both buffers hold
  const int cfd = ::accept(lfd, nullptr, nullptr);
  ASSERT_GE(cfd, 0);
  std::this_thread::sleep_for(milliseconds(500));  // the sink is now waiting in a send
  const auto start = std::chrono::steady_clock::now();
  sink.Stop(milliseconds(300));
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_LT(took, milliseconds(1000)) << "Stop waited for the stuck receiver";
  EXPECT_EQ(sink.sent() + sink.dropped() + sink.queued(), 3000u);
  ::close(cfd);
  ::close(lfd);
}

TEST(SinkSetTest, RejectsBadAndDuplicateSpecs) {
  EXPECT_FALSE(SinkSet::Create({"tcp://h"}, SinkOptions{}).ok());
  Result<std::unique_ptr<SinkSet>> dup = SinkSet::Create({"stdout", "stdout"}, SinkOptions{});
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.status().message().find("twice"), std::string::npos);
}

}  // namespace
}  // namespace nvmlx::sinks
