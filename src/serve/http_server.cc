#include "serve/http_server.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <exception>
#include <future>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "serve/basic_auth.h"
#include "serve/http_session.h"
#include "serve/web_tls.h"
#include "util/log.h"
#include "util/mutex.h"
#include "util/periodic_worker.h"
#include "util/strings.h"
#include "util/thread_name.h"

namespace nvmlx::serve {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

// q-value of one Accept-Encoding element's parameters ("q=0.5"); 1 when absent. A malformed
// q counts as 0: refusing gzip is always safe, identity is always acceptable.
double ParseQ(std::string_view params) {
  double q = 1.0;
  while (!params.empty()) {
    size_t semi = params.find(';');
    std::string_view p = util::TrimBlanks(params.substr(0, semi));
    params = semi == std::string_view::npos ? std::string_view() : params.substr(semi + 1);
    if (p.size() < 2 || (p[0] != 'q' && p[0] != 'Q') || p[1] != '=') continue;
    std::string_view v = util::TrimBlanks(p.substr(2));
    double parsed = 0;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), parsed);
    if (ec != std::errc() || end != v.data() + v.size() || !(parsed >= 0 && parsed <= 1)) return 0;
    q = parsed;
  }
  return q;
}

}  // namespace

bool AcceptsGzip(std::string_view header) {
  std::optional<double> gzip_q;
  std::optional<double> star_q;
  while (!header.empty()) {
    size_t comma = header.find(',');
    std::string_view element = header.substr(0, comma);
    header = comma == std::string_view::npos ? std::string_view() : header.substr(comma + 1);
    size_t semi = element.find(';');
    std::string_view coding = util::TrimBlanks(element.substr(0, semi));
    std::string_view params =
        semi == std::string_view::npos ? std::string_view() : element.substr(semi + 1);
    if (util::EqualsIgnoreCase(coding, "gzip") || util::EqualsIgnoreCase(coding, "x-gzip")) {
      if (!gzip_q) gzip_q = ParseQ(params);
    } else if (coding == "*") {
      if (!star_q) star_q = ParseQ(params);
    }
  }
  if (gzip_q) return *gzip_q > 0;
  return star_q && *star_q > 0;
}

Result<ListenAddress> ParseListenAddress(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return InvalidArgument("invalid listen address \"" + std::string(text) +
                           "\": " + std::string(why));
  };
  ListenAddress out;
  std::string_view port;
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos) return bad("missing ']'");
    out.host = std::string(text.substr(1, close - 1));
    if (out.host.empty()) return bad("empty host in brackets");
    std::string_view rest = text.substr(close + 1);
    if (rest.empty() || rest.front() != ':') return bad("missing port");
    port = rest.substr(1);
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return bad("missing port (want host:port or :port)");
    std::string_view host = text.substr(0, colon);
    // An IPv6 literal must be bracketed, as in Go: "::1:9400" is ambiguous.
    if (host.find(':') != std::string_view::npos) return bad("too many colons (bracket IPv6)");
    out.host = std::string(host);
    port = text.substr(colon + 1);
  }
  if (port.empty()) return bad("missing port");
  unsigned value = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc() || end != port.data() + port.size() || value > 65535) {
    return bad("port must be a number from 0 to 65535");
  }
  out.port = static_cast<uint16_t>(value);
  return out;
}

namespace {

constexpr std::string_view kRefusal =
    "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
    "Content-Length: 21\r\nRetry-After: 1\r\nConnection: close\r\n\r\ntoo many connections\n";

// Answers a connection we cannot keep, without blocking: a 503 on plain HTTP (a TLS client
// would read it as garbage: it just sees the close), then close. What the client already sent
// is read first, so that the close is a FIN and not a reset that could destroy the answer.
void RefuseFd(int fd, bool plain) {
  if (plain) {
    char sink[4096];
    for (int i = 0; i < 4 && ::recv(fd, sink, sizeof(sink), MSG_DONTWAIT) > 0; ++i) {
    }
    (void)!::send(fd, kRefusal.data(), kRefusal.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    ::shutdown(fd, SHUT_WR);
  }
  ::close(fd);
}

bool OutOfDescriptors(const error_code& ec) {
  return ec == asio::error::no_descriptors || ec.value() == ENFILE || ec.value() == ENOBUFS ||
         ec.value() == ENOMEM;
}

}  // namespace

int DefaultMaxConnections() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return 1024;
  return static_cast<int>(std::clamp<rlim_t>(rl.rlim_cur / 2, 16, 1024));
}

struct HttpServer::Impl {
  Core core;
  std::atomic<uint16_t> port{0};
  bool running = false;
  // Declared after everything the sessions read: destroyed first (Stop destroys it explicitly),
  // which destroys pending handlers and with them the sessions and their sockets.
  std::unique_ptr<asio::io_context> ioc;
  std::unique_ptr<tcp::acceptor> acceptor;
  std::unique_ptr<asio::steady_timer> accept_retry;  // on the acceptor's strand
  std::vector<std::thread> threads;
  std::unique_ptr<util::PeriodicWorker> reloader;
  // A descriptor kept in reserve: given back when accept() runs out, so that what waits in the
  // backlog can be accepted and refused instead of hanging there.
  int reserve_fd = -1;
  // Accept streaks (the acceptor's strand only): logged once when they start and once when
  // they end. A streak ends only after kStreakQuiet without a failure: descriptors freed by an
  // eviction let one accept through before the table fills again, and ending the streak on that
  // one success logged a line every 10 ms under a flood (hardening round two, row 9).
  static constexpr std::chrono::seconds kStreakQuiet{5};
  bool fd_streak = false;
  uint64_t fd_streak_count = 0;
  std::chrono::steady_clock::time_point fd_failed_at{};
  std::chrono::milliseconds backoff{0};
  bool limit_streak = false;
  uint64_t limit_streak_count = 0;
  std::chrono::steady_clock::time_point limit_refused_at{};
  // The reloader's thread only.
  std::string failed_fingerprint;

  Status Listen();
  Status TryListen(const tcp::endpoint& ep, bool dual_stack);
  void Accept();
  void OnAccept(error_code ec, tcp::socket socket);
  void Refuse(int fd);
  void ShedBacklog();
  void Reload();
};

Status HttpServer::Impl::TryListen(const tcp::endpoint& ep, bool dual_stack) {
  auto a = std::make_unique<tcp::acceptor>(asio::make_strand(*ioc));
  error_code ec;
  a->open(ep.protocol(), ec);
  if (!ec && dual_stack) a->set_option(asio::ip::v6_only(false), ec);
  // SO_REUSEADDR lets a restarted daemon bind while old connections sit in TIME_WAIT; on Linux
  // it does not let two listeners share the port.
  if (!ec) a->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) a->bind(ep, ec);
  if (!ec) a->listen(asio::socket_base::max_listen_connections, ec);
  if (!ec) {
    tcp::endpoint local = a->local_endpoint(ec);
    if (!ec) port = local.port();
  }
  if (ec) {
    return Status(
        ec == asio::error::access_denied ? StatusCode::kNoPermission : StatusCode::kUnavailable,
        "cannot listen on " + core.options.address + ": " + ec.message());
  }
  acceptor = std::move(a);
  return Status::Ok();
}

Status HttpServer::Impl::Listen() {
  const ServerOptions& o = core.options;
  if (o.listen_fd >= 0) {
    // Adopt the socket as it is: systemd bound it and decides its address.
    sockaddr_storage addr = {};
    socklen_t len = sizeof(addr);
    if (getsockname(o.listen_fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      return Unavailable("cannot use the passed socket fd " + std::to_string(o.listen_fd) + ": " +
                         std::strerror(errno));
    }
    auto a = std::make_unique<tcp::acceptor>(asio::make_strand(*ioc));
    error_code ec;
    a->assign(addr.ss_family == AF_INET6 ? tcp::v6() : tcp::v4(), o.listen_fd, ec);
    if (!ec) port = a->local_endpoint(ec).port();
    if (ec) {
      return Unavailable("cannot use the passed socket fd " + std::to_string(o.listen_fd) + ": " +
                         ec.message());
    }
    acceptor = std::move(a);
    return Status::Ok();
  }
  Result<ListenAddress> addr = ParseListenAddress(o.address);
  if (!addr.ok()) return addr.status();
  if (addr->host.empty()) {
    // All addresses: one IPv6 socket that also accepts IPv4 (v4-mapped), as Go does; IPv4 only
    // where the kernel has no IPv6. A port in use is final, not a reason to fall back.
    Status st = TryListen(tcp::endpoint(tcp::v6(), addr->port), true);
    if (st.ok()) return st;
    Status v4 = TryListen(tcp::endpoint(tcp::v4(), addr->port), false);
    if (v4.ok()) {
      log::Info("IPv6 unavailable, listening on IPv4 only", {{"reason", st.message()}});
      return v4;
    }
    return st;
  }
  error_code ec;
  asio::ip::address ip = asio::ip::make_address(addr->host, ec);
  if (!ec) return TryListen(tcp::endpoint(ip, addr->port), false);
  tcp::resolver resolver(*ioc);
  auto results = resolver.resolve(addr->host, std::to_string(addr->port),
                                  tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec) return NotFound("cannot listen on " + o.address + ": " + ec.message());
  Status first = NotFound("cannot listen on " + o.address + ": no address");
  for (const auto& entry : results) {
    Status st = TryListen(entry.endpoint(), false);
    if (st.ok()) return st;
    if (first.code() == StatusCode::kNotFound) first = st;
  }
  return first;
}

void HttpServer::Impl::Accept() {
  acceptor->async_accept(asio::make_strand(*ioc), [this](error_code ec, tcp::socket socket) {
    OnAccept(ec, std::move(socket));
  });
}

void HttpServer::Impl::Refuse(int fd) {
  core.stats.connections_refused.fetch_add(1, std::memory_order_relaxed);
  std::shared_ptr<const WebState> web = core.Web();
  RefuseFd(fd, !(web && web->tls));
}

void HttpServer::Impl::ShedBacklog() {
  // Make room for the next accepts: idle keep-alive connections first. Their closes land on
  // their own strands a moment later, so when any was evicted the backlog waits for the retry
  // (a scraper queued behind an idle flood then gets its answer, not a 503; under ASan the
  // closes were slow enough for the CI run to catch that race). Only when nothing is idle is
  // what waits in the backlog refused, through the reserve descriptor, one at a time.
  int evicted = 0;
  while (evicted < 8 && core.EvictOldestWaiting()) ++evicted;
  if (evicted > 0 || reserve_fd < 0) return;
  ::close(reserve_fd);
  reserve_fd = -1;
  for (int i = 0; i < 64; ++i) {
    int fd = ::accept4(acceptor->native_handle(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) break;
    Refuse(fd);
    ++fd_streak_count;
  }
  reserve_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
}

void HttpServer::Impl::OnAccept(error_code ec, tcp::socket socket) {
  if (ec == asio::error::operation_aborted || core.stopping.load()) return;
  if (ec) {
    core.stats.accept_errors.fetch_add(1, std::memory_order_relaxed);
    const bool fds = OutOfDescriptors(ec);
    if (!fd_streak) {
      fd_streak = true;
      fd_streak_count = 0;
      log::Warn(fds ? "accept failed: out of file descriptors; closing idle connections and "
                      "refusing new ones until descriptors free up (logged once until it recovers)"
                    : "accept failed; retrying with backoff (logged once until it recovers)",
                {{"error", ec.message()},
                 {"max_connections", std::to_string(core.max_connections)},
                 {"open_connections", std::to_string(core.stats.connections_open.load())}});
    }
    ++fd_streak_count;
    fd_failed_at = std::chrono::steady_clock::now();
    if (fds) ShedBacklog();
    // Back off instead of spinning on a full descriptor table: 10 ms, doubling to 500 ms.
    backoff =
        std::clamp(backoff * 2, std::chrono::milliseconds(10), std::chrono::milliseconds(500));
    accept_retry->expires_after(backoff);
    accept_retry->async_wait([this](error_code wec) {
      if (!wec) Accept();
    });
    return;
  }
  const auto now = std::chrono::steady_clock::now();
  if (fd_streak && now - fd_failed_at >= kStreakQuiet) {
    fd_streak = false;
    log::Info("accepting connections again",
              {{"failed_or_refused", std::to_string(fd_streak_count)}});
  }
  backoff = std::chrono::milliseconds(0);
  core.stats.connections_accepted.fetch_add(1, std::memory_order_relaxed);
  const int64_t open = core.stats.connections_open.load(std::memory_order_relaxed);
  // One peer holds at most a quarter of the slots: past that, its own oldest waiting connection
  // makes room, or the new one is refused (hardening round two, row 1).
  error_code peer_ec;
  const tcp::endpoint remote = socket.remote_endpoint(peer_ec);
  if (!peer_ec && core.max_per_peer < core.max_connections) {
    const std::string peer = remote.address().to_string();
    if (core.PeerConnections(peer) >= core.max_per_peer && !core.EvictOldestWaiting(&peer)) {
      core.stats.connections_refused_per_peer.fetch_add(1, std::memory_order_relaxed);
      const std::shared_ptr<const WebState> web = core.Web();
      RefuseFd(socket.release(), !(web && web->tls));
      return Accept();
    }
  }
  // At the limit, a waiting connection makes room (its close is on its way): one that never
  // completed a request header first, then the one kept alive the longest; a few over the limit
  // are tolerated while those closes land, never more.
  const bool over = open >= core.max_connections &&
                    (open >= core.max_connections + 16 || !core.EvictOldestWaiting());
  if (over) {
    if (!limit_streak) {
      limit_streak = true;
      limit_streak_count = 0;
      log::Warn(
          "connection limit reached; refusing new connections with 503 (logged once until "
          "it recovers)",
          {{"max_connections", std::to_string(core.max_connections)}});
    }
    ++limit_streak_count;
    limit_refused_at = now;
    Refuse(socket.release());
    return Accept();
  }
  if (limit_streak && now - limit_refused_at >= kStreakQuiet) {
    limit_streak = false;
    log::Info("below the connection limit again",
              {{"refused", std::to_string(limit_streak_count)}});
  }
  error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  if (core.options.send_buffer_bytes > 0) {
    socket.set_option(asio::socket_base::send_buffer_size(core.options.send_buffer_bytes), ignored);
  }
  StartSession(core, std::move(socket), core.Web());
  Accept();
}

void HttpServer::Impl::Reload() {
  const std::string& path = core.options.web_config_file;
  std::shared_ptr<const WebState> current = core.Web();
  const std::string fp = WebFingerprint(path);
  if ((current && fp == current->fingerprint) || fp == failed_fingerprint) return;
  Result<std::shared_ptr<const WebState>> next = LoadWebState(path);
  if (!next.ok()) {
    failed_fingerprint = fp;  // one log line and one count per broken version of the files
    core.stats.config_reloads_failed.fetch_add(1, std::memory_order_relaxed);
    core.stats.config_last_reload_ok.store(0);
    log::Error("web config rejected; keeping the previous one",
               {{"file", path}, {"error", next.status().message()}});
    return;
  }
  failed_fingerprint.clear();
  core.SetWeb(*next);
  core.stats.config_reloads_ok.fetch_add(1, std::memory_order_relaxed);
  core.stats.config_last_reload_ok.store(1);
  log::Info("web config reloaded", {{"file", path},
                                    {"tls", (*next)->tls ? "true" : "false"},
                                    {"users", std::to_string((*next)->config.users.size())}});
}

HttpServer::HttpServer(ServerOptions options, PageProvider metrics, HealthProvider health,
                       ResourceProvider resources, ActionProvider actions)
    : impl_(std::make_unique<Impl>()) {
  impl_->core.options = std::move(options);
  impl_->core.metrics = std::move(metrics);
  impl_->core.health = std::move(health);
  impl_->core.resources = std::move(resources);
  impl_->core.actions = std::move(actions);
}

HttpServer::~HttpServer() { Stop(); }

Status HttpServer::Start() {
  Impl& s = *impl_;
  if (s.running) return Internal("HTTP server already started");
  Core& core = s.core;
  core.stopping = false;
  core.max_connections =
      core.options.max_connections > 0 ? core.options.max_connections : DefaultMaxConnections();
  core.max_per_peer = std::max(4, core.max_connections / 4);
  if (!core.options.web_config_file.empty()) {
    Result<std::shared_ptr<const WebState>> web = LoadWebState(core.options.web_config_file);
    if (!web.ok()) return web.status();
    core.SetWeb(*web);
    core.auth = std::make_unique<BasicAuth>(&core.stats);
  }
  try {
    s.ioc = std::make_unique<asio::io_context>(std::max(1, core.options.threads));
    Status st = s.Listen();
    if (!st.ok()) {
      s.acceptor.reset();
      s.ioc.reset();
      core.auth.reset();
      return st;
    }
    error_code ignored;
    s.acceptor->non_blocking(true, ignored);  // ShedBacklog's accept4 must never block
    s.reserve_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    s.accept_retry = std::make_unique<asio::steady_timer>(s.acceptor->get_executor());
    asio::post(s.acceptor->get_executor(), [&s] { s.Accept(); });
    s.running = true;
    for (int i = 0; i < std::max(1, core.options.threads); ++i) {
      s.threads.emplace_back([&s] {
        util::NameThisThread("http io");
        // A handler that throws (bad_alloc) must not take the process down with it.
        for (;;) {
          try {
            s.ioc->run();
            return;
          } catch (const std::exception& e) {
            log::Error("HTTP handler failed", {{"error", e.what()}});
          }
        }
      });
    }
    if (!core.options.web_config_file.empty()) {
      s.reloader = std::make_unique<util::PeriodicWorker>(
          util::PeriodicWorker::Options{.name = "web config reloader",
                                        .period = core.options.web_config_poll},
          [&s] { s.Reload(); });
      s.reloader->Start();
    }
  } catch (const std::exception& e) {
    Stop();
    return Internal("cannot start HTTP server on " + core.options.address + ": " + e.what());
  }
  return Status::Ok();
}

void HttpServer::Stop() {
  Impl& s = *impl_;
  if (!s.ioc) return;
  Core& core = s.core;
  const auto deadline = std::chrono::steady_clock::now() + core.options.shutdown_grace;
  core.stopping = true;
  if (s.reloader) s.reloader->Stop();
  // No new connections: close the listener on its strand.
  if (s.acceptor && !s.threads.empty()) {
    auto closed = std::make_shared<std::promise<void>>();
    std::future<void> done = closed->get_future();
    asio::post(s.acceptor->get_executor(), [&s, closed] {
      error_code ignored;
      s.acceptor->close(ignored);
      s.accept_retry->cancel();
      closed->set_value();
    });
    done.wait_until(deadline);
  }
  // Drain: idle and half-read connections close now, responses in flight finish (up to the
  // grace deadline), then everything still open is closed with the io_context.
  for (auto& session : core.All()) session->Interrupt(true);
  while (core.stats.connections_open.load() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (core.auth) core.auth->Stop();  // drops waiting checks (and the sessions they hold)
  s.ioc->stop();
  for (std::thread& t : s.threads) t.join();
  s.threads.clear();
  // No thread runs handlers now: destroying the acceptor and then the io_context closes the
  // listening socket and every open connection (their sessions die with their handlers).
  s.accept_retry.reset();
  s.acceptor.reset();
  s.ioc.reset();
  core.auth.reset();
  s.reloader.reset();
  if (s.reserve_fd >= 0) ::close(s.reserve_fd);
  s.reserve_fd = -1;
  s.running = false;
}

uint16_t HttpServer::port() const { return impl_->port.load(); }

const ServerStats& HttpServer::stats() const { return impl_->core.stats; }

}  // namespace nvmlx::serve
