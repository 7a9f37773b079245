#include "config/web_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace nvmlx::config {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kHash[] = "$2b$04$WZov6G06ikL2mUZ2U4Q/3ur7yI/6Nwhr2ncLY12vUSbTXaqja8YW.";

std::string Err(const std::string& text) {
  Result<WebConfig> c = ParseWebConfig(text, "/etc/web.yml");
  return c.ok() ? "<ok>" : c.status().message();
}

TEST(WebConfig, EmptyFileIsPlainHttp) {
  for (const char* text : {"", "# nothing\n", "{}\n"}) {
    Result<WebConfig> c = ParseWebConfig(text, "/etc/web.yml");
    ASSERT_TRUE(c.ok()) << c.status().message();
    EXPECT_FALSE(c->tls.enabled);
    EXPECT_TRUE(c->users.empty());
  }
}

TEST(WebConfig, FullFile) {
  Result<WebConfig> c = ParseWebConfig(std::string(R"(
tls_server_config:
  cert_file: tls.crt
  key_file: /abs/tls.key
  client_ca_file: ca.crt
  client_auth_type: RequireAndVerifyClientCert
  min_version: TLS13
  max_version: TLS13
  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_AES_128_GCM_SHA256]
  curve_preferences: [X25519, CurveP256]
  prefer_server_cipher_suites: false
  client_allowed_sans: [prometheus.monitoring.svc]
http_server_config:
  http2: false
  headers:
    X-Frame-Options: deny
    Strict-Transport-Security: max-age=31536000
rate_limit:
  interval: 100ms
  burst: 5
basic_auth_users:
  alice: )") + kHash + "\n",
                                       "/etc/dcgm-exporter/web-config.yaml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_TRUE(c->tls.enabled);
  EXPECT_EQ(c->tls.cert_file, "/etc/dcgm-exporter/tls.crt");  // relative to the file
  EXPECT_EQ(c->tls.key_file, "/abs/tls.key");
  EXPECT_EQ(c->tls.client_ca_file, "/etc/dcgm-exporter/ca.crt");
  EXPECT_EQ(c->tls.client_auth, ClientAuth::kRequireAndVerifyClientCert);
  EXPECT_EQ(c->tls.min_version, 13);
  EXPECT_EQ(c->tls.cipher_suites, std::vector<std::string>{"ECDHE-RSA-AES128-GCM-SHA256"});
  EXPECT_EQ(c->tls.curves, (std::vector<std::string>{"X25519", "P-256"}));
  EXPECT_FALSE(c->tls.prefer_server_cipher_suites);
  EXPECT_EQ(c->tls.client_allowed_sans, std::vector<std::string>{"prometheus.monitoring.svc"});
  EXPECT_FALSE(c->http2);
  ASSERT_EQ(c->headers.size(), 2u);
  EXPECT_EQ(c->headers[0].first, "X-Frame-Options");
  EXPECT_EQ(c->rate_limit_burst, 5);
  EXPECT_EQ(c->rate_limit_interval, std::chrono::milliseconds(100));
  EXPECT_EQ(c->users.at("alice"), kHash);
}

TEST(WebConfig, ErrorsNameFileLineAndWhatWasExpected) {
  EXPECT_EQ(Err("tls_server_config:\n  cert_file: a\n  key_file: b\n  certfile: c\n"),
            "/etc/web.yml:4: unknown key \"certfile\" in tls_server_config (expected cert, key, "
            "client_ca, cert_file, key_file, client_auth_type, client_ca_file, cipher_suites, "
            "curve_preferences, min_version, max_version, prefer_server_cipher_suites, "
            "client_allowed_sans)");
  EXPECT_THAT(Err("basic_auth_users:\n  alice: secret\n"),
              StartsWith("/etc/web.yml:2: basic_auth_users: alice: not a bcrypt hash"));
  EXPECT_THAT(Err("tls_server_config:\n  cert_file: a\n  key_file: b\n  cipher_suites: [RC4]\n"),
              StartsWith("/etc/web.yml:4: cipher_suites: unknown cipher \"RC4\""));
  EXPECT_THAT(Err("tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS9\n"),
              StartsWith("/etc/web.yml:4: min_version: unknown TLS version \"TLS9\""));
  EXPECT_THAT(Err("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_ca_file: c\n"),
              HasSubstr("client CA's have been configured without a Client Auth Policy"));
  EXPECT_THAT(Err("tls_server_config:\n  cert_file: a\n"),
              HasSubstr("missing one of key or key_file"));
  EXPECT_THAT(Err("tls_server_config:\n  cert_file: a\n  key_file: b\n"
                  "  client_auth_type: RequireAndVerifyClientCert\n"),
              HasSubstr("needs client_ca_file"));
  EXPECT_THAT(Err("http_server_config:\n  headers:\n    Server: x\n"),
              StartsWith("/etc/web.yml:3: headers: HTTP header \"Server\" can not be configured"));
  EXPECT_THAT(Err("http_server_config:\n  headers:\n    X-Frame-Options: allow\n"),
              HasSubstr("invalid value for X-Frame-Options"));
  EXPECT_THAT(Err("basic_auth_users: [alice]\n"), HasSubstr("expected a mapping of user: hash"));
  EXPECT_THAT(Err("tls_server_config: {cert_file: a, cert_file: b}\n"), HasSubstr("repeated"));
  EXPECT_THAT(Err("tls_server_config: [\n"), StartsWith("/etc/web.yml:"));
  EXPECT_THAT(Err("rate_limit: {interval: soon}\n"), HasSubstr("expected a duration"));
  EXPECT_THAT(Err("tls_config:\n  cert_file: a\n"), HasSubstr("unknown key \"tls_config\""));
}

// With a certificate, a min_version above max_version is refused; without one, the exporter
// toolkit ignores tls_server_config and serves plain HTTP, and so do we (found by the fuzzer:
// its invariant had asked for the order even with TLS off).
TEST(WebConfig, VersionOrderCheckedOnlyWithTlsOn) {
  EXPECT_THAT(Err("tls_server_config:\n  cert_file: a\n  key_file: b\n"
                  "  min_version: TLS13\n  max_version: TLS12\n"),
              HasSubstr("min_version is above max_version"));
  Result<WebConfig> c = ParseWebConfig(
      "tls_server_config:\n  min_version: TLS12\n  max_version: TLS11\n", "/etc/web.yml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_FALSE(c->tls.enabled);
}

TEST(WebConfig, LoadNamesMissingFile) {
  Result<WebConfig> c = LoadWebConfig("/nonexistent/web.yml");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("/nonexistent/web.yml"));
}

}  // namespace
}  // namespace nvmlx::config
