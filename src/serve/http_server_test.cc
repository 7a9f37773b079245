#include "serve/http_server.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "serve/http_server_test_fixture.h"

namespace nvmlx::serve {
namespace {

using test::Client;
using test::Gunzip;
using test::kBody;
using test::MakePage;
using test::Reply;
using test::ServerTest;

// The owner's resources: its own paths and "/", with status, type and no-store as given; a
// path it declines is a 404; /metrics and the probes stay the server's.
TEST_F(ServerTest, ResourceProviderAnswersItsPaths) {
  SetPage(MakePage(kBody));
  std::atomic<int> calls{0};
  StartServer(
      {}, [&calls](std::string_view path, std::string_view query) -> std::optional<Resource> {
        ++calls;
        auto body = [](std::string s) { return std::make_shared<const std::string>(std::move(s)); };
        if (path == "/")
          return Resource{200, "text/html; charset=utf-8", body("<p>live</p>"), false, ""};
        if (path == "/api/v1/x") {
          if (query == "bad=1")
            return Resource{400, "text/plain; charset=utf-8", body("no\n"), true, ""};
          return Resource{200, "application/json", body("{\"q\":\"" + std::string(query) + "\"}"),
                          true, ""};
        }
        return std::nullopt;
      });
  Client c(port());
  ASSERT_TRUE(c.connected());
  Reply root = c.Request("GET", "/");
  EXPECT_EQ(root.status, 200u);
  EXPECT_EQ(root.body, "<p>live</p>");
  EXPECT_EQ(root.headers.count("cache-control"), 0u);
  Reply api = c.Request("GET", "/api/v1/x?minutes=5");
  EXPECT_EQ(api.status, 200u);
  EXPECT_EQ(api.headers["content-type"], "application/json");
  EXPECT_EQ(api.headers["cache-control"], "no-store");
  EXPECT_EQ(api.body, "{\"q\":\"minutes=5\"}");
  Reply bad = c.Request("GET", "/api/v1/x?bad=1");
  EXPECT_EQ(bad.status, 400u);
  EXPECT_EQ(bad.body, "no\n");
  Reply head = c.Request("HEAD", "/api/v1/x");
  EXPECT_EQ(head.status, 200u);
  EXPECT_EQ(head.headers["content-length"], "8");
  EXPECT_EQ(c.Request("GET", "/nope").status, 404u);
  EXPECT_EQ(c.Request("POST", "/api/v1/x").status, 405u);
  const int before = calls.load();
  EXPECT_EQ(c.Request("GET", "/metrics").body, kBody);  // never asks the provider
  EXPECT_EQ(c.Request("GET", "/health").status, 200u);
  EXPECT_EQ(calls.load(), before);
}

// The owner's actions: a POST to a path it takes runs it and sends its answer; a POST with an
// Origin header (a browser, cross-site) is refused before the action runs; a POST it declines
// falls back to the GET paths (405 with their Allow, or 404); a 405 the resource provider
// builds carries its own Allow; GET never runs an action.
TEST_F(ServerTest, ActionProviderTakesPosts) {
  SetPage(MakePage(kBody));
  std::atomic<int> runs{0};
  auto body = [](std::string s) { return std::make_shared<const std::string>(std::move(s)); };
  ServerOptions options;
  options.address = "127.0.0.1:0";
  server_ = std::make_unique<HttpServer>(
      options, [this] { return CurrentPage(); }, [this](Probe p) { return CurrentHealth(p); },
      [&body](std::string_view path, std::string_view) -> std::optional<Resource> {
        if (path == "/do") return Resource{405, "text/plain", body("POST only\n"), false, "POST"};
        if (path == "/state") return Resource{200, "application/json", body("{}"), true, ""};
        return std::nullopt;
      },
      [&runs, &body](std::string_view path) -> std::optional<Resource> {
        if (path != "/do") return std::nullopt;
        ++runs;
        return Resource{200, "application/json", body("{\"done\":true}"), true, ""};
      });
  ASSERT_TRUE(server_->Start().ok());
  Client c(port());
  ASSERT_TRUE(c.connected());
  Reply done = c.Request("POST", "/do");
  EXPECT_EQ(done.status, 200u);
  EXPECT_EQ(done.body, "{\"done\":true}");
  EXPECT_EQ(done.headers["cache-control"], "no-store");
  EXPECT_EQ(runs.load(), 1);
  Reply cross = c.Request("POST", "/do", "Origin: https://evil.example\r\n");
  EXPECT_EQ(cross.status, 403u);
  EXPECT_EQ(runs.load(), 1) << "a cross-origin POST must not run the action";
  Reply get = c.Request("GET", "/do");
  EXPECT_EQ(get.status, 405u);
  EXPECT_EQ(get.headers["allow"], "POST");
  EXPECT_EQ(runs.load(), 1);
  Reply post_state = c.Request("POST", "/state");
  EXPECT_EQ(post_state.status, 405u);
  EXPECT_EQ(post_state.headers["allow"], "GET, HEAD");
  EXPECT_EQ(c.Request("POST", "/nope").status, 404u);
  EXPECT_EQ(c.Request("POST", "/metrics").status, 405u) << "built-in paths take no POST";
  EXPECT_EQ(c.Request("GET", "/metrics").body, kBody);
}

TEST_F(ServerTest, MetricsGet) {
  SetPage(MakePage(kBody));
  StartServer();
  Client c(port());
  ASSERT_TRUE(c.connected());
  Reply r = c.Request("GET", "/metrics");
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.headers["content-type"], "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(r.headers["vary"], "Accept-Encoding");
  EXPECT_EQ(r.headers.count("content-encoding"), 0u);
  EXPECT_EQ(r.headers["content-length"], std::to_string(kBody.size()));
  EXPECT_EQ(r.body, kBody);
  // Query strings do not change the route.
  EXPECT_EQ(c.Request("GET", "/metrics?x=1").body, kBody);
}

TEST_F(ServerTest, MetricsHead) {
  SetPage(MakePage(kBody));
  StartServer();
  Client c(port());
  Reply r = c.Request("HEAD", "/metrics");
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.headers["content-length"], std::to_string(kBody.size()));
  EXPECT_EQ(r.body, "");
  // Nothing of a body follows: the next response on the connection parses cleanly.
  Reply g = c.Request("GET", "/metrics");
  EXPECT_EQ(g.status, 200u);
  EXPECT_EQ(g.body, kBody);
}

TEST_F(ServerTest, MethodsAndPaths) {
  SetPage(MakePage(kBody));
  StartServer();
  Client c(port());
  for (const char* path : {"/metrics", "/health", "/ready", "/"}) {
    for (const char* method : {"POST", "PUT", "DELETE", "OPTIONS"}) {
      Reply r = c.Request(method, path);
      EXPECT_EQ(r.status, 405u) << method << " " << path;
      EXPECT_EQ(r.headers["allow"], "GET, HEAD");
    }
  }
  Reply h = c.Request("GET", "/health");
  EXPECT_EQ(h.status, 200u);
  EXPECT_EQ(h.body, "OK");
  Reply hh = c.Request("HEAD", "/health");
  EXPECT_EQ(hh.status, 200u);
  EXPECT_EQ(hh.headers["content-length"], "2");
  Reply i = c.Request("GET", "/");
  EXPECT_EQ(i.status, 200u);
  EXPECT_EQ(i.headers["content-type"], "text/html; charset=utf-8");
  EXPECT_NE(i.body.find("href=\"./metrics\""), std::string::npos);
  EXPECT_NE(i.body.find("href=\"./health\""), std::string::npos);
  EXPECT_EQ(c.Request("HEAD", "/").status, 200u);
  EXPECT_EQ(c.Request("GET", "/nope").status, 404u);
  EXPECT_EQ(c.Request("GET", "/metrics/").status, 404u);
  EXPECT_EQ(c.Request("POST", "/nope").status, 404u);
}

// /health asks the liveness probe, /ready the readiness probe: each answers its own.
TEST_F(ServerTest, ReadyIsItsOwnProbe) {
  SetHealth({true, "OK: starting"});
  SetHealth({false, "no collection has completed yet"}, Probe::kReady);
  StartServer();
  Client c(port());
  Reply live = c.Request("GET", "/health");
  EXPECT_EQ(live.status, 200u);
  EXPECT_EQ(live.body, "OK: starting");
  Reply ready = c.Request("GET", "/ready");
  EXPECT_EQ(ready.status, 503u);
  EXPECT_EQ(ready.body, "no collection has completed yet");
  EXPECT_EQ(c.Request("HEAD", "/ready").status, 503u);
  EXPECT_EQ(c.Request("GET", "/ready/").status, 404u);
}

TEST_F(ServerTest, HealthUnavailable) {
  SetHealth({false, "no GPU collected for 120 s"});
  StartServer();
  Client c(port());
  Reply r = c.Request("GET", "/health");
  EXPECT_EQ(r.status, 503u);
  EXPECT_EQ(r.body, "no GPU collected for 120 s");
}

TEST_F(ServerTest, NoPageYieldsServiceUnavailable) {
  StartServer();
  Client c(port());
  Reply r = c.Request("GET", "/metrics");
  EXPECT_EQ(r.status, 503u);
  EXPECT_EQ(r.body, "no collection yet\n");
  SetPage(MakePage(kBody));
  Reply r2 = c.Request("GET", "/metrics");  // same connection, now with a page
  EXPECT_EQ(r2.status, 200u);
  EXPECT_EQ(r2.body, kBody);
}

TEST_F(ServerTest, GzipNegotiation) {
  std::string big;
  for (int i = 0; i < 2000; ++i) big += kBody;
  SetPage(MakePage(big));
  StartServer();
  Client c(port());
  struct Case {
    const char* header;
    bool gzip;
  } cases[] = {
      {"Accept-Encoding: gzip\r\n", true},
      {"Accept-Encoding: GZIP\r\n", true},
      {"Accept-Encoding: br, gzip;q=0.5\r\n", true},
      {"Accept-Encoding: *\r\n", true},
      {"Accept-Encoding: gzip;q=0\r\n", false},
      {"Accept-Encoding: gzip; q=0.000\r\n", false},
      {"Accept-Encoding: gzip;q=0, *\r\n", false},
      {"Accept-Encoding: identity\r\n", false},
      {"Accept-Encoding: deflate\r\nAccept-Encoding: gzip\r\n", true},
      {"", false},
  };
  for (const Case& k : cases) {
    Reply r = c.Request("GET", "/metrics", k.header);
    ASSERT_EQ(r.status, 200u) << k.header;
    EXPECT_EQ(r.headers["vary"], "Accept-Encoding");
    if (k.gzip) {
      EXPECT_EQ(r.headers["content-encoding"], "gzip") << k.header;
      EXPECT_LT(r.body.size(), big.size() / 5);
      EXPECT_EQ(Gunzip(r.body), big) << k.header;
    } else {
      EXPECT_EQ(r.headers.count("content-encoding"), 0u) << k.header;
      EXPECT_EQ(r.body, big) << k.header;
    }
  }
  // HEAD with gzip reports the compressed length.
  Reply h = c.Request("HEAD", "/metrics", "Accept-Encoding: gzip\r\n");
  EXPECT_EQ(h.headers["content-encoding"], "gzip");
  EXPECT_EQ(h.headers["content-length"], std::to_string(CurrentPage()->gzip_body.size()));
}

TEST_F(ServerTest, NoGzipBodyMeansIdentity) {
  auto p = std::make_shared<Page>();
  p->body = kBody;
  SetPage(p);
  StartServer();
  Client c(port());
  Reply r = c.Request("GET", "/metrics", "Accept-Encoding: gzip\r\n");
  EXPECT_EQ(r.headers.count("content-encoding"), 0u);
  EXPECT_EQ(r.body, kBody);
}

TEST(AcceptsGzipTest, Table) {
  EXPECT_TRUE(AcceptsGzip("gzip"));
  EXPECT_TRUE(AcceptsGzip("x-gzip"));
  EXPECT_TRUE(AcceptsGzip("deflate, gzip"));
  EXPECT_TRUE(AcceptsGzip(" gzip ; q=1.0 "));
  EXPECT_TRUE(AcceptsGzip("gzip;q=0.001"));
  EXPECT_TRUE(AcceptsGzip("*;q=0.1"));
  EXPECT_FALSE(AcceptsGzip(""));
  EXPECT_FALSE(AcceptsGzip("identity"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0.0, *;q=1"));  // explicit gzip beats the wildcard
  EXPECT_FALSE(AcceptsGzip("*;q=0"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=bogus"));
  EXPECT_FALSE(AcceptsGzip("gzipper"));
}

TEST_F(ServerTest, KeepAliveTwoRequestsOneConnection) {
  SetPage(MakePage(kBody));
  StartServer();
  Client c(port());
  Reply a = c.Request("GET", "/metrics");
  Reply b = c.Request("GET", "/metrics");
  EXPECT_EQ(a.status, 200u);
  EXPECT_EQ(b.status, 200u);
  EXPECT_EQ(b.body, kBody);
  EXPECT_EQ(b.headers.count("connection"), 0u);  // HTTP/1.1 default: keep-alive
}

TEST_F(ServerTest, PipelinedRequests) {
  SetPage(MakePage(kBody));
  StartServer();
  Client c(port());
  c.SendRaw("GET /metrics HTTP/1.1\r\nHost: t\r\n\r\nGET /health HTTP/1.1\r\nHost: t\r\n\r\n");
  EXPECT_EQ(c.Read().body, kBody);
  EXPECT_EQ(c.Read().body, "OK");
}

TEST_F(ServerTest, ConnectionCloseAndHttp10) {
  SetPage(MakePage(kBody));
  StartServer();
  {
    Client c(port());
    Reply r = c.Request("GET", "/metrics", "Connection: close\r\n");
    EXPECT_EQ(r.status, 200u);
    EXPECT_EQ(r.headers["connection"], "close");
    EXPECT_TRUE(c.ClosedByPeer());
  }
  {
    Client c(port());
    c.SendRaw("GET /metrics HTTP/1.0\r\n\r\n");
    Reply r = c.Read();
    EXPECT_EQ(r.status, 200u);
    EXPECT_EQ(r.body, kBody);
    EXPECT_TRUE(c.ClosedByPeer());
  }
}

TEST(HttpServerListenTest, Ipv6Loopback) {
  HttpServer s(
      {.address = "[::1]:0"}, [] { return MakePage(kBody); }, [](Probe) { return Health{}; });
  Status st = s.Start();
  if (!st.ok()) GTEST_SKIP() << "no IPv6 loopback: " << st.ToString();
  Client c(s.port(), "::1");
  ASSERT_TRUE(c.connected());
  EXPECT_EQ(c.Request("GET", "/metrics").body, kBody);
}

TEST(HttpServerListenTest, AllAddressesServesIpv4AndIpv6) {
  HttpServer s(
      {.address = ":0"}, [] { return MakePage(kBody); }, [](Probe) { return Health{}; });
  Status st = s.Start();
  ASSERT_TRUE(st.ok()) << st.ToString();
  Client v4(s.port(), "127.0.0.1");
  ASSERT_TRUE(v4.connected());
  EXPECT_EQ(v4.Request("GET", "/metrics").body, kBody);
  Client v6(s.port(), "::1");
  if (v6.connected()) {
    EXPECT_EQ(v6.Request("GET", "/metrics").body, kBody);
  }
}

// systemd socket activation: the server serves on a socket someone else bound and listened on.
TEST(HttpServerListenTest, AdoptsAListeningSocket) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(fd, 16), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const uint16_t port = ntohs(addr.sin_port);
  // The address is not used: the socket is.
  HttpServer s(
      {.address = "203.0.113.1:1", .listen_fd = fd}, [] { return MakePage(kBody); },
      [](Probe) {
        return Health{true, "OK"};
      });
  Status st = s.Start();
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(s.port(), port);
  Client c(port);
  ASSERT_TRUE(c.connected());
  EXPECT_EQ(c.Request("GET", "/metrics").body, kBody);
}

TEST(HttpServerListenTest, HostnameResolved) {
  HttpServer s(
      {.address = "localhost:0"}, [] { return MakePage(kBody); }, [](Probe) { return Health{}; });
  Status st = s.Start();
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_NE(s.port(), 0);
}

TEST(HttpServerListenTest, PortInUseNamesAddress) {
  HttpServer a(
      {.address = "127.0.0.1:0"}, [] { return nullptr; }, [](Probe) { return Health{}; });
  ASSERT_TRUE(a.Start().ok());
  const std::string addr = "127.0.0.1:" + std::to_string(a.port());
  HttpServer b(
      {.address = addr}, [] { return nullptr; }, [](Probe) { return Health{}; });
  Status st = b.Start();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), "cannot listen on " + addr + ": Address already in use");
  EXPECT_EQ(b.port(), 0);
}

TEST(HttpServerListenTest, BadAddressFailsStart) {
  HttpServer s(
      {.address = "9400"}, [] { return nullptr; }, [](Probe) { return Health{}; });
  Status st = s.Start();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("\"9400\""), std::string::npos) << st.message();
  HttpServer u(
      {.address = "no-such-host.invalid:0"}, [] { return nullptr; },
      [](Probe) { return Health{}; });
  Status su = u.Start();
  ASSERT_FALSE(su.ok());
  EXPECT_EQ(su.message().rfind("cannot listen on no-such-host.invalid:0: ", 0), 0u) << su.message();
}

TEST(ParseListenAddressTest, Table) {
  struct Case {
    const char* in;
    bool ok;
    const char* host;
    uint16_t port;
  } cases[] = {
      {":9400", true, "", 9400},
      {"0.0.0.0:9400", true, "0.0.0.0", 9400},
      {"127.0.0.1:0", true, "127.0.0.1", 0},
      {"[::1]:9400", true, "::1", 9400},
      {"[::]:65535", true, "::", 65535},
      {"localhost:9400", true, "localhost", 9400},
      {"9400", false, "", 0},
      {"", false, "", 0},
      {":", false, "", 0},
      {":65536", false, "", 0},
      {":-1", false, "", 0},
      {":94x0", false, "", 0},
      {"::1:9400", false, "", 0},
      {"[::1]", false, "", 0},
      {"[::1:9400", false, "", 0},
      {"[]:9400", false, "", 0},
      {"[::1]9400", false, "", 0},
  };
  for (const Case& c : cases) {
    Result<ListenAddress> r = ParseListenAddress(c.in);
    ASSERT_EQ(r.ok(), c.ok) << "\"" << c.in << "\"";
    if (!c.ok) {
      EXPECT_NE(r.status().message().find(std::string("\"") + c.in + "\""), std::string::npos)
          << r.status().message();
      continue;
    }
    EXPECT_EQ(r->host, c.host) << c.in;
    EXPECT_EQ(r->port, c.port) << c.in;
  }
}

}  // namespace
}  // namespace nvmlx::serve