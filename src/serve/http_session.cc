#include "serve/http_session.h"

#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <string>
#include <type_traits>
#include <utility>

#include "util/log.h"
#include "util/strings.h"

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

enum class Phase { kHandshake, kIdle, kReading, kAuth, kWriting, kClosed };

int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

template <class Stream>
class Session : public SessionBase, public std::enable_shared_from_this<Session<Stream>> {
 public:
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

  template <class... StreamArgs>
  Session(Core& core, std::shared_ptr<const WebState> web, StreamArgs&&... args)
      : stream_(std::forward<StreamArgs>(args)...),
        executor_(stream_.get_executor()),
        core_(core),
        web_(std::move(web)) {
    core_.stats.connections_open.fetch_add(1, std::memory_order_relaxed);
  }
  ~Session() override {
    ReleaseScrapeSlot();  // a write that never completed (the server stopped meanwhile)
    if (id_ != 0) core_.Unregister(id_, peer);
    core_.stats.connections_open.fetch_sub(1, std::memory_order_relaxed);
  }

  void Start() {
    error_code ec;
    const tcp::endpoint remote = Lowest().socket().remote_endpoint(ec);
    if (!ec) peer = remote.address().to_string();
    waiting_since.store(SteadyNowNs(), std::memory_order_relaxed);  // its first request
    id_ = core_.Register(this->weak_from_this(), this, peer);
    // The whole first request, TLS handshake included, within read_timeout of the accept.
    Lowest().expires_after(core_.options.read_timeout);
    if constexpr (kTls) {
      phase_ = Phase::kHandshake;
      stream_.async_handshake(
          asio::ssl::stream_base::server,
          beast::bind_front_handler(&Session::OnHandshake, this->shared_from_this()));
    } else {
      WaitForRequest(true);
    }
  }

  void Interrupt(bool stopping) override {
    asio::post(executor_,
               [self = this->shared_from_this(), stopping] { self->OnInterrupt(stopping); });
  }

 private:
  using Response = http::response<http::span_body<const char>>;

  beast::tcp_stream& Lowest() { return beast::get_lowest_layer(stream_); }

  void OnInterrupt(bool stopping) {
    if (phase_ == Phase::kClosed) return;
    const bool waiting =
        phase_ == Phase::kIdle || phase_ == Phase::kReading || phase_ == Phase::kHandshake;
    if (stopping) {
      if (waiting) Close();  // a request in auth or being written finishes, then closes
      return;
    }
    if (waiting) {  // not once its request is being authenticated or answered
      core_.stats.connections_evicted.fetch_add(1, std::memory_order_relaxed);
      Close();
    }
  }

  void OnHandshake(error_code ec) {
    if (!ec && !web_->config.tls.client_allowed_sans.empty() &&
        !PeerHasAllowedSan(stream_.native_handle(), web_->config.tls.client_allowed_sans)) {
      ec = asio::error::access_denied;
    }
    if (ec) {
      core_.stats.tls_handshake_errors.fetch_add(1, std::memory_order_relaxed);
      log::Debug("TLS handshake failed", {{"error", ec.message()}});
      return Close();
    }
    WaitForRequest(true);
  }

  // Wait for the first byte of the next request: a session in this state is idle and may be
  // evicted at the connection limit. The first request keeps the deadline set at accept;
  // later ones wait up to idle_timeout.
  void WaitForRequest(bool first) {
    if (core_.stopping.load()) return Close();
    if (buffer_.size() > 0) return ReadRequest(true);  // pipelined bytes already here
    phase_ = Phase::kIdle;
    waiting_since.store(SteadyNowNs(), std::memory_order_relaxed);
    if (!first) {
      const auto& o = core_.options;
      Lowest().expires_after(o.idle_timeout.count() > 0 ? o.idle_timeout : o.read_timeout);
    }
    stream_.async_read_some(buffer_.prepare(2048),
                            [self = this->shared_from_this(), first](error_code ec, size_t n) {
                              self->OnFirstBytes(ec, n, first);
                            });
  }

  void OnFirstBytes(error_code ec, size_t n, bool first) {
    // Still waiting (evictable) while the header arrives: a client that sends half of one and
    // stops must not hold its slot against new connections.
    if (ec || phase_ == Phase::kClosed) return Close();
    buffer_.commit(n);
    ReadRequest(!first);
  }

  void ReadRequest(bool reset_deadline) {
    phase_ = Phase::kReading;
    parser_.emplace();
    ConfigureParser(core_.options, &*parser_);
    if (reset_deadline) Lowest().expires_after(core_.options.read_timeout);
    http::async_read_header(
        stream_, buffer_, *parser_,
        beast::bind_front_handler(&Session::OnHeader, this->shared_from_this()));
  }

  void OnHeader(error_code ec, size_t /*bytes*/) {
    waiting_since.store(0, std::memory_order_relaxed);
    if (phase_ == Phase::kClosed) return;
    if (!ec) completed_request.store(true, std::memory_order_relaxed);
    if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
      return SendError(http::status::request_header_fields_too_large, "request header too large\n");
    }
    if (ec == http::error::body_limit) {
      return SendError(http::status::payload_too_large, "request body not allowed\n");
    }
    // A timeout has already closed the socket; EOF and resets need no answer either.
    if (ec == beast::error::timeout || ec == http::error::end_of_stream || ec == asio::error::eof ||
        ec == asio::error::connection_reset || ec == asio::error::operation_aborted ||
        ec == http::error::partial_message || ec == asio::ssl::error::stream_truncated) {
      return Close();
    }
    if (ec) return SendError(http::status::bad_request, "bad request\n");
    if (std::optional<Refusal> r = CheckRequestHead(core_.options, *parser_)) {
      return SendError(r->status, r->text);
    }
    const auto& req = parser_->get();
    ++requests_;
    web_now_ = core_.Web();
    std::string_view target(req.target().data(), req.target().size());
    target = target.substr(0, target.find('?'));
    if (web_now_ && !core_.AllowRate(*web_now_)) {
      Prepare(req.version(), req.keep_alive());
      return Send(http::status::too_many_requests, kTextContentType, "Too Many Requests\n",
                  req.method() == http::verb::head);
    }
    const bool probe = target == "/health" || target == "/ready";
    if (web_now_ && !web_now_->config.users.empty() && core_.auth &&
        !(probe && core_.options.health_no_auth)) {
      auto it = req.find(http::field::authorization);
      std::string_view authz = it == req.end()
                                   ? std::string_view()
                                   : std::string_view(it->value().data(), it->value().size());
      BasicAuth::Pending pending;
      std::optional<BasicAuth::Verdict> v =
          core_.auth->Check(web_now_->config.users, authz, peer, &pending);
      if (v) return OnAuth(*v);
      phase_ = Phase::kAuth;
      auto self = this->shared_from_this();
      core_.auth->Verify(std::move(pending), [self](BasicAuth::Verdict verdict) {
        asio::post(self->executor_, [self, verdict] { self->OnAuth(verdict); });
      });
      return;
    }
    Handle();
  }

  void OnAuth(BasicAuth::Verdict v) {
    if (phase_ == Phase::kClosed) return;
    if (v == BasicAuth::Verdict::kOk) return Handle();
    core_.stats.auth_failures.fetch_add(1, std::memory_order_relaxed);
    if (v == BasicAuth::Verdict::kRateLimited) {
      core_.stats.auth_rate_limited.fetch_add(1, std::memory_order_relaxed);
    }
    const auto& req = parser_->get();
    Prepare(req.version(), req.keep_alive());
    res_.set(http::field::www_authenticate, "Basic");
    Send(http::status::unauthorized, kTextContentType, "Unauthorized\n",
         req.method() == http::verb::head);
  }

  void Handle() {
    const auto& req = parser_->get();
    std::string_view target(req.target().data(), req.target().size());
    target = target.substr(0, target.find('?'));
    const bool head = req.method() == http::verb::head;
    const bool allowed = head || req.method() == http::verb::get;
    Prepare(req.version(), req.keep_alive());

    const bool builtin =
        target == "/metrics" || target == "/health" || target == "/ready" || target == "/";
    std::optional<Resource> resource;
    if (req.method() == http::verb::post && core_.actions && !builtin) {
      if (req.find(http::field::origin) != req.end()) {
        return Send(http::status::forbidden, kTextContentType,
                    "cross-origin POST refused (send no Origin header)\n", false);
      }
      resource = core_.actions(target);
      if (resource) return SendResource(std::move(*resource), false);
    }
    if (target != "/metrics" && target != "/health" && target != "/ready" && core_.resources) {
      std::string_view full(req.target().data(), req.target().size());
      const size_t q = full.find('?');
      resource = core_.resources(
          target, q == std::string_view::npos ? std::string_view() : full.substr(q + 1));
    }
    if (!builtin && !resource) {
      return Send(http::status::not_found, kTextContentType, "404 page not found\n", head);
    }
    if (!allowed) {
      res_.set(http::field::allow, resource && !resource->allow.empty()
                                       ? beast::string_view(resource->allow)
                                       : beast::string_view("GET, HEAD"));
      return Send(http::status::method_not_allowed, kTextContentType, "method not allowed\n",
                  false);
    }
    if (resource) return SendResource(std::move(*resource), head);
    if (target == "/") return Send(http::status::ok, kHtmlContentType, kIndexHtml, head);
    if (target == "/health" || target == "/ready") {
      const Probe probe = target == "/health" ? Probe::kLive : Probe::kReady;
      Health h = core_.health ? core_.health(probe) : Health{true, "OK"};
      owned_ = h.reason.empty() ? std::string(h.ok ? "OK" : "not ready") : std::move(h.reason);
      return Send(h.ok ? http::status::ok : http::status::service_unavailable, kTextContentType,
                  owned_, head);
    }
    // /metrics. The page stays alive in page_ until the write completes; the body is sent
    // straight from its bytes, never copied.
    if (!AcquireScrapeSlot()) {
      return Send(http::status::service_unavailable, kTextContentType,
                  "too many concurrent scrapes (--max-concurrent-scrapes)\n", head);
    }
    page_ = core_.metrics ? core_.metrics() : nullptr;
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

  // Takes one of the max_concurrent_scrapes slots for the response about to be written; false
  // (counted as refused) when none is free. OnWrite or the session's end gives it back.
  bool AcquireScrapeSlot() {
    ServerStats& st = core_.stats;
    const int64_t limit = core_.options.max_concurrent_scrapes;
    int64_t n = st.scrapes_in_flight.load(std::memory_order_relaxed);
    do {
      if (limit > 0 && n >= limit) {
        st.scrapes_refused.fetch_add(1, std::memory_order_relaxed);
        return false;
      }
    } while (!st.scrapes_in_flight.compare_exchange_weak(n, n + 1, std::memory_order_relaxed));
    scrape_slot_ = true;
    return true;
  }
  void ReleaseScrapeSlot() {
    if (!scrape_slot_) return;
    scrape_slot_ = false;
    core_.stats.scrapes_in_flight.fetch_sub(1, std::memory_order_relaxed);
  }

  void SendResource(Resource resource, bool head) {
    // The body stays alive in resource_ until the write completes.
    resource_ = std::move(resource.body);
    if (resource.no_store) res_.set(http::field::cache_control, "no-store");
    if (!resource.allow.empty()) res_.set(http::field::allow, resource.allow);
    Send(static_cast<http::status>(resource.status), resource.content_type,
         resource_ ? std::string_view(*resource_) : std::string_view(), head);
  }

  static bool ClientAcceptsGzip(const http::request<http::empty_body>& req) {
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
    res_.keep_alive(keep_alive && requests_ < core_.options.max_requests_per_connection &&
                    !core_.stopping.load());
    if (web_now_) {
      for (const auto& [name, value] : web_now_->config.headers) res_.set(name, value);
    }
  }

  void SendError(http::status status, std::string_view text) {
    web_now_ = core_.Web();
    Prepare(11, false);
    Send(status, kTextContentType, text, false);
  }

  // `body` must outlive the write: static text, owned_, or page_'s bytes.
  void Send(http::status status, std::string_view content_type, std::string_view body, bool head) {
    phase_ = Phase::kWriting;
    res_.result(status);
    res_.set(http::field::content_type,
             beast::string_view(content_type.data(), content_type.size()));
    // HEAD: the same Content-Length as GET, and no body bytes.
    res_.content_length(body.size());
    res_.body() =
        head ? beast::span<const char>() : beast::span<const char>(body.data(), body.size());
    Lowest().expires_after(core_.options.write_timeout);
    http::async_write(stream_, res_,
                      beast::bind_front_handler(&Session::OnWrite, this->shared_from_this()));
  }

  void OnWrite(error_code ec, size_t /*bytes*/) {
    ReleaseScrapeSlot();
    page_.reset();
    resource_.reset();
    owned_.clear();
    web_now_.reset();
    if (ec || phase_ == Phase::kClosed) return Close();
    if (!res_.keep_alive() || core_.stopping.load()) {
      phase_ = Phase::kClosed;
      // Half-close so the client reads the whole response before it sees the end; the socket
      // closes when the session goes (no handler is pending any more).
      error_code ignored;
      if constexpr (!kTls) Lowest().socket().shutdown(tcp::socket::shutdown_send, ignored);
      if constexpr (kTls) Lowest().close();
      return;
    }
    WaitForRequest(false);
  }

  void Close() {
    phase_ = Phase::kClosed;
    waiting_since.store(0, std::memory_order_relaxed);
    error_code ignored;
    Lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
    Lowest().close();
  }

  Stream stream_;
  // The connection's strand, copied once: Interrupt and the bcrypt worker post to it from other
  // threads without touching stream_.
  const asio::any_io_executor executor_;
  Core& core_;
  const std::shared_ptr<const WebState> web_;  // the config the connection was accepted under
  std::shared_ptr<const WebState> web_now_;    // the config of the request being answered
  uint64_t id_ = 0;
  Phase phase_ = Phase::kIdle;
  int requests_ = 0;
  beast::flat_buffer buffer_;
  // Headers only: GET and HEAD have no body, and one announced is refused (413).
  std::optional<http::request_parser<http::empty_body>> parser_;
  Response res_;
  std::shared_ptr<const Page> page_;             // the page being written
  std::string owned_;                            // a computed body being written (/health)
  std::shared_ptr<const std::string> resource_;  // a resource's body being written
  bool scrape_slot_ = false;                     // holds one of max_concurrent_scrapes
};

}  // namespace

void ConfigureParser(const ServerOptions& o, http::request_parser<http::empty_body>* parser) {
  parser->header_limit(static_cast<uint32_t>(
      std::min<size_t>(o.max_request_header_bytes, std::numeric_limits<uint32_t>::max())));
  parser->body_limit(o.max_request_body_bytes);
}

std::optional<Refusal> CheckRequestHead(const ServerOptions& o,
                                        const http::request_parser<http::empty_body>& parser) {
  const auto& req = parser.get();
  int te_fields = 0;
  bool te_chunked = false;
  for (const auto& f : req) {
    if (f.name() != http::field::transfer_encoding) continue;
    ++te_fields;
    te_chunked = util::EqualsIgnoreCase(
        util::TrimBlanks(std::string_view(f.value().data(), f.value().size())), "chunked");
  }
  if (te_fields > 0 && (te_fields > 1 || !te_chunked || req.count(http::field::content_length))) {
    return Refusal{http::status::bad_request, "unsupported Transfer-Encoding\n"};
  }
  // RFC 9112 §3.2: an HTTP/1.1 request without Host, or any request with more than one, is
  // answered 400 (a proxy and we could otherwise disagree on which host a request was for).
  const size_t hosts = req.count(http::field::host);
  if (hosts > 1 || (hosts == 0 && req.version() >= 11)) {
    return Refusal{http::status::bad_request,
                   hosts > 1 ? "more than one Host header\n" : "missing Host header\n"};
  }
  if (req.target().size() > o.max_url_bytes) {
    return Refusal{http::status::uri_too_long, "URI too long\n"};
  }
  // GET and HEAD carry no body; the connection cannot be reused past an unread one.
  if (!parser.is_done()) {
    return Refusal{http::status::payload_too_large, "request body not allowed\n"};
  }
  return std::nullopt;
}

void StartSession(Core& core, tcp::socket socket, std::shared_ptr<const WebState> web) {
  if (web && web->tls) {
    auto tls = web->tls;
    std::make_shared<Session<beast::ssl_stream<beast::tcp_stream>>>(core, std::move(web),
                                                                    std::move(socket), *tls)
        ->Start();
  } else {
    std::make_shared<Session<beast::tcp_stream>>(core, std::move(web), std::move(socket))->Start();
  }
}

}  // namespace nvmlx::serve
