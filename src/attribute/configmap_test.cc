// ConfigMapValue over API server answers; the HTTPS GET end to end is
// test/integration/configmap_test.sh (the daemon against fake_apiserver.py).
#include "attribute/configmap.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace nvmlx::attribute {
namespace {

TEST(ConfigMapValueTest, ReadsTheKey) {
  Result<std::string> v = ConfigMapValue(
      R"({"kind":"ConfigMap","metadata":{"name":"m"},"data":{"metrics":"A, gauge, x\n","o":"1"}})",
      "metrics", "configmap ns/m");
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(*v, "A, gauge, x\n");
}

TEST(ConfigMapValueTest, Errors) {
  const std::string what = "configmap ns/m";
  EXPECT_EQ(ConfigMapValue("<html>", "metrics", what).status().message(),
            "configmap ns/m: the API server's answer is not a JSON object");
  EXPECT_EQ(ConfigMapValue(R"({"kind":"ConfigMap"})", "metrics", what).status().message(),
            "configmap ns/m: no data (expected the key \"metrics\")");
  EXPECT_EQ(
      ConfigMapValue(R"({"data":{"dcgm-metrics.csv":"x"}})", "metrics", what).status().message(),
      "configmap ns/m: no \"metrics\" key in its data");
  EXPECT_EQ(ConfigMapValue(R"({"data":{"metrics":7}})", "metrics", what).status().message(),
            "configmap ns/m: \"metrics\" is not a string");
}

TEST(ReadConfigMapKeyTest, BadNamesAreRefusedBeforeAnyRequest) {
  KubeApiClient client({"127.0.0.1", "1", "", "/nonexistent/ca.crt"});
  Result<std::string> r =
      ReadConfigMapKey(client, "ns", "../pods", "metrics", std::chrono::milliseconds(100));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  Result<std::string> down =
      ReadConfigMapKey(client, "ns", "m", "metrics", std::chrono::milliseconds(1000));
  ASSERT_FALSE(down.ok());
  EXPECT_EQ(down.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(down.status().message(), ::testing::StartsWith("configmap ns/m: "));
}

}  // namespace
}  // namespace nvmlx::attribute
