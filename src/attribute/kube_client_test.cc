// ResolveKubeApiConfig: in-cluster environment, flag overrides and bad addresses; and a request
// to nowhere failing as UNAVAILABLE with the address in the message (the HTTPS exchange itself is
// covered end to end by test/integration/pods_test.sh against a local TLS server).
#include "attribute/kube_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

namespace nvmlx::attribute {
namespace {

using ::testing::HasSubstr;

EnvLookup Env(const std::map<std::string, std::string>& vars) {
  return [vars](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(ResolveKubeApiConfigTest, InClusterFromEnvironment) {
  auto c = ResolveKubeApiConfig(
      "", "", "",
      Env({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}}));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->host, "10.96.0.1");
  EXPECT_EQ(c->port, "443");
  EXPECT_EQ(c->token_file, "/var/run/secrets/kubernetes.io/serviceaccount/token");
  EXPECT_EQ(c->ca_file, "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt");
}

TEST(ResolveKubeApiConfigTest, NotInAClusterIsNotFound) {
  auto c = ResolveKubeApiConfig("", "", "", Env({}));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(c.status().message(), HasSubstr("KUBERNETES_SERVICE_HOST"));
}

TEST(ResolveKubeApiConfigTest, FlagsOverride) {
  auto env = Env({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}});
  auto c = ResolveKubeApiConfig("https://127.0.0.1:6443", "/t", "/ca", env);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->host, "127.0.0.1");
  EXPECT_EQ(c->port, "6443");
  EXPECT_EQ(c->token_file, "/t");
  EXPECT_EQ(c->ca_file, "/ca");
  auto v6 = ResolveKubeApiConfig("https://[fd00::1]:443/", "", "", env);
  ASSERT_TRUE(v6.ok()) << v6.status().ToString();
  EXPECT_EQ(v6->host, "fd00::1");
  auto name = ResolveKubeApiConfig("https://kubernetes.default.svc", "", "", env);
  ASSERT_TRUE(name.ok());
  EXPECT_EQ(name->host, "kubernetes.default.svc");
  EXPECT_EQ(name->port, "443");
}

TEST(ResolveKubeApiConfigTest, BadAddresses) {
  for (const char* bad : {"http://127.0.0.1:6443", "https://h:6443/api", "https://[::1",
                          "https://h:port", "https://"}) {
    auto c = ResolveKubeApiConfig(bad, "", "", Env({}));
    ASSERT_FALSE(c.ok()) << bad;
    EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(KubeApiClientTest, UnreachableServerIsUnavailable) {
  // Port 1 on localhost: refused at once. No CA file: the CA error comes first, naming the file.
  KubeApiClient no_ca({"127.0.0.1", "1", "", "/nonexistent/ca.crt"});
  auto r = no_ca.Get("/api/v1/pods", std::chrono::milliseconds(2000));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(r.status().message(), HasSubstr("/nonexistent/ca.crt"));
  KubeApiClient stopped({"127.0.0.1", "1", "", "/nonexistent/ca.crt"});
  stopped.Stop();
  auto s = stopped.Get("/", std::chrono::milliseconds(2000));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(), "stopped");
}

}  // namespace
}  // namespace nvmlx::attribute
