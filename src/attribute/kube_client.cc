#include "attribute/kube_client.h"

#include <openssl/ssl.h>

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <cctype>

#include "attribute/blocking_io.h"
#include "util/file.h"
#include "util/openssl_lazy.h"
#include "util/strings.h"

namespace nvmlx::attribute {
namespace {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;
using ErrorCode = boost::system::error_code;

// How often a waiting request looks at the stop flag.
constexpr auto kStopPoll = std::chrono::milliseconds(100);
// A pod list of a big cluster (no NODE_NAME) is tens of MiB; more is not a pod list.
constexpr uint64_t kMaxListBody = 256ull << 20;

bool IsIpAddress(const std::string& host) {
  ErrorCode ec;
  net::ip::make_address(host, ec);
  return !ec;
}

// A token is a JWT of a few KB; a file far larger is not one (util/file.h bounds the read, and
// refuses a FIFO or device at the path instead of blocking the request's thread on it).
constexpr size_t kMaxTokenBytes = size_t{1} << 20;

Result<std::string> ReadToken(const std::string& path) {
  Result<std::string> text = util::ReadBoundedFile(path, "service account token", kMaxTokenBytes);
  if (!text.ok())
    return Unavailable("cannot read the service account token: " + text.status().message());
  return std::string(util::TrimWhitespace(*text));
}

// "https://host:port", the start of every transport error.
std::string Where(const KubeApiConfig& config) {
  return "https://" + config.host + ":" + config.port;
}

// One request's connection to the API server, TLS over TCP, driven on the calling thread: each
// step runs one asynchronous operation to completion, cancelling it when `stop` becomes true
// meanwhile, so that Stop() ends a request that waits on the network.
//
// Thread-safety: used by one thread, the one making the request; only `stop` is shared.
class Connection {
 public:
  // `ctx` (the CA, peer verification) must outlive the connection.
  Connection(const KubeApiConfig& config, ssl::context& ctx, const std::atomic<bool>& stop)
      : config_(config), stop_(stop), stream_(ioc_, ctx) {
    if (!IsIpAddress(config_.host)) {
      SSL_set_tlsext_host_name(stream_.native_handle(), config_.host.c_str());
    }
    stream_.set_verify_callback(ssl::host_name_verification(config_.host));
  }

  // Resolves the host, connects and completes the TLS handshake.
  Status Open(std::chrono::milliseconds timeout) {
    tcp::resolver resolver(ioc_);
    tcp::resolver::results_type endpoints;
    ErrorCode ec = Run([&](auto done) {
      resolver.async_resolve(config_.host, config_.port,
                             [&, done](ErrorCode e, tcp::resolver::results_type r) {
                               endpoints = std::move(r);
                               done(e);
                             });
    });
    if (ec) return Failed("resolve", ec);
    Socket().expires_after(timeout);
    ec = Run([&](auto done) { Socket().async_connect(endpoints, done); });
    if (ec) return Failed("connect", ec);
    Socket().expires_after(timeout);
    ec = Run([&](auto done) { stream_.async_handshake(ssl::stream_base::client, done); });
    if (ec) return Failed("TLS handshake", ec);
    return Status::Ok();
  }

  // Sends `call` (a GET unless it says otherwise), with the token as a bearer token unless it is
  // empty.
  Status Send(const KubeApiCall& call, const std::string& token,
              std::chrono::milliseconds timeout) {
    http::request<http::string_body> req{http::string_to_verb(call.method), call.target, 11};
    if (!call.body.empty() || req.method() != http::verb::get) {
      req.set(http::field::content_type, call.content_type);
      req.body() = call.body;
      req.prepare_payload();
    }
    const bool v6 = config_.host.find(':') != std::string::npos;
    req.set(http::field::host, (v6 ? "[" + config_.host + "]" : config_.host) + ":" + config_.port);
    req.set(http::field::user_agent, "nvml-exporter");
    req.set(http::field::accept, "application/json");
    req.set(http::field::connection, "close");
    if (!token.empty()) req.set(http::field::authorization, "Bearer " + token);
    Socket().expires_after(timeout);
    const ErrorCode ec = Run([&](auto done) { http::async_write(stream_, req, done); });
    if (ec) return Failed("send request", ec);
    return Status::Ok();
  }

  // The whole response (KubeApiClient::Get), its body at most kMaxListBody.
  Result<HttpResponse> ReadWhole(std::chrono::milliseconds timeout) {
    parser_.body_limit(kMaxListBody);
    Socket().expires_after(timeout);
    const ErrorCode ec = Run([&](auto done) { http::async_read(stream_, buffer_, parser_, done); });
    if (ec) return Failed("read response", ec);
    HttpResponse out;
    out.status = parser_.get().result_int();
    out.body = std::move(parser_.get().body());
    return out;
  }

  // A streamed response (KubeApiClient::Stream): on a 200, each line of the body handed to
  // on_line as it arrives, `timeout` being the longest wait for more; otherwise the error body.
  Result<HttpResponse> ReadLines(std::chrono::milliseconds timeout,
                                 const std::function<bool(std::string_view)>& on_line) {
    parser_.body_limit(boost::none);  // a watch never ends by itself
    Socket().expires_after(timeout);
    ErrorCode ec =
        Run([&](auto done) { http::async_read_header(stream_, buffer_, parser_, done); });
    if (ec) return Failed("read response header", ec);
    HttpResponse out;
    out.status = parser_.get().result_int();
    if (out.status != 200) {
      parser_.body_limit(1 << 20);
      Socket().expires_after(timeout);
      Run([&](auto done) { http::async_read(stream_, buffer_, parser_, done); });
      out.body = std::move(parser_.get().body());
      return out;
    }
    // The body grows as chunks arrive; complete lines are handed on and erased (string_body
    // appends at its current size, so erasing the consumed prefix between reads is safe).
    std::string& body = parser_.get().body();
    while (!parser_.is_done()) {
      Socket().expires_after(timeout);
      ec = Run([&](auto done) { http::async_read_some(stream_, buffer_, parser_, done); });
      size_t start = 0;
      for (size_t nl; (nl = body.find('\n', start)) != std::string::npos; start = nl + 1) {
        if (nl > start && !on_line(std::string_view(body).substr(start, nl - start))) return out;
      }
      body.erase(0, start);
      if (ec == http::error::end_of_stream) break;
      if (ec) return Failed("read watch stream", ec);
    }
    if (!body.empty()) on_line(body);  // a last line without its newline
    return out;
  }

 private:
  beast::tcp_stream& Socket() { return beast::get_lowest_layer(stream_); }

  // Runs one asynchronous operation to completion on this thread, cancelling it when `stop_`
  // becomes true meanwhile. `start` receives the completion handler.
  template <typename Start>
  ErrorCode Run(Start start) {
    return RunToCompletion(
               ioc_, kStopPoll, start, [&] { return stop_.load(); }, [&] { Socket().cancel(); })
        .error;
  }

  Status Failed(const char* step, const ErrorCode& e) const {
    if (stop_.load()) return Unavailable("stopped");
    return Unavailable(Where(config_) + ": " + step + ": " + e.message());
  }

  const KubeApiConfig& config_;
  const std::atomic<bool>& stop_;
  net::io_context ioc_;
  beast::ssl_stream<beast::tcp_stream> stream_;
  beast::flat_buffer buffer_;
  http::response_parser<http::string_body> parser_;
};

}  // namespace

Result<KubeApiConfig> ResolveKubeApiConfig(const std::string& server_url,
                                           const std::string& token_file,
                                           const std::string& ca_file, const EnvLookup& getenv) {
  KubeApiConfig c;
  const std::string dir = kServiceAccountDir;
  c.token_file = token_file.empty() ? dir + "/token" : token_file;
  c.ca_file = ca_file.empty() ? dir + "/ca.crt" : ca_file;
  if (!server_url.empty()) {
    std::string_view u = server_url;
    if (u.substr(0, 8) != "https://") {
      return InvalidArgument("--kubernetes-api-server: \"" + server_url +
                             "\" is not an https:// URL");
    }
    u.remove_prefix(8);
    if (!u.empty() && u.back() == '/') u.remove_suffix(1);
    if (u.find('/') != std::string_view::npos) {
      return InvalidArgument("--kubernetes-api-server: \"" + server_url +
                             "\" must be https://host[:port] without a path");
    }
    if (!u.empty() && u.front() == '[') {  // [v6]:port
      const size_t close = u.find(']');
      if (close == std::string_view::npos) {
        return InvalidArgument("--kubernetes-api-server: unterminated [ in \"" + server_url + "\"");
      }
      c.host = std::string(u.substr(1, close - 1));
      if (close + 1 < u.size()) {
        if (u[close + 1] != ':') return InvalidArgument("--kubernetes-api-server: bad port");
        c.port = std::string(u.substr(close + 2));
      }
    } else if (const size_t colon = u.rfind(':'); colon != std::string_view::npos) {
      c.host = std::string(u.substr(0, colon));
      c.port = std::string(u.substr(colon + 1));
    } else {
      c.host = std::string(u);
    }
  } else {
    std::optional<std::string> host = getenv("KUBERNETES_SERVICE_HOST");
    std::optional<std::string> port = getenv("KUBERNETES_SERVICE_PORT");
    if (!host || host->empty() || !port || port->empty()) {
      return NotFound(
          "not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are "
          "not set (or give --kubernetes-api-server)");
    }
    c.host = *host;
    c.port = *port;
  }
  if (c.host.empty() || c.port.empty() ||
      c.port.find_first_not_of("0123456789") != std::string::npos) {
    return InvalidArgument("API server address \"" + c.host + ":" + c.port + "\" is not host:port");
  }
  // The client speaks HTTPS through OpenSSL, loaded on first use (util/openssl_lazy.h): load it
  // now, so that a machine without it fails at start-up.
  NVMLX_RETURN_IF_ERROR(util::LoadOpenSsl());
  return c;
}

KubeApiClient::KubeApiClient(KubeApiConfig config) : config_(std::move(config)) {}
KubeApiClient::~KubeApiClient() = default;

void KubeApiClient::Stop() { stop_.store(true); }

Result<HttpResponse> KubeApiClient::Get(const std::string& target,
                                        std::chrono::milliseconds timeout) {
  return Request(KubeApiCall{.target = target}, timeout, nullptr);
}

Result<HttpResponse> KubeApiClient::Call(const KubeApiCall& call,
                                         std::chrono::milliseconds timeout) {
  return Request(call, timeout, nullptr);
}

Result<HttpResponse> KubeApiClient::Stream(const std::string& target,
                                           std::chrono::milliseconds idle_timeout,
                                           const std::function<bool(std::string_view)>& on_line) {
  return Request(KubeApiCall{.target = target}, idle_timeout, &on_line);
}

Result<HttpResponse> KubeApiClient::Request(const KubeApiCall& call,
                                            std::chrono::milliseconds timeout,
                                            const std::function<bool(std::string_view)>* on_line) {
  if (stop_.load()) return Unavailable("stopped");
  if (Status s = util::LoadOpenSsl(); !s.ok()) return Unavailable(s.message());
  std::string token;
  if (!config_.token_file.empty()) {
    Result<std::string> t = ReadToken(config_.token_file);
    if (!t.ok()) return t.status();
    token = *t;
  }
  try {
    ssl::context ctx(ssl::context::tls_client);
    ErrorCode ec;
    ctx.load_verify_file(config_.ca_file, ec);
    if (ec) return Unavailable("cannot load CA " + config_.ca_file + ": " + ec.message());
    ctx.set_verify_mode(ssl::verify_peer);
    Connection connection(config_, ctx, stop_);
    NVMLX_RETURN_IF_ERROR(connection.Open(timeout));
    NVMLX_RETURN_IF_ERROR(connection.Send(call, token, timeout));
    if (on_line == nullptr) return connection.ReadWhole(timeout);
    return connection.ReadLines(timeout, *on_line);
  } catch (const std::exception& e) {
    return Unavailable(Where(config_) + ": " + e.what());
  }
}

std::string QueryEscape(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string BodyExcerpt(const std::string& body) {
  std::string s = body.substr(0, 200);
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

}  // namespace nvmlx::attribute
