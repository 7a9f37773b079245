// The server with a web config: TLS (a test CA made by the openssl CLI), mTLS, basic auth with
// its bcrypt cache, certificate rotation and web config reloads, over real sockets.
#include <gtest/gtest.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "serve/basic_auth.h"
#include "serve/http_server.h"

namespace nvmlx::serve {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

// bcrypt of "secret" at cost 4.
constexpr char kHash[] = "$2b$04$WZov6G06ikL2mUZ2U4Q/3ur7yI/6Nwhr2ncLY12vUSbTXaqja8YW.";
const std::string kBody = "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\"} 33\n";

void Write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc) << text;
}

struct Reply {
  int status = 0;  // 0: no HTTP answer (handshake refused, connection closed)
  std::string body, www_authenticate, frame_options;
  std::string peer_cn;  // the server certificate's CN
  std::string error;
};

class WebServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("nvmlx_web_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    // A CA, a server certificate for 127.0.0.1 and a client certificate it signs.
    Run("openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=test-ca -keyout ca.key "
        "-out ca.crt");
    MakeCert("server1", "subjectAltName=IP:127.0.0.1");
    MakeCert("client", "subjectAltName=DNS:prometheus.test");
    // An unrelated CA and a client certificate it signs (must be rejected).
    Run("openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=other-ca -keyout oca.key "
        "-out oca.crt");
    Run("openssl req -newkey rsa:2048 -nodes -subj /CN=intruder -keyout intruder.key -out "
        "intruder.csr && openssl x509 -req -in intruder.csr -CA oca.crt -CAkey oca.key "
        "-CAcreateserial -days 2 -out intruder.crt");
    std::filesystem::copy_file(dir_ / "server1.crt", dir_ / "tls.crt");
    std::filesystem::copy_file(dir_ / "server1.key", dir_ / "tls.key");
  }
  void TearDown() override {
    if (server_) server_->Stop();
    std::filesystem::remove_all(dir_);
  }
  void Run(const std::string& cmd) {
    const std::string full = "cd " + dir_.string() + " && (" + cmd + ") >/dev/null 2>&1";
    ASSERT_EQ(std::system(full.c_str()), 0) << cmd;
  }
  void MakeCert(const std::string& name, const std::string& ext) {
    Run("openssl req -newkey rsa:2048 -nodes -subj /CN=" + name + " -keyout " + name +
        ".key -out " + name + ".csr && printf '" + ext + "\\n' > " + name +
        ".ext && openssl x509 -req -in " + name +
        ".csr -CA ca.crt -CAkey ca.key -CAcreateserial "
        "-days 2 -extfile " +
        name + ".ext -out " + name + ".crt");
  }
  std::string Path(const std::string& f) const { return (dir_ / f).string(); }

  void Start(const std::string& web_yaml, bool health_no_auth = false) {
    Write(Path("web.yml"), web_yaml);
    ServerOptions o;
    o.address = "127.0.0.1:0";
    o.web_config_file = Path("web.yml");
    o.web_config_poll = std::chrono::milliseconds(100);
    o.health_no_auth = health_no_auth;
    server_ = std::make_unique<HttpServer>(
        o,
        [] {
          auto p = std::make_shared<Page>();
          p->body = kBody;
          return std::shared_ptr<const Page>(p);
        },
        [](Probe) {
          return Health{true, "OK"};
        });
    Status st = server_->Start();
    ASSERT_TRUE(st.ok()) << st.ToString();
  }

  // One request; over TLS when `tls`, trusting ca.crt, with a client certificate `client`
  // (file stem) when not empty.
  Reply Get(const std::string& target, bool tls, const std::string& auth = "",
            const std::string& client = "", const std::string& source = "") {
    Reply r;
    asio::io_context ioc;
    http::request<http::empty_body> req(http::verb::get, target, 11);
    req.set(http::field::host, "127.0.0.1");
    if (!auth.empty()) req.set(http::field::authorization, auth);
    http::response<http::string_body> res;
    beast::flat_buffer buf;
    beast::error_code ec;
    tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), server_->port());
    if (tls) {
      ssl::context ctx(ssl::context::tls_client);
      ctx.load_verify_file(Path("ca.crt"));
      ctx.set_verify_mode(ssl::verify_peer);
      if (!client.empty()) {
        ctx.use_certificate_chain_file(Path(client + ".crt"));
        ctx.use_private_key_file(Path(client + ".key"), ssl::context::pem);
      }
      beast::ssl_stream<beast::tcp_stream> s(ioc, ctx);
      beast::get_lowest_layer(s).expires_after(std::chrono::seconds(5));
      beast::get_lowest_layer(s).connect(ep);
      s.handshake(ssl::stream_base::client, ec);
      if (!ec) {
        if (X509* cert = SSL_get1_peer_certificate(s.native_handle())) {
          char cn[256] = {};
          X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof(cn));
          r.peer_cn = cn;
          X509_free(cert);
        }
        http::write(s, req, ec);
      }
      if (!ec) http::read(s, buf, res, ec);
    } else {
      beast::tcp_stream s(ioc);
      s.expires_after(std::chrono::seconds(5));
      if (!source.empty()) {  // another loopback address: another client for the server
        s.socket().open(tcp::v4());
        s.socket().bind(tcp::endpoint(asio::ip::make_address(source), 0));
      }
      s.connect(ep);
      http::write(s, req, ec);
      if (!ec) http::read(s, buf, res, ec);
    }
    if (ec) {
      r.error = ec.message();
      return r;
    }
    r.status = res.result_int();
    r.body = res.body();
    r.www_authenticate = std::string(res[http::field::www_authenticate]);
    r.frame_options = std::string(res["X-Frame-Options"]);
    return r;
  }

  std::string TlsYaml(const std::string& extra = "") {
    return "tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\n" + extra;
  }

  // Copies `from` over `to` in the test's folder, as a certificate rotation writes the files.
  void Replace(const std::string& to, const std::string& from) {
    std::filesystem::copy_file(dir_ / from, dir_ / to,
                               std::filesystem::copy_options::overwrite_existing);
  }

  // The CN of the certificate served over TLS, polled until it is `want` (at most 5 s).
  std::string AwaitPeerCn(const std::string& want) {
    std::string cn;
    for (int i = 0; i < 50 && cn != want; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      cn = Get("/metrics", true).peer_cn;
    }
    return cn;
  }

  // Waits until a reload counter of the server's stats is above 0 (at most 2.5 s).
  static void AwaitReload(const std::atomic<uint64_t>& reloads) {
    for (int i = 0; i < 50 && reloads.load() == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  std::filesystem::path dir_;
  std::unique_ptr<HttpServer> server_;
};

TEST_F(WebServerTest, TlsServesAndPlainHttpGetsNoAnswer) {
  Start(TlsYaml());
  Reply r = Get("/metrics", true);
  EXPECT_EQ(r.status, 200) << r.error;
  EXPECT_EQ(r.body, kBody);
  EXPECT_EQ(r.peer_cn, "server1");
  EXPECT_EQ(Get("/metrics", false).status, 0);  // not HTTP over a TLS port
  EXPECT_GE(server_->stats().tls_handshake_errors.load(), 1u);
}

TEST_F(WebServerTest, MutualTlsAcceptsSignedClientsOnly) {
  Start(
      TlsYaml("  client_ca_file: ca.crt\n  client_auth_type: RequireAndVerifyClientCert\n"
              "  client_allowed_sans: [prometheus.test]\n"));
  Reply ok = Get("/metrics", true, "", "client");
  EXPECT_EQ(ok.status, 200) << ok.error;
  EXPECT_EQ(Get("/metrics", true).status, 0);                  // no client certificate
  EXPECT_EQ(Get("/metrics", true, "", "intruder").status, 0);  // signed by another CA
  EXPECT_EQ(Get("/metrics", true, "", "server1").status, 0);   // right CA, SAN not allowed
  EXPECT_GE(server_->stats().tls_handshake_errors.load(), 3u);
}

std::string Basic(const std::string& user_pass) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < user_pass.size(); i += 3) {
    unsigned v = (unsigned char)user_pass[i] << 16 | (unsigned char)user_pass[i + 1] << 8 |
                 (unsigned char)user_pass[i + 2];
    for (int s = 18; s >= 0; s -= 6) out.push_back(k[(v >> s) & 63]);
  }
  if (i < user_pass.size()) {
    unsigned v = (unsigned char)user_pass[i] << 16;
    if (i + 1 < user_pass.size()) v |= (unsigned char)user_pass[i + 1] << 8;
    out.push_back(k[(v >> 18) & 63]);
    out.push_back(k[(v >> 12) & 63]);
    out.push_back(i + 1 < user_pass.size() ? k[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return "Basic " + out;
}

TEST_F(WebServerTest, BasicAuthOnEveryPathWithCacheAndHeaders) {
  Start(std::string("basic_auth_users:\n  alice: ") + kHash +
        "\nhttp_server_config:\n  headers:\n    X-Frame-Options: deny\n");
  Reply none = Get("/metrics", false);
  EXPECT_EQ(none.status, 401);
  EXPECT_EQ(none.www_authenticate, "Basic");
  EXPECT_EQ(none.frame_options, "deny");         // configured headers on every answer
  EXPECT_EQ(Get("/health", false).status, 401);  // every path, /health included
  EXPECT_EQ(Get("/nope", false).status, 401);
  EXPECT_EQ(Get("/metrics", false, Basic("alice:wrong")).status, 401);
  EXPECT_EQ(Get("/metrics", false, Basic("mallory:secret")).status, 401);
  const uint64_t before = server_->stats().bcrypt_runs.load();
  for (int i = 0; i < 20; ++i) {
    Reply r = Get("/metrics", false, Basic("alice:secret"));
    ASSERT_EQ(r.status, 200) << i;
    EXPECT_EQ(r.body, kBody);
  }
  // Twenty scrapes with the right password: one bcrypt.
  EXPECT_EQ(server_->stats().bcrypt_runs.load() - before, 1u);
  // The same wrong password again: cached, no bcrypt.
  const uint64_t wrong = server_->stats().bcrypt_runs.load();
  EXPECT_EQ(Get("/metrics", false, Basic("alice:wrong")).status, 401);
  EXPECT_EQ(server_->stats().bcrypt_runs.load(), wrong);
  EXPECT_GE(server_->stats().auth_failures.load(), 5u);
}

TEST_F(WebServerTest, HealthNoAuthLeavesProbesOpen) {
  Start(std::string("basic_auth_users:\n  alice: ") + kHash + "\n", true);
  EXPECT_EQ(Get("/health", false).status, 200);
  EXPECT_EQ(Get("/ready", false).status, 200);
  EXPECT_EQ(Get("/metrics", false).status, 401);
}

// A storm of distinct wrong passwords: bcrypt runs are bounded by the failure rate limit, and
// scrapes with the right (cached) password keep being answered at once.
TEST_F(WebServerTest, WrongPasswordStormIsRateLimited) {
  Start(std::string("basic_auth_users:\n  alice: ") + kHash + "\n");
  ASSERT_EQ(Get("/metrics", false, Basic("alice:secret")).status, 200);
  const uint64_t before = server_->stats().bcrypt_runs.load();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(Get("/metrics", false, Basic("alice:guess" + std::to_string(i))).status, 401);
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const uint64_t runs = server_->stats().bcrypt_runs.load() - before;
  // The bucket: 10 at once, then 5 per second.
  EXPECT_LE(runs, 10 + 5 * secs + 2) << secs;
  EXPECT_GE(server_->stats().auth_rate_limited.load(), 50u);
  EXPECT_EQ(Get("/metrics", false, Basic("alice:secret")).status, 200);
}

// Hardening round two, row 2: a storm of wrong passwords from other addresses does not lock out
// a scraper whose password is not cached yet (it got 401 rate_limited on 94 of 94 scrapes when
// the failure budget was one for everyone): each address spends its own budget, and a first check
// from an address that never failed runs before strangers'.
TEST_F(WebServerTest, PasswordStormElsewhereDoesNotLockOutANewScraper) {
  Start(std::string("basic_auth_users:\n  alice: ") + kHash + "\n");
  std::atomic<bool> stop{false};
  std::atomic<int> storm{0};
  std::vector<std::thread> attackers;
  for (int t = 0; t < 4; ++t) {
    attackers.emplace_back([&, t] {
      const std::string from = "127.0.0." + std::to_string(2 + t);
      for (int i = 0; !stop; ++i) {
        Get("/metrics", false, Basic("alice:x" + std::to_string(t) + "_" + std::to_string(i)), "",
            from);
        ++storm;
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // every budget of theirs spent
  const auto start = std::chrono::steady_clock::now();
  const uint64_t runs_before = server_->stats().bcrypt_runs.load();
  int ok = 0;
  for (int i = 0; i < 10; ++i) {  // the first one needs a bcrypt: not cached yet
    ok += Get("/metrics", false, Basic("alice:secret")).status == 200 ? 1 : 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const uint64_t runs = server_->stats().bcrypt_runs.load() - runs_before;
  stop = true;
  for (auto& t : attackers) t.join();
  EXPECT_EQ(ok, 10);
  EXPECT_GT(storm.load(), 50);
  EXPECT_GT(server_->stats().auth_rate_limited.load(), 20u);
  // Four addresses at 10, then 5 failures a second each (what is left of their bursts after the
  // warm-up included), and the scraper's one.
  EXPECT_LE(runs, 4 * (10 + 5 * (secs + 0.5)) + 1) << secs;
}

// Row 2 too: failures are budgeted in bcrypt CPU time per address. With a cost-10 hash (tens of
// milliseconds a run) one address sending distinct wrong passwords for 2 s gets at most its
// burst (0.5 s) and refill (0.05 s/s) of CPU, plus the run in progress.
TEST_F(WebServerTest, WrongPasswordsAreBudgetedInCpuTimePerAddress) {
  // bcrypt of "fakepassword" at cost 10.
  Start(
      "basic_auth_users:\n  alice: $2b$10$cLTpLCeQz0brzZB6qzwM8uz3kOZLryPKfOBfWMUm/tm54DmA9S4j.\n");
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; std::chrono::steady_clock::now() - start < std::chrono::seconds(2); ++i) {
    EXPECT_EQ(Get("/metrics", false, Basic("alice:guess" + std::to_string(i))).status, 401);
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpu = static_cast<double>(server_->stats().bcrypt_failure_cpu_ns.load()) / 1e9;
  const double run = cpu / std::max<uint64_t>(1, server_->stats().bcrypt_runs.load());
  EXPECT_LE(cpu, BasicAuth::kSourceCpuBurst + BasicAuth::kSourceCpuPerSecond * secs + 2 * run)
      << "runs " << server_->stats().bcrypt_runs.load() << ", " << run << " s each";
  EXPECT_GE(server_->stats().auth_rate_limited.load(), 1u);
  EXPECT_EQ(Get("/metrics", false, Basic("alice:fakepassword"), "", "127.0.0.9").status, 200)
      << "another address is not affected";
}

TEST_F(WebServerTest, CertificateRotationServesTheNewCertificate) {
  Start(TlsYaml());
  EXPECT_EQ(Get("/metrics", true).peer_cn, "server1");
  MakeCert("server2", "subjectAltName=IP:127.0.0.1");
  Replace("tls.key", "server2.key");
  Replace("tls.crt", "server2.crt");
  EXPECT_EQ(AwaitPeerCn("server2"), "server2");
  EXPECT_GE(server_->stats().config_reloads_ok.load(), 1u);
}

TEST_F(WebServerTest, BrokenReloadKeepsTheOldConfig) {
  Start(std::string("basic_auth_users:\n  alice: ") + kHash + "\n");
  Write(Path("web.yml"), "basic_auth_users:\n  alice: not-a-hash\n");
  AwaitReload(server_->stats().config_reloads_failed);
  EXPECT_EQ(server_->stats().config_reloads_failed.load(), 1u);
  EXPECT_EQ(server_->stats().config_last_reload_ok.load(), 0);
  EXPECT_EQ(Get("/metrics", false, Basic("alice:secret")).status, 200);  // old users kept
  EXPECT_EQ(Get("/metrics", false).status, 401);
  // A good file again: applied (no users: open).
  Write(Path("web.yml"), "http_server_config:\n  headers:\n    X-Frame-Options: sameorigin\n");
  AwaitReload(server_->stats().config_reloads_ok);
  Reply open = Get("/metrics", false);
  EXPECT_EQ(open.status, 200);
  EXPECT_EQ(open.frame_options, "sameorigin");
  EXPECT_EQ(server_->stats().config_last_reload_ok.load(), 1);
  EXPECT_EQ(server_->stats().config_reloads_failed.load(), 1u);  // once per broken version
}

// A storm of wrong passwords from several clients at once does not slow scrapes with the right
// (cached) password: bcrypt runs on its own thread, rate-limited, never on an io thread.
TEST_F(WebServerTest, WrongPasswordStormDoesNotStallScrapes) {
  Start(std::string("basic_auth_users:\n  alice: ") + kHash + "\n");
  ASSERT_EQ(Get("/metrics", false, Basic("alice:secret")).status, 200);
  std::atomic<bool> stop{false};
  std::atomic<int> storm{0};
  std::vector<std::thread> attackers;
  for (int t = 0; t < 4; ++t) {
    attackers.emplace_back([&, t] {
      for (int i = 0; !stop; ++i) {
        Get("/metrics", false, Basic("alice:x" + std::to_string(t) + "_" + std::to_string(i)));
        ++storm;
      }
    });
  }
  std::chrono::microseconds worst{0};
  int ok = 0;
  for (int i = 0; i < 15; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const auto start = std::chrono::steady_clock::now();
    Reply r = Get("/metrics", false, Basic("alice:secret"));
    const auto took = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - start);
    worst = std::max(worst, took);
    ok += r.status == 200 && took < std::chrono::milliseconds(100);
  }
  stop = true;
  for (auto& t : attackers) t.join();
  std::cout << "worst scrape during a storm of " << storm.load()
            << " wrong passwords: " << worst.count() << " us\n";
  EXPECT_EQ(ok, 15) << "worst " << worst.count() << " us";
  EXPECT_GT(storm.load(), 100);
}

TEST_F(WebServerTest, RotationToAMismatchedKeyKeepsTheOldCertificate) {
  Start(TlsYaml());
  MakeCert("server2", "subjectAltName=IP:127.0.0.1");
  // The new certificate with the old key: rejected, the old pair stays in use.
  Replace("tls.crt", "server2.crt");
  AwaitReload(server_->stats().config_reloads_failed);
  EXPECT_EQ(server_->stats().config_reloads_failed.load(), 1u);
  Reply r = Get("/metrics", true);
  EXPECT_EQ(r.status, 200) << r.error;
  EXPECT_EQ(r.peer_cn, "server1");
  // The matching key arrives: the new certificate is served.
  Replace("tls.key", "server2.key");
  EXPECT_EQ(AwaitPeerCn("server2"), "server2");
}

TEST_F(WebServerTest, BadWebConfigFailsStart) {
  Write(Path("web.yml"), "tls_server_config:\n  cert_file: missing.crt\n  key_file: tls.key\n");
  ServerOptions o;
  o.address = "127.0.0.1:0";
  o.web_config_file = Path("web.yml");
  HttpServer s(
      o, [] { return nullptr; }, [](Probe) { return Health{}; });
  Status st = s.Start();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("missing.crt"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace nvmlx::serve
