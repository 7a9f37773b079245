// The validator must reject each way a document can break the EMF specification; otherwise the
// renderer tests that rely on it prove nothing.
#include "emf_validator.h"

#include <gtest/gtest.h>

#include <string>

namespace nvmlx::testing {
namespace {

// A valid document; each case below breaks one rule of it.
constexpr const char* kGood =
    R"({"_aws":{"Timestamp":1700000000000,"LogGroupName":"/gpu","CloudWatchMetrics":[)"
    R"({"Namespace":"GPU/Exporter","Dimensions":[["InstanceId"],["InstanceId","gpu"]],)"
    R"("Metrics":[{"Name":"gpu_utilization","Unit":"Percent"}]}]},)"
    R"("InstanceId":"i-0abc","gpu":"0","gpu_utilization":[40,42,97]})";

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

TEST(EmfValidatorTest, AcceptsTheSpecExample) {
  EXPECT_EQ(ValidateEmf(kGood, {}), std::vector<std::string>{});
  EXPECT_TRUE(ValidateEmf(R"({"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"a",)"
                          R"("Dimensions":[[]],"Metrics":[{"Name":"m"}]}]},"m":1.5})",
                          {})
                  .empty());
}

TEST(EmfValidatorTest, RejectsEachBrokenRule) {
  const std::string g = kGood;
  struct Case {
    std::string doc;
    std::string expect;  // substring of one error
  };
  const Case cases[] = {
      {g + "x", "not one JSON value"},
      {Replace(g, "1700000000000", "1700000000000.5"), "Timestamp"},
      {Replace(g, "1700000000000", "\"1700000000000\""), "Timestamp"},
      {Replace(g, R"("Dimensions":[["InstanceId"],["InstanceId","gpu"]])", R"("Dimensions":[])"),
       "Dimensions"},
      {Replace(g, R"(["InstanceId","gpu"])", R"("gpu")"), "DimensionSet is not an array"},
      {Replace(g, R"("gpu":"0")", R"("gpu":0)"), "dimension member is not a string"},
      {Replace(g, R"("gpu":"0",)", ""), "dimension key without a root member: gpu"},
      {Replace(g, R"("gpu":"0")", R"("gpu":"é")"), "non-ASCII"},
      {Replace(g, R"("gpu":"0")", R"("gpu":"  ")"), "blank"},
      {Replace(g, R"("Unit":"Percent")", R"("Unit":"Watts")"), "unit not in"},
      {Replace(g, R"("Unit":"Percent")", R"("Unit":"Percent","StorageResolution":5)"),
       "StorageResolution"},
      {Replace(g, "[40,42,97]", "\"40\""), "not a finite number"},
      {Replace(g, "[40,42,97]", "1e300"), "not a finite number"},
      {Replace(g, R"(,"gpu_utilization":[40,42,97])", ""), "metric without a root member"},
      {Replace(g, "GPU/Exporter", "AWS/GPU"), "Namespace"},
      {Replace(g, "GPU/Exporter", "GPU Exporter"), "Namespace"},
      {Replace(g, R"("LogGroupName":"/gpu",)", R"("Extra":1,)"), "unexpected member _aws.Extra"},
      {Replace(g, R"("Namespace")", R"("Other":1,"Namespace")"), "unexpected directive member"},
      {Replace(g, R"("InstanceId":"i-0abc",)", "\"InstanceId\":\"i-0abc\",\n"), "raw newline"},
      {Replace(g, R"(,"Unit":"Percent")", R"(,"Unit":"Percent","Scale":2)"),
       "unexpected MetricDefinition member"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> errors = ValidateEmf(c.doc, {});
    bool found = false;
    for (const auto& e : errors) found = found || e.find(c.expect) != std::string::npos;
    EXPECT_TRUE(found) << "expected \"" << c.expect << "\" for " << c.doc;
  }
}

TEST(EmfValidatorTest, Distributions) {
  const std::string d =
      R"({"Values":[40,97],"Counts":[2,1],"Max":97,"Min":40,"Count":3,"Sum":177})";
  const std::string g = Replace(kGood, "[40,42,97]", d);
  EXPECT_EQ(ValidateEmf(g, {}), std::vector<std::string>{});
  struct Case {
    std::string from, to, expect;
  };
  const Case cases[] = {
      {R"(,"Sum":177)", "", "needs exactly"},
      {R"("Counts":[2,1])", R"("Counts":[2])", "equally long"},
      {R"("Counts":[2,1])", R"("Counts":[2,0])", "positive"},
      {R"("Count":3)", R"("Count":4)", "add up to 3"},
      {R"("Max":97)", R"("Max":90)", "outside [Min, Max]"},
      {R"("Values":[40,97])", R"("Values":[40,40])", "twice"},
      {R"("Min":40)", R"("Min":"40")", "must be numbers"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> errors = ValidateEmf(Replace(g, c.from, c.to), {});
    bool found = false;
    for (const auto& e : errors) found = found || e.find(c.expect) != std::string::npos;
    EXPECT_TRUE(found) << "expected \"" << c.expect << "\" for " << c.to;
  }
}

TEST(EmfValidatorTest, LimitsOnCountsSizeAndTime) {
  std::string metrics, members;
  for (int i = 0; i < 101; ++i) {
    metrics += (i ? "," : "") + std::string("{\"Name\":\"m") + std::to_string(i) + "\"}";
    members += ",\"m" + std::to_string(i) + "\":1";
  }
  const std::string many = R"({"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"a",)"
                           R"("Dimensions":[[]],"Metrics":[)" +
                           metrics + "]}]}" + members + "}";
  EXPECT_FALSE(ValidateEmf(many, {}).empty());
  EmfCheckOptions small;
  small.max_bytes = 100;
  EXPECT_FALSE(ValidateEmf(kGood, small).empty());
  EmfCheckOptions now;
  now.now_ms = 1700000000000LL + 15LL * 86400 * 1000;  // 15 days later
  EXPECT_FALSE(ValidateEmf(kGood, now).empty());
  now.now_ms = 1700000000000LL + 3600 * 1000;
  EXPECT_TRUE(ValidateEmf(kGood, now).empty());
}

}  // namespace
}  // namespace nvmlx::testing
