// Internal to serve/: the state the HTTP sessions share with the listener (Core), what the
// listener knows of a session (SessionBase), the session factory, and the request checks the
// sessions apply (exposed so that the fuzz target drives the same parser set-up and checks).
//
// Thread-safety: Core's options and providers are read-only while the server runs; its other
// members are atomics or guarded by Core::mu. A session's handlers run on its strand.
#ifndef NVML_EXPORTER_SERVE_HTTP_SESSION_H_
#define NVML_EXPORTER_SERVE_HTTP_SESSION_H_

#include <algorithm>
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "serve/basic_auth.h"
#include "serve/http_server.h"
#include "serve/web_tls.h"
#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace nvmlx::serve {

// q-value of one Accept-Encoding element's parameters ("q=0.5"); 1 when absent. A malformed

// What the registry knows of a session, whatever its stream (plain or TLS).
class SessionBase {
 public:
  virtual ~SessionBase() = default;
  // From any thread; runs on the session's strand. stopping: Stop() is draining (close unless
  // a response is in flight, which then ends the connection); else an eviction (close only if
  // still waiting for a request).
  virtual void Interrupt(bool stopping) = 0;
  // Steady-clock nanoseconds since when the session waits for a request or reads its header
  // (TLS handshake included): it may then be evicted at the connection limit. 0 while busy
  // (authenticating, writing) or closed.
  std::atomic<int64_t> waiting_since{0};
  // A request header completed on this connection: a scraper, not a slowloris. Evicted only
  // after every connection that never completed one.
  std::atomic<bool> completed_request{false};
  // The peer's address (per-source limit); set before Register, then read-only.
  std::string peer;
};

// Everything the sessions share. The options and providers are read-only while the server
// runs; the rest is atomics or guarded by mu.
struct Core {
  ServerOptions options;
  HttpServer::PageProvider metrics;
  HttpServer::HealthProvider health;
  HttpServer::ResourceProvider resources;  // may be null
  HttpServer::ActionProvider actions;      // may be null
  ServerStats stats;
  int max_connections = 0;
  int max_per_peer = 0;  // a quarter of max_connections, at least 4
  std::atomic<bool> stopping{false};
  std::unique_ptr<BasicAuth> auth;  // with a web config; its worker outlives every session

  // Lifetimes under mu (hardening round three, docs/faults.md §4): a session's destructor takes
  // mu (Unregister), so no code here may release the last reference to a session, or to anything
  // else whose destructor runs code, while it holds mu. Strong references taken under mu live in
  // variables declared before the lock, and are released after it. util::Mutex aborts with a
  // stack trace if this is ever broken, instead of hanging the server for good.
  util::Mutex mu;
  // What the registry holds of a session: a weak reference, for the one it acts on, and the raw
  // pointer, for reading its atomics and peer under mu without taking (and then dropping) a
  // strong reference. The raw pointer is valid while the entry exists: ~Session's first step is
  // Unregister, which needs mu, so a session cannot finish dying while mu is held here.
  struct Registered {
    std::weak_ptr<SessionBase> ref;
    SessionBase* raw = nullptr;
  };
  std::unordered_map<uint64_t, Registered> sessions NVMLX_GUARDED_BY(mu);
  std::unordered_map<std::string, int> per_peer NVMLX_GUARDED_BY(mu);  // open sessions per address
  uint64_t next_id NVMLX_GUARDED_BY(mu) = 1;
  std::shared_ptr<const WebState> web NVMLX_GUARDED_BY(mu);
  // rate_limit of the web config (token bucket over every request).
  double rate_tokens NVMLX_GUARDED_BY(mu) = 0;
  std::chrono::steady_clock::time_point rate_at NVMLX_GUARDED_BY(mu);

  // `self` is `s` itself, alive until it calls Unregister.
  uint64_t Register(std::weak_ptr<SessionBase> s, SessionBase* self, const std::string& peer)
      NVMLX_EXCLUDES(mu) {
    util::MutexLock l(&mu);
    const uint64_t id = next_id++;
    sessions.emplace(id, Registered{std::move(s), self});
    ++per_peer[peer];
    return id;
  }
  void Unregister(uint64_t id, const std::string& peer) NVMLX_EXCLUDES(mu) {
    util::MutexLock l(&mu);
    sessions.erase(id);  // a weak reference: erasing it destroys no session
    if (auto it = per_peer.find(peer); it != per_peer.end() && --it->second <= 0) {
      per_peer.erase(it);
    }
  }
  int PeerConnections(const std::string& peer) NVMLX_EXCLUDES(mu) {
    util::MutexLock l(&mu);
    auto it = per_peer.find(peer);
    return it == per_peer.end() ? 0 : it->second;
  }
  std::shared_ptr<const WebState> Web() NVMLX_EXCLUDES(mu) {
    util::MutexLock l(&mu);
    return web;
  }
  void SetWeb(std::shared_ptr<const WebState> w) NVMLX_EXCLUDES(mu) {
    std::shared_ptr<const WebState> previous;  // released after mu: its TLS context runs OpenSSL
    util::MutexLock l(&mu);
    if (!web || web->config.rate_limit_burst != w->config.rate_limit_burst) {
      rate_tokens = w->config.rate_limit_burst;
      rate_at = std::chrono::steady_clock::now();
    }
    previous = std::exchange(web, std::move(w));
  }
  // Every live session. The vector is declared before the lock, so the references it takes are
  // released (by the caller) after mu.
  std::vector<std::shared_ptr<SessionBase>> All() NVMLX_EXCLUDES(mu) {
    std::vector<std::shared_ptr<SessionBase>> out;
    util::MutexLock l(&mu);
    out.reserve(sessions.size());
    for (auto& [id, e] : sessions) {
      if (auto s = e.ref.lock()) out.push_back(std::move(s));  // moved out: none dies here
    }
    return out;
  }
  // A connection younger than this that has not completed a request yet is not suspected of
  // holding its slot: a scraper's request arrives within milliseconds of its connect.
  static constexpr int64_t kGraceNs = 1'000'000'000;
  // Asks a waiting session to close to make room (hardening round two, row 1), in this order:
  // one that has waited over a second without completing a request header (a slowloris, or a
  // connection that never sent anything), then one kept alive between requests, then a younger
  // one that has not completed a request yet; the oldest first within each; only `peer`'s when
  // given. False when none waits: every session is authenticating or writing a response.
  //
  // The ranking reads each session through its raw pointer: no strong reference is taken for the
  // sessions passed over, so none can be the last one and die under mu (the round-three deadlock:
  // ~Session -> Unregister -> mu, on the thread that holds mu). The one chosen is locked into
  // `victim`, declared before the lock and released after it.
  bool EvictOldestWaiting(const std::string* peer = nullptr) NVMLX_EXCLUDES(mu) {
    std::shared_ptr<SessionBase> victim;
    const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::steady_clock::now().time_since_epoch())
                            .count();
    {
      util::MutexLock l(&mu);
      // Rank: (tier, waiting since), lowest first.
      std::pair<int, int64_t> best_rank{3, std::numeric_limits<int64_t>::max()};
      Registered* best = nullptr;
      for (auto& [id, e] : sessions) {
        const SessionBase& s = *e.raw;
        if (peer != nullptr && s.peer != *peer) continue;
        const int64_t since = s.waiting_since.load(std::memory_order_relaxed);
        if (since == 0) continue;
        const int tier = s.completed_request.load(std::memory_order_relaxed) ? 1
                         : now - since >= kGraceNs                           ? 0
                                                                             : 2;
        const std::pair<int, int64_t> rank{tier, since};
        if (best == nullptr || rank < best_rank) {
          best_rank = rank;
          best = &e;
        }
      }
      if (best == nullptr) return false;
      // Not twice: it no longer counts as waiting while its close is on the way.
      best->raw->waiting_since.store(0, std::memory_order_relaxed);
      victim = best->ref.lock();
    }
    // Null: the session was already being destroyed (its destructor waits for mu to unregister),
    // so its slot is on its way back all the same.
    if (victim) victim->Interrupt(false);
    return true;
  }
  // The web config's rate_limit: false when the request must get 429.
  bool AllowRate(const WebState& w) NVMLX_EXCLUDES(mu) {
    if (w.config.rate_limit_interval.count() <= 0) return true;
    util::MutexLock l(&mu);
    const auto now = std::chrono::steady_clock::now();
    const double per = std::chrono::duration<double>(w.config.rate_limit_interval).count();
    rate_tokens =
        std::min<double>(std::max(1, w.config.rate_limit_burst),
                         rate_tokens + std::chrono::duration<double>(now - rate_at).count() / per);
    rate_at = now;
    if (rate_tokens < 1) return false;
    rate_tokens -= 1;
    return true;
  }
};

// One connection: reads requests one after another (keep-alive), answers each from the core's
// providers, and closes on error, timeout, a limit, or "Connection: close". Stream is
// beast::tcp_stream or beast::ssl_stream<beast::tcp_stream>.
//
// Thread-safety: every handler runs on the connection's strand, so the members need no lock
// (waiting_since and completed_request, read by the registry, are atomic). The session keeps itself
// alive through shared_from_this in its pending handlers.

// Applies the server's limits to a request parser (header block, body).
void ConfigureParser(const ServerOptions& o,
                     boost::beast::http::request_parser<boost::beast::http::empty_body>* parser);

// What a request whose header block parsed must be answered instead of being served, if
// anything: 400 for a Transfer-Encoding other than a single "chunked" or one combined with
// Content-Length (RFC 9112 §6.1), 414 past max_url_bytes, 413 for a body. Each closes the
// connection.
struct Refusal {
  boost::beast::http::status status;
  std::string_view text;
};
std::optional<Refusal> CheckRequestHead(
    const ServerOptions& o,
    const boost::beast::http::request_parser<boost::beast::http::empty_body>& parser);

// Starts serving an accepted connection (plain, or TLS when `web` has a TLS context).
void StartSession(Core& core, boost::asio::ip::tcp::socket socket,
                  std::shared_ptr<const WebState> web);

}  // namespace nvmlx::serve

#endif  // NVML_EXPORTER_SERVE_HTTP_SESSION_H_
