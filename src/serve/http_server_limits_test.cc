// The HTTP server under hostile or careless clients: header and URL limits, bodies, read and
// idle timeouts, trickling, connection limits, slowloris and clients that never read, and a stop
// that drains responses in flight (serve/http_server.h).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "serve/http_server.h"
#include "serve/http_server_test_fixture.h"

namespace nvmlx::serve {
namespace {

using test::Client;
using test::Gunzip;
using test::kBody;
using test::MakePage;
using test::Reply;
using test::ServerTest;

TEST_F(ServerTest, HeaderLimit) {
  ServerOptions o;
  o.max_request_header_bytes = 1024;
  SetPage(MakePage(kBody));
  StartServer(o);
  {
    Client c(port());
    Reply r = c.Request("GET", "/metrics", "X-Pad: " + std::string(900, 'a') + "\r\n");
    EXPECT_EQ(r.status, 200u);  // under the limit
  }
  Client c(port());
  Reply r = c.Request("GET", "/metrics", "X-Pad: " + std::string(4000, 'a') + "\r\n");
  EXPECT_EQ(r.status, 431u);
  EXPECT_TRUE(c.ClosedByPeer());
}

TEST_F(ServerTest, RequestBodyRefused) {
  SetPage(MakePage(kBody));
  StartServer();
  {
    Client c(port());
    c.SendRaw("POST /metrics HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello");
    Reply r = c.Read();
    EXPECT_EQ(r.status, 413u);
    EXPECT_TRUE(c.ClosedByPeer());
  }
  {
    Client c(port());
    c.SendRaw(
        "GET /metrics HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: "
        "chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
    EXPECT_EQ(c.Read().status, 413u);
  }
  {
    // An explicit empty body is no body.
    Client c(port());
    Reply r = c.Request("GET", "/metrics", "Content-Length: 0\r\n");
    EXPECT_EQ(r.status, 200u);
  }
}

TEST_F(ServerTest, MalformedRequestIs400) {
  StartServer();
  Client c(port());
  c.SendRaw("GET /metrics HTTP/9.9x\r\n\r\n");
  Reply r = c.Read();
  EXPECT_EQ(r.status, 400u);
  EXPECT_TRUE(c.ClosedByPeer());
}

TEST_F(ServerTest, SlowClientDisconnectedAfterReadTimeout) {
  ServerOptions o;
  o.read_timeout = std::chrono::milliseconds(300);
  SetPage(MakePage(kBody));
  StartServer(o);
  Client c(port());
  const auto start = std::chrono::steady_clock::now();
  c.SendRaw("GET /metrics HTTP/1.1\r\nHost: t\r\n");  // half a request, never finished
  EXPECT_TRUE(c.ClosedByPeer());
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_GE(elapsed, std::chrono::milliseconds(250));
  EXPECT_LT(elapsed, std::chrono::milliseconds(3000));
}

TEST_F(ServerTest, TrickleDoesNotExtendReadTimeout) {
  ServerOptions o;
  o.read_timeout = std::chrono::milliseconds(300);
  StartServer(o);
  Client c(port());
  const auto start = std::chrono::steady_clock::now();
  c.SendRaw("GET /metrics HTTP/1.1\r\n");
  // One header line every 50 ms for 1.5 s: each read makes progress, but the whole request is
  // what the timeout bounds, so the server must hang up at ~300 ms, long before the trickle ends.
  std::atomic<bool> stop{false};
  std::thread trickle([&] {
    for (int i = 0; i < 30 && !stop; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      c.SendRaw("X: y\r\n");
    }
  });
  const bool closed = c.ClosedByPeer();
  const auto elapsed = std::chrono::steady_clock::now() - start;
  stop = true;
  trickle.join();
  EXPECT_TRUE(closed);
  EXPECT_GE(elapsed, std::chrono::milliseconds(250));
  EXPECT_LT(elapsed, std::chrono::milliseconds(1000));
}

TEST_F(ServerTest, IdleKeepAliveConnectionClosed) {
  ServerOptions o;
  o.read_timeout = std::chrono::milliseconds(200);
  o.idle_timeout = std::chrono::milliseconds(600);
  SetPage(MakePage(kBody));
  StartServer(o);
  Client c(port());
  EXPECT_EQ(c.Request("GET", "/metrics").status, 200u);
  // Longer than read_timeout but within idle_timeout: the connection is still usable.
  std::this_thread::sleep_for(std::chrono::milliseconds(350));
  EXPECT_EQ(c.Request("GET", "/metrics").status, 200u);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(c.ClosedByPeer());
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
}

TEST_F(ServerTest, ManyThreadsManyClients) {
  ServerOptions o;
  o.threads = 4;
  SetPage(MakePage(kBody));
  StartServer(o);
  std::atomic<int> ok{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 8; ++t) {
    clients.emplace_back([&] {
      Client c(port());
      for (int i = 0; i < 25; ++i) {
        Reply r = c.Request("GET", "/metrics", i % 2 ? "Accept-Encoding: gzip\r\n" : "");
        if (r.status == 200 && (i % 2 ? Gunzip(r.body) : r.body) == kBody) ++ok;
      }
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(ok.load(), 200);
}

TEST_F(ServerTest, StopClosesConnections) {
  SetPage(MakePage(kBody));
  StartServer();
  Client c(port());
  EXPECT_EQ(c.Request("GET", "/metrics").status, 200u);
  server_->Stop();
  EXPECT_TRUE(c.ClosedByPeer());
  server_->Stop();  // idempotent
}

// RFC 9112 §6.1: a transfer coding the server does not understand is a 400, and the connection
// is closed (it cannot know where the next request starts). The regression: 200 before.
TEST_F(ServerTest, UnknownTransferEncodingIs400AndCloses) {
  SetPage(MakePage(kBody));
  StartServer();
  for (const char* te : {"xchunked", "gzip", "chunked, gzip", "identity"}) {
    Client c(port());
    Reply r = c.Request("GET", "/metrics", std::string("Transfer-Encoding: ") + te + "\r\n");
    EXPECT_EQ(r.status, 400u) << te;
    EXPECT_EQ(r.headers["connection"], "close") << te;
    EXPECT_TRUE(c.ClosedByPeer()) << te;
  }
  // Two Transfer-Encoding fields, or one with Content-Length (request smuggling): 400 too.
  Client c(port());
  c.SendRaw(
      "GET /metrics HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n"
      "Content-Length: 5\r\n\r\n0\r\n\r\n");
  EXPECT_EQ(c.Read().status, 400u);
  EXPECT_TRUE(c.ClosedByPeer());
}

// Hardening round two, row 11 (docs/web.md): RFC 9112 §3.2 — an HTTP/1.1 request without Host,
// or any request with two, is answered 400 and the connection closed; HTTP/1.0 may omit it.
TEST_F(ServerTest, MissingOrDoubleHostIs400) {
  SetPage(MakePage(kBody));
  StartServer();
  {
    Client c(port());
    c.SendRaw("GET /metrics HTTP/1.1\r\n\r\n");
    Reply r = c.Read();
    EXPECT_EQ(r.status, 400u);
    EXPECT_EQ(r.body, "missing Host header\n");
    EXPECT_TRUE(c.ClosedByPeer());
  }
  for (const char* version : {"1.1", "1.0"}) {
    Client c(port());
    c.SendRaw(std::string("GET /metrics HTTP/") + version + "\r\nHost: a\r\nHost: b\r\n\r\n");
    Reply r = c.Read();
    EXPECT_EQ(r.status, 400u) << version;
    EXPECT_EQ(r.body, "more than one Host header\n") << version;
  }
  {
    Client c(port());
    c.SendRaw("GET /metrics HTTP/1.0\r\n\r\n");
    EXPECT_EQ(c.Read().status, 200u) << "HTTP/1.0 has no Host requirement";
  }
}

TEST_F(ServerTest, OversizeUrlIs414AndOversizeHeaderIs431) {
  ServerOptions o;
  o.max_url_bytes = 1024;
  o.max_request_header_bytes = 8192;
  SetPage(MakePage(kBody));
  StartServer(o);
  {
    Client c(port());
    Reply r = c.Request("GET", "/metrics?" + std::string(2000, 'a'));
    EXPECT_EQ(r.status, 414u);
    EXPECT_TRUE(c.ClosedByPeer());
  }
  {
    Client c(port());  // the URL alone past the header limit: the header block is too large
    Reply r = c.Request("GET", "/metrics?" + std::string(10000, 'a'));
    EXPECT_EQ(r.status, 431u);
    EXPECT_TRUE(c.ClosedByPeer());
  }
  {
    Client c(port());
    Reply r = c.Request("GET", "/metrics?" + std::string(1000, 'a'));
    EXPECT_EQ(r.status, 200u);
  }
}

TEST_F(ServerTest, KeepAliveEndsAfterMaxRequests) {
  ServerOptions o;
  o.max_requests_per_connection = 3;
  SetPage(MakePage(kBody));
  StartServer(o);
  Client c(port());
  EXPECT_EQ(c.Request("GET", "/metrics").headers.count("connection"), 0u);
  EXPECT_EQ(c.Request("GET", "/metrics").headers.count("connection"), 0u);
  Reply last = c.Request("GET", "/metrics");
  EXPECT_EQ(last.status, 200u);
  EXPECT_EQ(last.headers["connection"], "close");
  EXPECT_TRUE(c.ClosedByPeer());
}

// Raises this process's descriptor limit to `want`; false when the hard limit is lower.
bool RaiseNofile(rlim_t want) {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return false;
  if (rl.rlim_cur >= want) return true;
  if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want) return false;
  rl.rlim_cur = want;
  return setrlimit(RLIMIT_NOFILE, &rl) == 0;
}

// A raw client socket connected to the server (blocking connect on loopback), or -1.
// rcvbuf > 0: a small receive buffer, as a remote client's that never reads would leave the
// data in the server's send buffer rather than in this process's receive queue.
int RawConnect(uint16_t port, int rcvbuf = 0, const char* source = nullptr) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (rcvbuf > 0) ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
  if (source != nullptr) {  // another loopback address: another peer for the per-source limit
    sockaddr_in b{};
    b.sin_family = AF_INET;
    ::inet_pton(AF_INET, source, &b.sin_addr);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&b), sizeof(b)) != 0) {
      ::close(fd);
      return -1;
    }
  }
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// At the limit (hardening round two, row 1), connections that have waited over a second without
// completing a request header yield their slot, oldest first: a newcomer evicts a half-sent
// request, not the other way round. Connections kept alive after a request go only after those; a
// connection whose response is being written is never evicted, and with only such connections the
// newcomer gets a 503.
TEST_F(ServerTest, ConnectionLimitEvictsIncompleteRequestsFirst) {
  ServerOptions o;
  o.max_connections = 4;
  SetPage(MakePage(kBody));
  StartServer(o);
  std::vector<std::unique_ptr<Client>> kept;
  for (int i = 0; i < 2; ++i) {
    kept.push_back(std::make_unique<Client>(port()));
    EXPECT_EQ(kept.back()->Request("GET", "/metrics").status, 200u);  // then idle, kept alive
  }
  std::vector<std::unique_ptr<Client>> partial;
  for (int i = 0; i < 2; ++i) {
    partial.push_back(std::make_unique<Client>(port()));
    partial.back()->SendRaw("GET /metrics HTTP/1.1\r\n");  // half a request, never finished
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // Past the grace a fresh connection gets to send its request (Core::kGraceNs).
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  std::vector<std::unique_ptr<Client>> newcomers;
  for (int i = 0; i < 2; ++i) {
    newcomers.push_back(std::make_unique<Client>(port()));
    EXPECT_EQ(newcomers.back()->Request("GET", "/metrics").status, 200u) << i;
    EXPECT_TRUE(partial[i]->ClosedByPeer()) << "the half request " << i << " made room";
  }
  EXPECT_EQ(server_->stats().connections_evicted.load(), 2u);
  Client third(port());  // no incomplete request left: the oldest kept-alive one goes
  EXPECT_EQ(third.Request("GET", "/metrics").status, 200u);
  EXPECT_TRUE(kept[0]->ClosedByPeer());
  EXPECT_EQ(server_->stats().connections_evicted.load(), 3u);
}

TEST_F(ServerTest, ConnectionLimitRefusesWhenEveryResponseIsInFlight) {
  ServerOptions o;
  o.max_connections = 4;
  SetPage(MakePage(std::string(8 * 1024 * 1024, 'z')));
  StartServer(o);
  std::vector<int> readers;  // ask for 8 MiB and never read: their responses stay in flight
  for (int i = 0; i < 4; ++i) {
    int fd = RawConnect(port(), 4096);
    ASSERT_GE(fd, 0);
    (void)!::send(fd, "GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n", 35, MSG_NOSIGNAL);
    readers.push_back(fd);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  Client c(port());
  Reply r = c.Read();  // refused at once, before it sends anything
  EXPECT_EQ(r.status, 503u);
  EXPECT_EQ(r.headers["connection"], "close");
  EXPECT_EQ(r.body, "too many connections\n");
  EXPECT_GE(server_->stats().connections_refused.load(), 1u);
  EXPECT_EQ(server_->stats().connections_evicted.load(), 0u);
  for (int fd : readers) ::close(fd);
}

// The load: 300 slowloris sockets (a header line every 200 ms, never finishing) and
// 2000 idle connections, while a client scrapes every 100 ms on a new connection: every scrape
// must succeed, and none may wait behind the slow clients (their read timeout is 10 s). The
// bound is 3 s, not the 100 ms the scrapes take unloaded: this is a correctness test (a scrape
// queued behind the slow clients would take the 10 s), and under TSan on a 2-core machine the
// worst scrape took 0.78-1.17 s (2026-12-05; 1.17 s failed a CI run at the earlier 1 s bound).
// The speed is bench/'s job.
TEST_F(ServerTest, SlowlorisAndIdleFloodDoNotDelayScrapes) {
  constexpr int kSlow = 300, kIdle = 2000, kScrapes = 30;
  // Both ends of every connection live in this process.
  if (!RaiseNofile(2 * (kSlow + kIdle) + 512)) {
    GTEST_SKIP() << "RLIMIT_NOFILE hard limit below " << 2 * (kSlow + kIdle) + 512
                 << "; raise it (ulimit -Hn) to run this test";
  }
  ServerOptions o;
  o.max_connections = 4096;
  SetPage(MakePage(std::string(200 * 1024, 'x')));  // a large page, as with 8 GPUs
  StartServer(o);
  std::vector<int> fds;
  for (int i = 0; i < kSlow + kIdle; ++i) {
    int fd = RawConnect(port());
    ASSERT_GE(fd, 0) << "connect " << i;
    fds.push_back(fd);
  }
  for (int i = 0; i < kSlow; ++i) {
    (void)!::send(fds[i], "GET /metrics HTTP/1.1\r\n", 23, MSG_NOSIGNAL);
  }
  std::atomic<bool> stop{false};
  std::thread loris([&] {
    while (!stop) {
      for (int i = 0; i < kSlow && !stop; ++i) (void)!::send(fds[i], "X: y\r\n", 6, MSG_NOSIGNAL);
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  });
  std::chrono::microseconds worst{0};
  int ok = 0;
  for (int i = 0; i < kScrapes; ++i) {
    const auto start = std::chrono::steady_clock::now();
    Client c(port());
    Reply r = c.Request("GET", "/metrics");
    const auto took = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - start);
    worst = std::max(worst, took);
    if (r.status == 200 && r.body.size() == 200 * 1024 && took < std::chrono::seconds(3)) {
      ++ok;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  stop = true;
  loris.join();
  std::cout << "worst scrape under " << kSlow << " slowloris + " << kIdle
            << " idle connections: " << worst.count() << " us\n";
  EXPECT_EQ(ok, kScrapes) << "worst " << worst.count() << " us";
  for (int fd : fds) ::close(fd);
}

// 200 clients ask for a 4 MiB page and never read it: their writes wait (async, up to the write
// timeout) while other clients are served, and Stop() still ends within its grace period.
TEST_F(ServerTest, ClientsThatNeverReadDoNotBlockOthers) {
  if (!RaiseNofile(1024)) GTEST_SKIP() << "RLIMIT_NOFILE hard limit below 1024";
  ServerOptions o;
  o.max_connections = 512;
  SetPage(MakePage(std::string(4 * 1024 * 1024, 'y')));
  StartServer(o);
  std::vector<int> fds;
  for (int i = 0; i < 200; ++i) {
    // From another address than the scrapes below (each address holds a quarter of the slots).
    int fd = RawConnect(port(), 16 * 1024, "127.0.0.2");
    ASSERT_GE(fd, 0);
    const std::string req = "GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n";
    (void)!::send(fd, req.data(), req.size(), MSG_NOSIGNAL);
    fds.push_back(fd);
  }
  // Until the kernel's send buffers of the 200 are full (copying into them costs CPU once).
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  for (int i = 0; i < 5; ++i) {
    const auto start = std::chrono::steady_clock::now();
    Client c(port());
    Reply r = c.Request("GET", "/metrics");
    EXPECT_EQ(r.status, 200u);
    EXPECT_EQ(r.body.size(), 4u * 1024 * 1024);
    // Not behind the 200 (their write timeout is seconds); 1 s leaves room for sanitizer builds.
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1)) << i;
  }
  const auto start = std::chrono::steady_clock::now();
  server_->Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1000));
  for (int fd : fds) ::close(fd);
}

// Hardening round two, row 1: a slowloris that keeps reopening its half-sent requests at the
// connection limit (it used to get 17 of 296 scrapes through) no longer locks the scraper out:
// its incomplete requests yield their slots, and from one address it holds at most a quarter of
// them. Every scrape of a client every 50 ms succeeds.
TEST_F(ServerTest, ReopeningSlowlorisAtTheLimitDoesNotLockScrapersOut) {
  ServerOptions o;
  o.max_connections = 64;
  SetPage(MakePage(kBody));
  StartServer(o);
  std::atomic<bool> stop{false};
  std::atomic<int> opened{0};
  std::thread loris([&] {
    std::vector<int> fds(100, -1);
    size_t next = 0;
    while (!stop) {
      int& fd = fds[next++ % fds.size()];
      if (fd >= 0) ::close(fd);
      fd = RawConnect(port(), 0, "127.0.0.3");
      if (fd >= 0) {
        (void)!::send(fd, "GET /metrics HTTP/1.1\r\nHost: x\r\n", 32, MSG_NOSIGNAL);
        opened.fetch_add(1);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    for (int f : fds) {
      if (f >= 0) ::close(f);
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the limit is reached
  int ok = 0;
  constexpr int kScrapes = 40;
  for (int i = 0; i < kScrapes; ++i) {
    Client c(port());
    ok += c.Request("GET", "/metrics").status == 200 ? 1 : 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const int64_t open = server_->stats().connections_open.load();
  stop = true;
  loris.join();
  EXPECT_GT(opened.load(), 100) << "the attack did not run";
  EXPECT_EQ(ok, kScrapes);
  EXPECT_LE(open, 16 + 4) << "one address holds a quarter of 64 slots at most";
  EXPECT_GT(server_->stats().connections_evicted.load() +
                server_->stats().connections_refused_per_peer.load(),
            0u);
}

// Hardening round three, row 1: the connection limit under a reopening slowloris from several
// addresses, served by two io threads, while the attackers also hang up on their own (sessions
// that end by themselves race with the evictions of the other thread). It used to wedge the
// server for good (an eviction released the last reference to a session under the registry's
// lock; its destructor locked it again): no scrape answered and Stop() never returned. Now at
// least 95 % of the scrapes during the attack succeed, the first one after it at once, and Stop()
// returns within its grace.
TEST_F(ServerTest, SlowlorisAtTheLimitWithTwoIoThreadsNeverWedgesTheServer) {
  if (!RaiseNofile(1024)) GTEST_SKIP() << "RLIMIT_NOFILE hard limit below 1024";
  ServerOptions o;
  o.threads = 2;
  o.max_connections = 48;
  o.read_timeout = std::chrono::milliseconds(2000);
  SetPage(MakePage(kBody));
  StartServer(o);
  std::atomic<bool> stop{false};
  std::atomic<int> opened{0};
  std::vector<std::thread> attackers;
  for (int a = 0; a < 3; ++a) {
    attackers.emplace_back([&, a] {
      const std::string source = "127.0.0." + std::to_string(2 + a);
      std::vector<int> fds(120, -1);
      unsigned seed = 12345u + a;
      for (size_t next = 0; !stop; ++next) {
        seed = seed * 1103515245u + 12345u;
        // Close one at random (a session ending on its own, often right as it is evicted), then
        // open the next slot again with half a request header.
        int& victim = fds[(seed >> 8) % fds.size()];
        if (victim >= 0) ::close(victim);
        victim = -1;
        int& fd = fds[next % fds.size()];
        if (fd >= 0) ::close(fd);
        fd = RawConnect(port(), 0, source.c_str());
        if (fd >= 0) {
          (void)!::send(fd, "GET /metrics HTTP/1.1\r\nHost: x\r\n", 32, MSG_NOSIGNAL);
          opened.fetch_add(1);
        }
        if (next % 4 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      for (int f : fds) {
        if (f >= 0) ::close(f);
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the limit is reached
  int ok = 0;
  constexpr int kScrapes = 60;
  for (int i = 0; i < kScrapes; ++i) {
    Client c(port());
    ok += c.Request("GET", "/metrics").status == 200 ? 1 : 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  stop = true;
  for (std::thread& t : attackers) t.join();
  EXPECT_GT(opened.load(), 500) << "the attack did not run";
  EXPECT_GE(ok, kScrapes * 95 / 100) << ok << " of " << kScrapes << " scrapes answered 200";
  EXPECT_GT(server_->stats().connections_evicted.load() +
                server_->stats().connections_refused_per_peer.load(),
            0u);
  // After the attack: answered at once.
  const auto after = std::chrono::steady_clock::now();
  Client c(port());
  EXPECT_EQ(c.Request("GET", "/metrics").status, 200u);
  EXPECT_LT(std::chrono::steady_clock::now() - after, std::chrono::milliseconds(1000));
  const auto stopping = std::chrono::steady_clock::now();
  server_->Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - stopping, std::chrono::milliseconds(2000));
}

// Stop() lets a response in flight finish (a slow reader of a large page gets it whole when it
// reads within the grace period), closes idle connections at once, and returns within 1 s.
TEST_F(ServerTest, StopDrainsInFlightResponses) {
  ServerOptions o;
  o.shutdown_grace = std::chrono::milliseconds(800);
  const std::string big(2 * 1024 * 1024, 'z');
  SetPage(MakePage(big));
  StartServer(o);
  Client idle(port());
  EXPECT_EQ(idle.Request("GET", "/health").status, 200u);
  Client slow(port());
  slow.SendRaw("GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the write is under way
  Reply got;
  std::thread reader([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    got = slow.Read();
  });
  const auto start = std::chrono::steady_clock::now();
  server_->Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1000));
  reader.join();
  EXPECT_EQ(got.status, 200u);
  EXPECT_EQ(got.body.size(), big.size());
  EXPECT_TRUE(idle.ClosedByPeer());
}

// --max-concurrent-scrapes: readers that never read hold their slots while their responses are
// being written; one more scrape gets 503 at once (other paths are still served), and a slot
// freed by a reader going away serves the next scrape whole.
TEST_F(ServerTest, ScrapesBeyondTheLimitGet503UntilASlotIsFree) {
  constexpr int kLimit = 3;
  ServerOptions o;
  o.max_concurrent_scrapes = kLimit;
  const std::string big(4 * 1024 * 1024, 's');  // far more than the socket buffers hold
  SetPage(MakePage(big));
  StartServer(o);
  auto wait_in_flight = [this](int64_t want) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (server_->stats().scrapes_in_flight.load() != want &&
           std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return server_->stats().scrapes_in_flight.load();
  };
  std::vector<int> slow;
  for (int i = 0; i < kLimit; ++i) {
    const int fd = RawConnect(port(), 16 * 1024);
    ASSERT_GE(fd, 0);
    const std::string req = "GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n";
    ASSERT_EQ(::send(fd, req.data(), req.size(), MSG_NOSIGNAL), static_cast<ssize_t>(req.size()));
    slow.push_back(fd);
  }
  ASSERT_EQ(wait_in_flight(kLimit), kLimit);

  Client extra(port());
  Reply refused = extra.Request("GET", "/metrics");
  EXPECT_EQ(refused.status, 503u);
  EXPECT_EQ(refused.body, "too many concurrent scrapes (--max-concurrent-scrapes)\n");
  EXPECT_EQ(server_->stats().scrapes_refused.load(), 1u);
  EXPECT_EQ(extra.Request("GET", "/health").status, 200u);  // probes are not scrapes

  // One reader goes away: its write fails, its slot comes back.
  ::close(slow.back());
  slow.pop_back();
  ASSERT_EQ(wait_in_flight(kLimit - 1), kLimit - 1);
  Reply served = extra.Request("GET", "/metrics");
  EXPECT_EQ(served.status, 200u);
  EXPECT_EQ(served.body.size(), big.size());
  EXPECT_EQ(wait_in_flight(kLimit - 1), kLimit - 1);  // the served one gave its slot back
  EXPECT_EQ(server_->stats().scrapes_refused.load(), 1u);
  for (int fd : slow) ::close(fd);
  EXPECT_EQ(wait_in_flight(0), 0);
}

}  // namespace
}  // namespace nvmlx::serve
