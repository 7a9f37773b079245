// Shared by the HTTP server's tests (http_server_test.cc, http_server_limits_test.cc): a small
// Beast client, a ServerTest fixture serving a page and probes the test sets, and helpers.
// Test-only. ServerTest's page and health are guarded by its mutex (the server reads them on its
// threads); a Client is used by one thread.
#ifndef NVML_EXPORTER_SERVE_HTTP_SERVER_TEST_FIXTURE_H_
#define NVML_EXPORTER_SERVE_HTTP_SERVER_TEST_FIXTURE_H_

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "render/gzip.h"
#include "serve/http_server.h"
#include "util/mutex.h"

namespace nvmlx::serve::test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

inline std::string Gunzip(const std::string& in) {
  return render::GzipDecompress(in).value_or("<corrupt gzip>");
}

inline std::shared_ptr<const Page> MakePage(std::string_view body) {
  auto p = std::make_shared<Page>();
  p->body = std::string(body);
  p->gzip_body = render::GzipCompress(p->body);
  return p;
}

struct Reply {
  unsigned status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  std::string error;  // non-empty when no response could be read
};

// A blocking client over one connection, with a receive timeout so that a server bug fails the
// test instead of hanging it.
class Client {
 public:
  explicit Client(uint16_t port, const char* host = "127.0.0.1") : socket_(ioc_) {
    boost::system::error_code ec;
    socket_.connect(tcp::endpoint(asio::ip::make_address(host), port), ec);
    connected_ = !ec;
    timeval tv{5, 0};
    ::setsockopt(socket_.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  }
  bool connected() const { return connected_; }

  void SendRaw(const std::string& bytes) {
    boost::system::error_code ec;
    asio::write(socket_, asio::buffer(bytes), ec);
  }

  Reply Read(bool head = false) {
    Reply r;
    http::response_parser<http::string_body> parser;
    parser.skip(head);  // a HEAD response has Content-Length but no body
    parser.body_limit(64 * 1024 * 1024);
    boost::system::error_code ec;
    http::read(socket_, buffer_, parser, ec);
    if (ec) {
      r.error = ec.message();
      return r;
    }
    const auto& msg = parser.get();
    r.status = msg.result_int();
    for (const auto& f : msg) {
      std::string name(f.name_string());
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      r.headers[name] = std::string(f.value());
    }
    r.body = msg.body();
    return r;
  }

  Reply Request(const std::string& method, const std::string& target,
                const std::string& extra_headers = "") {
    SendRaw(method + " " + target + " HTTP/1.1\r\nHost: test\r\n" + extra_headers + "\r\n");
    return Read(method == "HEAD");
  }

  // True when the server has closed the connection (EOF or reset), within the receive timeout.
  bool ClosedByPeer() {
    if (buffer_.size() > 0) return false;
    char c;
    boost::system::error_code ec;
    socket_.read_some(asio::buffer(&c, 1), ec);
    return ec == asio::error::eof || ec == asio::error::connection_reset;
  }

 private:
  asio::io_context ioc_;
  tcp::socket socket_;
  beast::flat_buffer buffer_;
  bool connected_ = false;
};

// A server on 127.0.0.1:0 whose page and health the test sets.
class ServerTest : public ::testing::Test {
 protected:
  void StartServer(ServerOptions options = {}, HttpServer::ResourceProvider resources = nullptr) {
    if (options.address == ":9400") options.address = "127.0.0.1:0";
    server_ = std::make_unique<HttpServer>(
        options, [this] { return CurrentPage(); }, [this](Probe p) { return CurrentHealth(p); },
        std::move(resources));
    Status st = server_->Start();
    ASSERT_TRUE(st.ok()) << st.ToString();
    ASSERT_NE(server_->port(), 0);
  }
  void SetPage(std::shared_ptr<const Page> p) NVMLX_EXCLUDES(mu_) {
    util::MutexLock l(&mu_);
    page_ = std::move(p);
  }
  void SetHealth(Health h, Probe probe = Probe::kLive) NVMLX_EXCLUDES(mu_) {
    util::MutexLock l(&mu_);
    (probe == Probe::kLive ? health_ : ready_) = std::move(h);
  }
  // What the server's callbacks read, on its threads.
  std::shared_ptr<const Page> CurrentPage() NVMLX_EXCLUDES(mu_) {
    util::MutexLock l(&mu_);
    return page_;
  }
  Health CurrentHealth(Probe probe) NVMLX_EXCLUDES(mu_) {
    util::MutexLock l(&mu_);
    return probe == Probe::kLive ? health_ : ready_;
  }
  uint16_t port() const { return server_->port(); }

  util::Mutex mu_;
  std::shared_ptr<const Page> page_ NVMLX_GUARDED_BY(mu_);
  Health health_ NVMLX_GUARDED_BY(mu_){true, "OK"};
  Health ready_ NVMLX_GUARDED_BY(mu_){true, "OK"};
  std::unique_ptr<HttpServer> server_;
};

inline constexpr std::string_view kBody =
    "# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).\n"
    "# TYPE DCGM_FI_DEV_GPU_TEMP gauge\n"
    "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\"} 33\n";

}  // namespace nvmlx::serve::test

#endif  // NVML_EXPORTER_SERVE_HTTP_SERVER_TEST_FIXTURE_H_
