// The --emf-* flags of config/options.h.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/options.h"
#include "config/options_test_fixture.h"

namespace nvmlx::config {
namespace {

using test::Parse;

TEST(EmfOptionsTest, DefaultsAreOff) {
  Result<Options> o = Parse({});
  ASSERT_TRUE(o.ok());
  EXPECT_TRUE(o->emf.outputs.empty());
  EXPECT_TRUE(o->emf.counters_delta);
  EXPECT_FALSE(o->emf.high_resolution);
  EXPECT_EQ(o->emf.service, "nvidia-dcgm-exporter");
  EXPECT_EQ(o->emf.job, "kubernetes-pod-dcgm-exporter");
  EXPECT_EQ(o->emf.queue_size, 10000);
}

TEST(EmfOptionsTest, RepeatableOutputsAndValues) {
  Result<Options> o = Parse({"--emf-output",
                             "tcp://127.0.0.1:25888",
                             "-emf-output=stdout, file:/x",
                             "--emf-counters",
                             "raw",
                             "--emf-storage-resolution=1",
                             "--emf-cluster-name",
                             "c1",
                             "--emf-config",
                             "/r.yaml",
                             "--emf-log-group",
                             "/g",
                             "--emf-log-stream",
                             "s",
                             "--emf-file-keep",
                             "0",
                             "--emf-file-max-bytes",
                             "8192",
                             "--emf-queue-size",
                             "7"});
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->emf.outputs,
            (std::vector<std::string>{"tcp://127.0.0.1:25888", "stdout", "file:/x"}));
  EXPECT_FALSE(o->emf.counters_delta);
  EXPECT_TRUE(o->emf.high_resolution);
  EXPECT_EQ(o->emf.cluster_name, "c1");
  EXPECT_EQ(o->emf.config_file, "/r.yaml");
  EXPECT_EQ(o->emf.log_group, "/g");
  EXPECT_EQ(o->emf.log_stream, "s");
  EXPECT_EQ(o->emf.file_keep, 0);
  EXPECT_EQ(o->emf.file_max_bytes, 8192u);
  EXPECT_EQ(o->emf.queue_size, 7);
}

TEST(EmfOptionsTest, EnvironmentAndPrecedence) {
  Result<Options> o =
      Parse({"--emf-cluster-name", "flag"}, {{"NVML_EXPORTER_EMF_OUTPUT", "udp://h:1,stdout"},
                                             {"NVML_EXPORTER_EMF_CLUSTER_NAME", "env"},
                                             {"NVML_EXPORTER_EMF_COUNTERS", "raw"}});
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->emf.outputs, (std::vector<std::string>{"udp://h:1", "stdout"}));
  EXPECT_EQ(o->emf.cluster_name, "flag");
  EXPECT_FALSE(o->emf.counters_delta);
}

TEST(EmfOptionsTest, SchemaAndNodeIdentity) {
  Result<Options> o = Parse({});
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->emf.schema, Options::Emf::Schema::kPrometheus);
  o = Parse({"--emf-schema", "container-insights", "--emf-instance-type", "g5.2xlarge"},
            {{"NVML_EXPORTER_EMF_INSTANCE_ID", "i-0abc"}});
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->emf.schema, Options::Emf::Schema::kContainerInsights);
  EXPECT_EQ(o->emf.instance_id, "i-0abc");
  EXPECT_EQ(o->emf.instance_type, "g5.2xlarge");
  EXPECT_FALSE(o->emf.histograms);
  o = Parse({"--emf-schema=container-insights", "--emf-histograms"});
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_TRUE(o->emf.histograms);
  o = Parse({}, {{"NVML_EXPORTER_EMF_SCHEMA", "prometheus"}});
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->emf.schema, Options::Emf::Schema::kPrometheus);
}

TEST(EmfOptionsTest, BadValuesNameTheFlag) {
  struct Bad {
    std::initializer_list<const char*> args;
    const char* expect;
  };
  for (const Bad& b : {
           Bad{{"--emf-counters", "cumulative"},
               "--emf-counters: \"cumulative\" is not delta or raw"},
           Bad{{"--emf-storage-resolution", "10"}, "expected 60 or 1"},
           Bad{{"--emf-queue-size", "0"}, "--emf-queue-size: \"0\" is not a whole number from 1"},
           Bad{{"--emf-file-max-bytes", "12x"}, "--emf-file-max-bytes"},
           Bad{{"--emf-service="}, "--emf-service: must not be empty"},
           Bad{{"--emf-histograms"},
               "--emf-histograms: applies to --emf-schema container-insights"},
           Bad{{"--emf-schema", "insights"},
               "--emf-schema: \"insights\" is not an EMF schema (expected prometheus or "
               "container-insights)"},
       }) {
    Result<Options> o = Parse(b.args);
    ASSERT_FALSE(o.ok()) << b.expect;
    EXPECT_NE(o.status().message().find(b.expect), std::string::npos) << o.status().message();
  }
}

TEST(EmfOptionsTest, HelpListsTheFlags) {
  Result<Options> o = Parse({"--help"});
  ASSERT_TRUE(o.ok());
  for (const char* flag : {"--emf-output SINK", "--emf-config FILE", "--emf-cluster-name",
                           "--emf-counters", "NVML_EXPORTER_EMF_OUTPUT"}) {
    EXPECT_NE(o->help_text.find(flag), std::string::npos) << flag;
  }
}

}  // namespace
}  // namespace nvmlx::config
