// The HTTP server (Boost.Beast over Asio): /metrics, /health, /ready and /.
//
// /health is the liveness probe (the process is alive and publishing), /ready the readiness
// probe (a first page exists); what each means is the HealthProvider's (app/page_store.h).
//
// /metrics serves the latest pre-rendered Page: no NVML or kubelet call, no rendering and no
// compression happens inside a request (the gzip body is made once per collection). GET and HEAD
// are allowed; other methods get 405. Read and write timeouts and a request size limit protect
// the daemon from slow or oversized clients.
//
// Thread-safety: Start/Stop from one controlling thread. The providers are called from the I/O
// threads concurrently and must be thread-safe themselves.
#ifndef NVML_EXPORTER_SERVE_HTTP_SERVER_H_
#define NVML_EXPORTER_SERVE_HTTP_SERVER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
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

// Which probe a health request is: /health or /ready.
enum class Probe { kLive, kReady };

struct ServerOptions {
  std::string address = ":9400";  // host:port, [v6]:port, or :port (all addresses, v4 and v6)
  std::chrono::milliseconds read_timeout{10000};
  std::chrono::milliseconds write_timeout{30000};
  // How long a kept-alive connection may sit idle between requests; 0: read_timeout (what Go's
  // http.Server does when IdleTimeout is unset). Raise it above the scrape interval so that
  // Prometheus can reuse its connection. The read_timeout then starts at the first byte.
  std::chrono::milliseconds idle_timeout{0};
  std::size_t max_request_header_bytes = 8 * 1024;
  std::size_t max_request_body_bytes = 0;  // GET/HEAD only: any body is refused (413)
  int threads = 1;
  // A listening TCP socket to serve on instead of binding `address` (systemd socket activation,
  // serve/systemd_socket.h); the server owns it from Start on. -1: bind `address`.
  int listen_fd = -1;
};

class HttpServer {
 public:
  using PageProvider = std::function<std::shared_ptr<const Page>()>;  // may return null
  using HealthProvider = std::function<Health(Probe)>;

  HttpServer(ServerOptions options, PageProvider metrics, HealthProvider health);
  ~HttpServer();  // stops
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and starts serving on background threads. Errors name the address.
  Status Start();
  void Stop();
  // The bound port (useful with port 0 in tests). 0 before Start.
  uint16_t port() const;

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
