#include "serve/http_server.h"

#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "util/log.h"

namespace nvmlx::serve {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

constexpr std::string_view kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";
constexpr std::string_view kTextContentType = "text/plain; charset=utf-8";
constexpr std::string_view kHtmlContentType = "text/html; charset=utf-8";
constexpr std::string_view kIndexHtml =
    "<html>\n<head><title>nvml-exporter</title></head>\n<body>\n<h1>nvml-exporter</h1>\n"
    "<p><a href=\"./metrics\">Metrics</a></p>\n<p><a href=\"./health\">Health</a></p>\n"
    "<p><a href=\"./ready\">Ready</a></p>\n"
    "</body>\n</html>\n";

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool IEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c; };
           return lower(x) == lower(y);
         });
}

// q-value of one Accept-Encoding element's parameters ("q=0.5"); 1 when absent. A malformed
// q counts as 0: refusing gzip is always safe, identity is always acceptable.
double ParseQ(std::string_view params) {
  double q = 1.0;
  while (!params.empty()) {
    size_t semi = params.find(';');
    std::string_view p = Trim(params.substr(0, semi));
    params = semi == std::string_view::npos ? std::string_view() : params.substr(semi + 1);
    if (p.size() < 2 || (p[0] != 'q' && p[0] != 'Q') || p[1] != '=') continue;
    std::string_view v = Trim(p.substr(2));
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
    std::string_view coding = Trim(element.substr(0, semi));
    std::string_view params =
        semi == std::string_view::npos ? std::string_view() : element.substr(semi + 1);
    if (IEquals(coding, "gzip") || IEquals(coding, "x-gzip")) {
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

// The server's configuration as the sessions see it. Read-only while the server runs, so the
// I/O threads share it without a lock (the providers synchronise themselves).
struct Shared {
  ServerOptions options;
  HttpServer::PageProvider metrics;
  HttpServer::HealthProvider health;
};

// One TCP connection: reads requests one after another (keep-alive), answers each from the
// server's providers, and closes on error, timeout or "Connection: close".
//
// Thread-safety: every handler runs on the connection's strand, so the members need no lock.
// The session keeps itself alive through shared_from_this in its pending handlers.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, const Shared& server) : stream_(std::move(socket)), server_(server) {}

  void Start() { ReadRequest(); }

 private:
  using Response = http::response<http::span_body<const char>>;

  // Between keep-alive requests: wait (idle_timeout) for the first byte, so that the
  // read_timeout measures how long the request itself takes to arrive.
  void WaitForNextRequest() {
    if (buffer_.size() > 0) return ReadRequest();  // pipelined bytes already here
    auto idle = server_.options.idle_timeout.count() > 0 ? server_.options.idle_timeout
                                                         : server_.options.read_timeout;
    stream_.expires_after(idle);
    stream_.async_read_some(buffer_.prepare(2048),
                            beast::bind_front_handler(&Session::OnFirstBytes, shared_from_this()));
  }

  void OnFirstBytes(error_code ec, size_t n) {
    if (ec) return Close();
    buffer_.commit(n);
    ReadRequest();
  }

  void ReadRequest() {
    parser_.emplace();
    const auto& o = server_.options;
    parser_->header_limit(static_cast<uint32_t>(
        std::min<size_t>(o.max_request_header_bytes, std::numeric_limits<uint32_t>::max())));
    parser_->body_limit(o.max_request_body_bytes);
    stream_.expires_after(o.read_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     beast::bind_front_handler(&Session::OnRead, shared_from_this()));
  }

  void OnRead(error_code ec, size_t /*bytes*/) {
    if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
      return SendError(http::status::request_header_fields_too_large, "request header too large\n");
    }
    if (ec == http::error::body_limit) {
      return SendError(http::status::payload_too_large, "request body not allowed\n");
    }
    // A timeout has already closed the socket; EOF and resets need no answer either.
    if (ec == beast::error::timeout || ec == http::error::end_of_stream || ec == asio::error::eof ||
        ec == asio::error::connection_reset || ec == asio::error::operation_aborted ||
        ec == http::error::partial_message) {
      return Close();
    }
    if (ec) return SendError(http::status::bad_request, "bad request\n");
    Handle(parser_->get());
  }

  void Handle(const http::request<http::string_body>& req) {
    std::string_view target(req.target().data(), req.target().size());
    target = target.substr(0, target.find('?'));
    const bool head = req.method() == http::verb::head;
    const bool allowed = head || req.method() == http::verb::get;
    Prepare(req.version(), req.keep_alive());

    if (target != "/metrics" && target != "/health" && target != "/ready" && target != "/") {
      return Send(http::status::not_found, kTextContentType, "404 page not found\n", head);
    }
    if (!allowed) {
      res_.set(http::field::allow, "GET, HEAD");
      return Send(http::status::method_not_allowed, kTextContentType, "method not allowed\n",
                  false);
    }
    if (target == "/") return Send(http::status::ok, kHtmlContentType, kIndexHtml, head);
    if (target == "/health" || target == "/ready") {
      const Probe probe = target == "/health" ? Probe::kLive : Probe::kReady;
      Health h = server_.health ? server_.health(probe) : Health{true, "OK"};
      owned_ = h.reason.empty() ? std::string(h.ok ? "OK" : "not ready") : std::move(h.reason);
      return Send(h.ok ? http::status::ok : http::status::service_unavailable, kTextContentType,
                  owned_, head);
    }
    // /metrics. The page stays alive in page_ until the write completes; the body is sent
    // straight from its bytes, never copied.
    page_ = server_.metrics ? server_.metrics() : nullptr;
    if (!page_) {
      return Send(http::status::service_unavailable, kTextContentType, "no collection yet\n", head);
    }
    res_.set(http::field::vary, "Accept-Encoding");
    std::string_view body = page_->body;
    if (!page_->gzip_body.empty() && ClientAcceptsGzip(req)) {
      res_.set(http::field::content_encoding, "gzip");
      body = page_->gzip_body;
    }
    Send(http::status::ok, kMetricsContentType, body, head);
  }

  static bool ClientAcceptsGzip(const http::request<http::string_body>& req) {
    // Several Accept-Encoding fields are one comma-separated list (RFC 9110 §5.3).
    std::string joined;
    for (const auto& f : req) {
      if (f.name() != http::field::accept_encoding) continue;
      if (!joined.empty()) joined.push_back(',');
      joined.append(f.value().data(), f.value().size());
    }
    return AcceptsGzip(joined);
  }

  void Prepare(unsigned version, bool keep_alive) {
    res_ = Response();
    res_.version(version == 10 ? 10 : 11);
    res_.keep_alive(keep_alive);
  }

  void SendError(http::status status, std::string_view text) {
    Prepare(11, false);
    Send(status, kTextContentType, text, false);
  }

  // `body` must outlive the write: static text, owned_, or page_'s bytes.
  void Send(http::status status, std::string_view content_type, std::string_view body, bool head) {
    res_.result(status);
    res_.set(http::field::content_type,
             beast::string_view(content_type.data(), content_type.size()));
    // HEAD: the same Content-Length as GET, and no body bytes.
    res_.content_length(body.size());
    res_.body() =
        head ? beast::span<const char>() : beast::span<const char>(body.data(), body.size());
    stream_.expires_after(server_.options.write_timeout);
    http::async_write(stream_, res_,
                      beast::bind_front_handler(&Session::OnWrite, shared_from_this()));
  }

  void OnWrite(error_code ec, size_t /*bytes*/) {
    page_.reset();
    owned_.clear();
    if (ec) return Close();
    if (!res_.keep_alive()) {
      // Half-close so the client reads the whole response before it sees the end.
      error_code ignored;
      stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
      return;
    }
    WaitForNextRequest();
  }

  void Close() {
    error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  // string_body so that body_limit applies (0: any body is 413); GET/HEAD bodies are unused.
  std::optional<http::request_parser<http::string_body>> parser_;
  Response res_;
  std::shared_ptr<const Page> page_;  // the page being written
  std::string owned_;                 // a computed body being written (/health)
  const Shared& server_;
};

}  // namespace

struct HttpServer::Impl {
  Shared shared;  // what the sessions read; never changed while running
  std::atomic<uint16_t> port{0};
  bool running = false;
  // Declared after everything the sessions read: destroyed first (Stop destroys it explicitly),
  // which destroys pending handlers and with them the sessions and their sockets.
  std::unique_ptr<asio::io_context> ioc;
  std::unique_ptr<tcp::acceptor> acceptor;
  std::unique_ptr<asio::steady_timer> accept_retry;
  std::vector<std::thread> threads;

  Status Listen();
  Status TryListen(const tcp::endpoint& ep, bool dual_stack);
  void Accept();
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
        "cannot listen on " + shared.options.address + ": " + ec.message());
  }
  acceptor = std::move(a);
  return Status::Ok();
}

Status HttpServer::Impl::Listen() {
  if (shared.options.listen_fd >= 0) {
    // Adopt the socket as it is: systemd bound it and decides its address.
    sockaddr_storage addr = {};
    socklen_t len = sizeof(addr);
    if (getsockname(shared.options.listen_fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      return Unavailable("cannot use the passed socket fd " +
                         std::to_string(shared.options.listen_fd) + ": " + std::strerror(errno));
    }
    auto a = std::make_unique<tcp::acceptor>(asio::make_strand(*ioc));
    error_code ec;
    a->assign(addr.ss_family == AF_INET6 ? tcp::v6() : tcp::v4(), shared.options.listen_fd, ec);
    if (!ec) port = a->local_endpoint(ec).port();
    if (ec) {
      return Unavailable("cannot use the passed socket fd " +
                         std::to_string(shared.options.listen_fd) + ": " + ec.message());
    }
    acceptor = std::move(a);
    return Status::Ok();
  }
  Result<ListenAddress> addr = ParseListenAddress(shared.options.address);
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
  if (ec) return NotFound("cannot listen on " + shared.options.address + ": " + ec.message());
  Status first = NotFound("cannot listen on " + shared.options.address + ": no address");
  for (const auto& entry : results) {
    Status st = TryListen(entry.endpoint(), false);
    if (st.ok()) return st;
    if (first.code() == StatusCode::kNotFound) first = st;
  }
  return first;
}

void HttpServer::Impl::Accept() {
  acceptor->async_accept(asio::make_strand(*ioc), [this](error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted) return;
    if (ec) {
      // EMFILE and friends: retry later instead of spinning on a full descriptor table.
      log::Warn("accept failed", {{"error", ec.message()}});
      accept_retry->expires_after(std::chrono::milliseconds(100));
      accept_retry->async_wait([this](error_code wec) {
        if (!wec) Accept();
      });
      return;
    }
    error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    std::make_shared<Session>(std::move(socket), shared)->Start();
    Accept();
  });
}

HttpServer::HttpServer(ServerOptions options, PageProvider metrics, HealthProvider health)
    : impl_(std::make_unique<Impl>()) {
  impl_->shared.options = std::move(options);
  impl_->shared.metrics = std::move(metrics);
  impl_->shared.health = std::move(health);
}

HttpServer::~HttpServer() { Stop(); }

Status HttpServer::Start() {
  Impl& s = *impl_;
  if (s.running) return Internal("HTTP server already started");
  try {
    s.ioc = std::make_unique<asio::io_context>(std::max(1, s.shared.options.threads));
    Status st = s.Listen();
    if (!st.ok()) {
      s.acceptor.reset();
      s.ioc.reset();
      return st;
    }
    s.accept_retry = std::make_unique<asio::steady_timer>(*s.ioc);
    s.Accept();
    s.running = true;
    for (int i = 0; i < std::max(1, s.shared.options.threads); ++i) {
      s.threads.emplace_back([&s] {
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
  } catch (const std::exception& e) {
    Stop();
    return Internal("cannot start HTTP server on " + s.shared.options.address + ": " + e.what());
  }
  return Status::Ok();
}

void HttpServer::Stop() {
  Impl& s = *impl_;
  if (!s.ioc) return;
  s.ioc->stop();
  for (std::thread& t : s.threads) t.join();
  s.threads.clear();
  // No thread runs handlers now: destroying the acceptor and then the io_context closes the
  // listening socket and every open connection (their sessions die with their handlers).
  s.accept_retry.reset();
  s.acceptor.reset();
  s.ioc.reset();
  s.running = false;
}

uint16_t HttpServer::port() const { return impl_->port.load(); }

}  // namespace nvmlx::serve
