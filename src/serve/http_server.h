// The HTTP server (Boost.Beast over Asio): /metrics, /health, /ready and /, and any path its
// owner's ResourceProvider answers (the live page, docs/live-page.md).
//
// /health is the liveness probe (the process is alive and publishing), /ready the readiness
// probe (a first page exists); what each means is the HealthProvider's (app/page_store.h).
//
// /metrics serves the latest pre-rendered Page: no NVML or kubelet call, no rendering and no
// compression happens inside a request (the gzip body is made once per collection).
//
// Hostile and heavy clients (docs/web.md lists every limit and what a client sees):
//  - every connection is asynchronous on a pool of io threads (two by default): a slow reader,
//    a slowloris client or a flood holds a socket and a little memory, never a thread;
//  - at most max_connections connections: at the limit a waiting connection is closed to make
//    room — one that never completed a request header (a slowloris, a connection that sent
//    nothing), oldest first, then the one kept alive the longest between requests — else the new
//    one gets a 503 with "Connection: close" (plain HTTP; a TLS listener closes it) and is
//    counted in ServerStats::connections_refused. One source address holds at most a quarter of
//    the slots (its own oldest waiting connection makes room, or the new one is refused:
//    connections_refused_per_peer);
//  - out of file descriptors (EMFILE) the listener backs off, sheds idle connections, refuses
//    what waits in the backlog through a reserved descriptor, logs once per streak and resumes;
//  - read deadline per request, write deadline per response, idle deadline between requests,
//    a bound on requests per connection, on the header block and on the URL;
//  - GET and HEAD only; a body is refused (413); a Transfer-Encoding other than "chunked" is
//    refused with 400 and the connection closed (RFC 9112 §6.1);
//  - at most max_concurrent_scrapes /metrics responses being written at once: one more gets a
//    503 (counted in ServerStats::scrapes_refused). The page is shared, so a scrape costs no
//    rendering; the limit bounds what stuck or slow readers hold (a page reference that keeps an
//    old page alive, a socket send buffer, a connection) per scrape in flight.
// With a web config (config/web_config.h): TLS, basic auth on every path (bcrypt off the io
// threads, a cache of verified credentials, a rate limit on failed ones), extra response
// headers, and the file and its certificates re-read when they change (serve/web_tls.h).
//
// Thread-safety: Start/Stop from one controlling thread. The providers are called from the I/O
// threads concurrently and must be thread-safe themselves. stats() from any thread.
#ifndef NVML_EXPORTER_SERVE_HTTP_SERVER_H_
#define NVML_EXPORTER_SERVE_HTTP_SERVER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "util/status.h"

namespace nvmlx::serve {

// One rendered exposition, immutable once published.
struct Page {
  std::string body;       // text format 0.0.4
  std::string gzip_body;  // the same, gzip-compressed (empty: never offer gzip)
};

struct Health {
  bool ok = false;
  std::string reason;  // body text: "OK" or why not
};

// An answer the server's owner gives for a path the server does not serve itself (app/'s live
// page and its JSON API). The provider runs on an io thread: it must answer from values built
// beforehand (or cheaply from them), never block, never call NVML.
struct Resource {
  int status = 200;
  std::string content_type;
  std::shared_ptr<const std::string> body;  // held until written; null: empty body
  bool no_store = false;                    // Cache-Control: no-store (live data)
  std::string allow;                        // Allow header (a 405's methods); empty: none
};

// Which probe a health request is: /health or /ready.
enum class Probe { kLive, kReady };

struct ServerOptions {
  std::string address = ":9400";  // host:port, [v6]:port, or :port (all addresses, v4 and v6)
  // From the first byte of a request (the TLS handshake included) to its last header byte.
  std::chrono::milliseconds read_timeout{10000};
  // Writing one response; a client that does not read is cut off after this long.
  std::chrono::milliseconds write_timeout{30000};
  // How long a kept-alive connection may sit idle between requests; 0: read_timeout (what Go's
  // http.Server does when IdleTimeout is unset). Raise it above the scrape interval so that
  // Prometheus can reuse its connection. The read_timeout then starts at the first byte.
  std::chrono::milliseconds idle_timeout{0};
  std::size_t max_request_header_bytes = 8 * 1024;  // request line and fields: 431 beyond
  std::size_t max_url_bytes = 4096;                 // request target: 414 beyond
  std::size_t max_request_body_bytes = 0;           // GET/HEAD only: any body is refused (413)
  // Requests served on one connection before it is closed (the last answer says
  // "Connection: close"); bounds how long one client keeps one socket.
  int max_requests_per_connection = 10000;
  // Open connections at most; 0: DefaultMaxConnections() (half the soft RLIMIT_NOFILE, at
  // most 1024), so that the process keeps descriptors for its own files and sockets.
  int max_connections = 0;
  // /metrics responses in flight (from the request's last header byte to the response's last
  // byte written) at most; one more is answered 503 at once. 0: no limit.
  int max_concurrent_scrapes = 0;
  // SO_SNDBUF of each connection (0: the kernel's autotuning, up to tcp_wmem's 4 MiB): bounds the
  // kernel memory that clients which never read can pin (the rest of the page waits in our
  // shared Page, not copied per connection).
  int send_buffer_bytes = 256 * 1024;
  // Stop(): how long in-flight responses may take to finish before every socket is closed.
  std::chrono::milliseconds shutdown_grace{800};
  int threads = 2;
  // --web-config-file (exporter-toolkit format): TLS, basic auth, headers. Empty: plain HTTP.
  std::string web_config_file = {};
  // How often the web config file and its certificate files are checked for changes.
  std::chrono::milliseconds web_config_poll{3000};
  // Leave /health and /ready open without basic auth (kubelet probes).
  bool health_no_auth = false;
  // A listening TCP socket to serve on instead of binding `address` (systemd socket activation,
  // serve/systemd_socket.h); the server owns it from Start on. -1: bind `address`.
  int listen_fd = -1;
};

// The server's own counters, rendered into /metrics by app/ (serve/ stays free of render/).
// Thread-safety: atomics, read and written from any thread.
struct ServerStats {
  std::atomic<uint64_t> connections_accepted{0};
  std::atomic<uint64_t> connections_refused{0};  // at max_connections or out of descriptors
  std::atomic<uint64_t> connections_evicted{0};  // waiting connections closed to make room
  std::atomic<uint64_t> connections_refused_per_peer{0};  // a source at its quarter of the slots
  std::atomic<uint64_t> accept_errors{0};                 // accept() failed (EMFILE, ENFILE, ...)
  std::atomic<int64_t> connections_open{0};
  std::atomic<uint64_t> auth_failures{0};      // 401: missing or wrong credentials
  std::atomic<uint64_t> auth_rate_limited{0};  // 401 without a bcrypt run (rate limit)
  std::atomic<uint64_t> bcrypt_runs{0};        // bcrypt verifications actually computed
  std::atomic<uint64_t> bcrypt_failure_cpu_ns{0};  // CPU of the runs that failed
  std::atomic<uint64_t> tls_handshake_errors{0};
  std::atomic<uint64_t> config_reloads_ok{0};
  std::atomic<uint64_t> config_reloads_failed{0};
  std::atomic<int> config_last_reload_ok{1};  // 0 after a rejected reload, until a good one
  std::atomic<uint64_t> scrapes_refused{0};   // /metrics answered 503 at max_concurrent_scrapes
  std::atomic<int64_t> scrapes_in_flight{0};  // /metrics responses being written now
};

// max_connections when unset: half the soft descriptor limit, at most 1024, at least 16.
int DefaultMaxConnections();

class HttpServer {
 public:
  using PageProvider = std::function<std::shared_ptr<const Page>()>;  // may return null
  using HealthProvider = std::function<Health(Probe)>;
  // `path` without the query, `query` after '?' (may be empty). nullopt: not a path it knows
  // (404; for "/" the built-in link list is served instead).
  using ResourceProvider =
      std::function<std::optional<Resource>(std::string_view path, std::string_view query)>;

  // A POST to `path` (no body): nullopt when the path takes no POST. A POST that carries an
  // Origin header is refused (403) before it is asked: browsers send Origin on every
  // cross-site POST, and a page elsewhere must not act on the daemon; curl and scripts send
  // none. Basic auth, when the web config has users, is checked first, as for every path.
  using ActionProvider = std::function<std::optional<Resource>(std::string_view path)>;

  HttpServer(ServerOptions options, PageProvider metrics, HealthProvider health,
             ResourceProvider resources = nullptr, ActionProvider actions = nullptr);
  ~HttpServer();  // stops
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and starts serving on background threads. Errors name the address.
  Status Start();
  void Stop();
  // The bound port (useful with port 0 in tests). 0 before Start.
  uint16_t port() const;
  const ServerStats& stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Parses ":9400", "0.0.0.0:9400", "127.0.0.1:0", "[::1]:9400", "localhost:9400".
struct ListenAddress {
  std::string host;  // empty: all addresses (dual-stack)
  uint16_t port = 0;
};
Result<ListenAddress> ParseListenAddress(std::string_view text);

// Whether an Accept-Encoding header value admits gzip: "gzip" (or "x-gzip") with q > 0, else
// "*" with q > 0. "gzip;q=0" refuses; an empty or absent header means identity only.
bool AcceptsGzip(std::string_view accept_encoding);

}  // namespace nvmlx::serve

#endif  // NVML_EXPORTER_SERVE_HTTP_SERVER_H_
