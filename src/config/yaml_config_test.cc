#include "config/yaml_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "config/options_test_fixture.h"

namespace nvmlx::config {
namespace {

using std::chrono::milliseconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kV1[] = R"(version: 1
metrics:
  file: /etc/dcgm-exporter/dcp-metrics-included.csv
  enableExporterMetrics: true
collection:
  interval: 15s
  retention:
    maxAge: 5m
    maxSamples: 3
  watchGroups:
    - name: fast-thermals
      interval: 1s
      fields:
        - DCGM_FI_DEV_GPU_TEMP
        - DCGM_FI_DEV_POWER_*
      retention:
        maxAge: 0s
        maxSamples: 2
    - name: slow
      interval: 1m
      fields: [DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION]
sources:
  dcgm:
    detectBindUnbind:
      enabled: true
      pollInterval: 250ms
server:
  maxConcurrentScrapes: 8
)";

constexpr char kV2[] = R"(version: 2
# comments anywhere
metrics:
  fields:
    - name: DCGM_FI_DEV_GPU_TEMP
      prometheusType: gauge
      help: GPU temperature (in C).
    - name: DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION
      prometheusType: counter
      help: "Total energy, in mJ, since the driver loaded, \"quoted\", with a comma"
  enableExporterMetrics: false
sources:
  dcgm:
    watch:
      maxKeepAge: 10m
      maxKeepSamples: 0
    detectBindUnbind:
      enabled: false
collections:
  - name: scrape
    every: 45s
    sources:
      dcgm:
        watch:
          maxKeepSamples: 4
    metrics:
      include: ["*"]
  - name: fast
    every: 500ms
    metrics:
      include:
        - DCGM_FI_DEV_GPU_TEMP
  - name: slow
    every: 2m30s
    sources:
      dcgm:
        watch:
          maxKeepAge: 0s
          maxKeepSamples: 2
    metrics:
      include: [DCGM_FI_DEV_TOTAL_*]
server:
  maxConcurrentScrapes: 32
)";

Result<YamlConfig> ParseText(const std::string& text) {
  return ParseYamlConfig(text, "exporter.yaml");
}

// The message of a file that must be refused.
std::string ErrorOf(const std::string& text) {
  Result<YamlConfig> r = ParseText(text);
  if (r.ok()) return "<parsed>";
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  return r.status().message();
}

TEST(YamlConfig, Version1FullExample) {
  Result<YamlConfig> r = ParseText(kV1);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const YamlConfig& c = *r;
  EXPECT_EQ(c.version, 1);
  EXPECT_EQ(c.metrics_file, "/etc/dcgm-exporter/dcp-metrics-included.csv");
  EXPECT_TRUE(c.metrics_fields.empty());
  EXPECT_EQ(c.enable_exporter_metrics, true);
  EXPECT_EQ(c.collect_interval, milliseconds(15000));
  EXPECT_EQ(c.watch.max_keep_age, std::chrono::minutes(5));
  EXPECT_EQ(c.watch.max_keep_samples, 3);
  ASSERT_EQ(c.collections.size(), 2u);
  EXPECT_EQ(c.collections[0].name, "fast-thermals");
  EXPECT_EQ(c.collections[0].every, milliseconds(1000));
  EXPECT_THAT(c.collections[0].patterns,
              ElementsAre("DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_*"));
  EXPECT_EQ(c.collections[0].watch.max_keep_age, std::chrono::nanoseconds(0));
  EXPECT_EQ(c.collections[0].watch.max_keep_samples, 2);
  EXPECT_EQ(c.collections[0].key, "collection.watchGroups[0]");
  EXPECT_EQ(c.collections[0].line, 11);
  EXPECT_EQ(c.collections[1].name, "slow");
  EXPECT_EQ(c.collections[1].every, milliseconds(60000));
  EXPECT_THAT(c.collections[1].patterns, ElementsAre("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"));
  EXPECT_TRUE(c.collections[1].watch.empty());
  EXPECT_EQ(c.detect_bind_unbind, true);
  EXPECT_EQ(c.bind_unbind_poll_interval, milliseconds(250));
  EXPECT_EQ(c.max_concurrent_scrapes, 8);
}

TEST(YamlConfig, Version2FullExample) {
  Result<YamlConfig> r = ParseText(kV2);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const YamlConfig& c = *r;
  EXPECT_EQ(c.version, 2);
  EXPECT_FALSE(c.metrics_file);
  ASSERT_EQ(c.metrics_fields.size(), 2u);
  EXPECT_EQ(c.metrics_fields[0].name, "DCGM_FI_DEV_GPU_TEMP");
  EXPECT_EQ(c.metrics_fields[0].prometheus_type, "gauge");
  EXPECT_EQ(c.metrics_fields[0].help, "GPU temperature (in C).");
  EXPECT_EQ(c.metrics_fields[0].line, 5);
  EXPECT_EQ(c.metrics_fields[1].line, 8);
  EXPECT_EQ(c.enable_exporter_metrics, false);
  EXPECT_EQ(c.watch.max_keep_age, std::chrono::minutes(10));
  EXPECT_EQ(c.watch.max_keep_samples, 0);
  EXPECT_EQ(c.detect_bind_unbind, false);
  EXPECT_FALSE(c.bind_unbind_poll_interval);
  // The all-fields collection is the collection interval and the default retention, not a group.
  EXPECT_EQ(c.collect_interval, milliseconds(45000));
  EXPECT_FALSE(c.default_collection_watch.max_keep_age);
  EXPECT_EQ(c.default_collection_watch.max_keep_samples, 4);
  ASSERT_EQ(c.collections.size(), 2u);
  EXPECT_EQ(c.collections[0].name, "fast");
  EXPECT_EQ(c.collections[0].every, milliseconds(500));
  EXPECT_EQ(c.collections[0].key, "collections[1]");
  EXPECT_EQ(c.collections[0].line, 28);
  EXPECT_EQ(c.collections[1].name, "slow");
  EXPECT_EQ(c.collections[1].every, milliseconds(150000));
  EXPECT_THAT(c.collections[1].patterns, ElementsAre("DCGM_FI_DEV_TOTAL_*"));
  EXPECT_EQ(c.collections[1].watch.max_keep_samples, 2);
  EXPECT_EQ(c.max_concurrent_scrapes, 32);
}

// The inline fields become the rows a CSV with the same three columns gives, each on the YAML
// line of its entry.
TEST(YamlConfig, InlineFieldsAreCsvRowsOnTheirYamlLines) {
  Result<YamlConfig> r = ParseText(kV2);
  ASSERT_TRUE(r.ok()) << r.status().message();
  Result<std::vector<CollectorEntry>> rows =
      ParseCollectorsCsv(InlineFieldsCsv(*r), "exporter.yaml", nullptr);
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].name, "DCGM_FI_DEV_GPU_TEMP");
  EXPECT_EQ((*rows)[0].type, MetricType::kGauge);
  EXPECT_EQ((*rows)[0].help, "GPU temperature (in C).");
  EXPECT_EQ((*rows)[0].line, 5);
  EXPECT_EQ((*rows)[1].name, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION");
  EXPECT_EQ((*rows)[1].type, MetricType::kCounter);
  EXPECT_EQ((*rows)[1].help,
            "Total energy, in mJ, since the driver loaded, \"quoted\", with a comma");
  EXPECT_EQ((*rows)[1].line, 8);
  // The same text as a CSV file gives the same rows.
  Result<std::vector<CollectorEntry>> csv = ParseCollectorsCsv(
      "DCGM_FI_DEV_GPU_TEMP, gauge, GPU temperature (in C).\n"
      "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION, counter,\"Total energy, in mJ, since the driver "
      "loaded, \"\"quoted\"\", with a comma\"\n",
      "f.csv", nullptr);
  ASSERT_TRUE(csv.ok()) << csv.status().message();
  ASSERT_EQ(csv->size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ((*csv)[i].field, (*rows)[i].field);
    EXPECT_EQ((*csv)[i].help, (*rows)[i].help);
  }
}

// A help text over several YAML lines stays one row, and the rows after it keep their lines.
TEST(YamlConfig, InlineFieldWithMultiLineHelp) {
  Result<YamlConfig> r = ParseText(
      "version: 2\nmetrics:\n  fields:\n    - name: DCGM_FI_DEV_GPU_TEMP\n"
      "      prometheusType: gauge\n      help: |\n        two\n        lines\n"
      "    - name: DCGM_FI_DEV_POWER_USAGE\n      prometheusType: gauge\n      help: p\n");
  ASSERT_TRUE(r.ok()) << r.status().message();
  Result<std::vector<CollectorEntry>> rows =
      ParseCollectorsCsv(InlineFieldsCsv(*r), "exporter.yaml", nullptr);
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].help, "two\nlines");
  EXPECT_EQ((*rows)[0].line, 4);
  EXPECT_EQ((*rows)[1].name, "DCGM_FI_DEV_POWER_USAGE");
  EXPECT_EQ((*rows)[1].line, 9);
}

TEST(YamlConfig, InlineFieldErrorsPointAtTheYamlLine) {
  Result<YamlConfig> r = ParseText(
      "version: 2\nmetrics:\n  fields:\n    - name: DCGM_FI_DEV_GPU_TEMP\n"
      "      prometheusType: gauge\n      help: t\n    - name: DCGM_FI_DEV_GPU_TMEP\n"
      "      prometheusType: gauge\n      help: t\n");
  ASSERT_TRUE(r.ok()) << r.status().message();
  Result<std::vector<CollectorEntry>> rows =
      ParseCollectorsCsv(InlineFieldsCsv(*r), "exporter.yaml", nullptr, UnknownFields::kFatal);
  ASSERT_FALSE(rows.ok());
  EXPECT_THAT(rows.status().message(), HasSubstr("exporter.yaml:7: "));
  EXPECT_THAT(rows.status().message(), HasSubstr("DCGM_FI_DEV_GPU_TMEP"));
}

struct BadFile {
  const char* what;
  std::string text;
  std::string error;
};

// Every class of error dcgm-exporter refuses a file for (docs/upstream/yaml-config.md), and ours
// on top, each with file, line and key path.
TEST(YamlConfig, ErrorsNameFileLineAndKey) {
  const std::vector<BadFile> cases = {
      {"not YAML", "version: 2\nmetrics: [\n",
       "exporter.yaml:3: not valid YAML: end of sequence flow not found"},
      {"empty", "# nothing\n", "exporter.yaml: the file is empty (expected at least `version: 2`)"},
      {"two documents", "version: 2\n---\nversion: 2\n",
       "exporter.yaml:2: content after the first YAML document (a second document after ---, or "
       "a stray ',' at the top level); the file must hold one"},
      // yaml-cpp 0.7's LoadAll never returns on these (the fuzzer's find): an error here.
      {"flow node then comma", "\"version\",b\n",
       "exporter.yaml:1: content after the first YAML document (a second document after ---, or "
       "a stray ',' at the top level); the file must hold one"},
      {"tag then comma", "!t,b\n",
       "exporter.yaml:1: content after the first YAML document (a second document after ---, or "
       "a stray ',' at the top level); the file must hold one"},
      {"not a mapping", "- version: 2\n",
       "exporter.yaml:1: expected a mapping (version: 2, metrics: ..., ...) at the top"},
      {"no version", "metrics:\n  file: /x.csv\n",
       "exporter.yaml:1: version: missing (expected version: 1 or version: 2)"},
      {"bad version", "version: 3\n",
       "exporter.yaml:1: version: \"3\" is not a supported version (expected 1 or 2)"},
      {"unknown key", "version: 2\nmetrics:\n  file: /x.csv\n  fiels: []\n",
       "exporter.yaml:4: unknown key \"fiels\" in metrics (version 2 knows file, fields or "
       "enableExporterMetrics)"},
      {"unknown top-level key", "version: 2\nunknown: true\n",
       "exporter.yaml:2: unknown key \"unknown\" at the top level (version 2 knows version, "
       "metrics, collections, sources or server)"},
      {"v1 block in v2", "version: 2\ncollection:\n  interval: 30s\n",
       "exporter.yaml:2: unknown key \"collection\" at the top level (version 2 knows version, "
       "metrics, collections, sources or server); that is version 1's block: version 2 has "
       "collections[]"},
      {"v2 list in v1", "version: 1\ncollections: []\n",
       "exporter.yaml:2: unknown key \"collections\" at the top level (version 1 knows version, "
       "metrics, collection, sources or server); that is version 2's list: version 1 has "
       "collection.watchGroups[]"},
      {"v2 watch in v1", "version: 1\nsources:\n  dcgm:\n    watch:\n      maxKeepAge: 1m\n",
       "exporter.yaml:4: unknown key \"watch\" in sources.dcgm (version 1 knows "
       "detectBindUnbind); version 1 sets retention in collection.retention"},
      {"duplicate key", "version: 2\nmetrics:\n  file: /a.csv\n  file: /b.csv\n",
       "exporter.yaml:4: metrics.file: repeated key (first at line 3)"},
      {"non-scalar key", "version: 2\n? [metrics]\n: value\n",
       "exporter.yaml:2: a key must be a plain string"},
      {"file and fields",
       "version: 2\nmetrics:\n  file: /x.csv\n  fields:\n    - name: A\n"
       "      prometheusType: gauge\n      help: h\n",
       "exporter.yaml:3: metrics: file and fields exclude each other (give one: a CSV or the "
       "list)"},
      {"empty metrics", "version: 2\nmetrics:\n  file: \"  \"\n",
       "exporter.yaml:3: metrics: expected file, fields or enableExporterMetrics"},
      {"field without help",
       "version: 2\nmetrics:\n  fields:\n    - name: A\n"
       "      prometheusType: gauge\n",
       "exporter.yaml:4: metrics.fields[0].help: is required"},
      {"repeated field",
       "version: 2\nmetrics:\n  fields:\n    - name: A\n"
       "      prometheusType: gauge\n      help: h\n    - name: \" A \"\n"
       "      prometheusType: gauge\n      help: h\n",
       "exporter.yaml:7: metrics.fields[1].name: \"A\" repeats metrics.fields[0] (line 4)"},
      {"bad duration",
       "version: 2\ncollections:\n  - name: scrape\n    every: 30s\n"
       "    metrics:\n      include: [\"*\"]\n  - name: x\n    every: 5x\n"
       "    metrics:\n      include: [A]\n",
       "exporter.yaml:8: collections[1].every: \"5x\" is not a duration (expected e.g. 500ms, 5s, "
       "1m)"},
      {"duration without unit",
       "version: 2\ncollections:\n  - name: s\n    every: 30000\n"
       "    metrics:\n      include: [\"*\"]\n",
       "exporter.yaml:4: collections[0].every: \"30000\" is not a duration (expected e.g. 500ms, "
       "5s, 1m)"},
      {"sub-millisecond",
       "version: 2\ncollections:\n  - name: s\n    every: 1500us\n"
       "    metrics:\n      include: [\"*\"]\n",
       "exporter.yaml:4: collections[0].every: \"1500us\" is not a whole number of milliseconds"},
      {"zero cadence", "version: 1\ncollection:\n  interval: 0s\n",
       "exporter.yaml:3: collection.interval: \"0s\" must be greater than 0"},
      {"below 100ms",
       "version: 1\ncollection:\n  watchGroups:\n    - name: g\n"
       "      interval: 50ms\n      fields: [A]\n",
       "exporter.yaml:5: collection.watchGroups[0].interval: \"50ms\" is below the minimum of "
       "100ms (as -c/--collect-interval)"},
      {"no collections", "version: 2\ncollections: []\n",
       "exporter.yaml:2: collections: must list at least one collection"},
      {"collection without include",
       "version: 2\ncollections:\n  - name: s\n    every: 1s\n"
       "    metrics: {}\n",
       "exporter.yaml:5: collections[0].metrics.include: is required"},
      {"empty include",
       "version: 2\ncollections:\n  - name: s\n    every: 1s\n"
       "    metrics:\n      include: []\n",
       "exporter.yaml:6: collections[0].metrics.include: must list at least one field name or "
       "pattern"},
      {"blank pattern",
       "version: 2\ncollections:\n  - name: s\n    every: 1s\n"
       "    metrics:\n      include: [A, \" \"]\n",
       "exporter.yaml:6: collections[0].metrics.include[1]: an empty pattern (expected a field "
       "name or glob)"},
      {"bad glob",
       "version: 2\ncollections:\n  - name: s\n    every: 1s\n"
       "    metrics:\n      include: [\"DCGM_FI_[\"]\n",
       "exporter.yaml:6: collections[0].metrics.include[0]: \"DCGM_FI_[\" is not a valid pattern "
       "(Go path.Match: an unclosed or empty [class], a '-' or ']' where a class member belongs, "
       "or a trailing '\\')"},
      {"no name", "version: 2\ncollections:\n  - every: 1s\n    metrics:\n      include: [A]\n",
       "exporter.yaml:3: collections[0].name: is required"},
      {"repeated name",
       "version: 2\ncollections:\n  - name: a\n    every: 1s\n"
       "    metrics:\n      include: [A]\n  - name: a\n    every: 2s\n"
       "    metrics:\n      include: [B]\n",
       "exporter.yaml:7: collections[1].name: \"a\" repeats collections[0] (line 3); names must "
       "be unique"},
      {"two all-fields",
       "version: 2\ncollections:\n  - name: a\n    every: 1s\n"
       "    metrics:\n      include: [\"*\"]\n  - name: b\n    every: 2s\n"
       "    metrics:\n      include: [\"*\"]\n",
       "exporter.yaml:7: collections[1].metrics.include: a second all-fields collection "
       "([\"*\"]); collections[0] \"a\" is one already"},
      {"watch keeps nothing",
       "version: 2\ncollections:\n  - name: a\n    every: 1s\n"
       "    sources:\n      dcgm:\n        watch:\n          maxKeepAge: 0s\n"
       "          maxKeepSamples: 0\n    metrics:\n      include: [A]\n",
       "exporter.yaml:8: collections[0].sources.dcgm.watch: maxKeepAge and maxKeepSamples cannot "
       "both be zero (that keeps no value)"},
      {"negative age", "version: 2\nsources:\n  dcgm:\n    watch:\n      maxKeepAge: -1s\n",
       "exporter.yaml:5: sources.dcgm.watch.maxKeepAge: must not be negative"},
      {"samples too large",
       "version: 2\nsources:\n  dcgm:\n    watch:\n"
       "      maxKeepSamples: 2147483648\n",
       "exporter.yaml:5: sources.dcgm.watch.maxKeepSamples: must not exceed 2147483647"},
      {"samples not a number",
       "version: 2\nsources:\n  dcgm:\n    watch:\n"
       "      maxKeepSamples: many\n",
       "exporter.yaml:5: sources.dcgm.watch.maxKeepSamples: \"many\" is not a whole number"},
      {"poll interval zero",
       "version: 1\nsources:\n  dcgm:\n    detectBindUnbind:\n"
       "      pollInterval: 0s\n",
       "exporter.yaml:5: sources.dcgm.detectBindUnbind.pollInterval: must be greater than 0"},
      {"not a boolean",
       "version: 2\nsources:\n  dcgm:\n    detectBindUnbind:\n"
       "      enabled: maybe\n",
       "exporter.yaml:5: sources.dcgm.detectBindUnbind.enabled: \"maybe\" is not a boolean "
       "(expected true or false)"},
      {"scrapes zero", "version: 2\nserver:\n  maxConcurrentScrapes: 0\n",
       "exporter.yaml:3: server.maxConcurrentScrapes: must be greater than 0"},
      {"list where a mapping belongs", "version: 2\nserver: [1]\n",
       "exporter.yaml:2: server: expected a mapping (key: value lines)"},
      {"mapping where a list belongs", "version: 2\ncollections:\n  name: a\n",
       "exporter.yaml:3: collections: expected a list (- item lines or [a, b])"},
      {"mapping where a value belongs", "version: 2\nmetrics:\n  file:\n    a: b\n",
       "exporter.yaml:4: metrics.file: expected a single value, not a list or mapping"},
  };
  for (const BadFile& c : cases) {
    EXPECT_EQ(ErrorOf(c.text), c.error) << c.what;
  }
}

TEST(YamlConfig, NullBlocksAreAbsent) {
  Result<YamlConfig> r = ParseText("version: 2\nmetrics:\ncollections:\nsources:\nserver:\n");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->metrics_file);
  EXPECT_TRUE(r->collections.empty());
  EXPECT_FALSE(r->collect_interval);
  EXPECT_FALSE(r->max_concurrent_scrapes);
}

TEST(YamlConfig, UnreadableFileNamesThePath) {
  Result<YamlConfig> r = LoadYamlConfig("/nonexistent/exporter.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr("/nonexistent/exporter.yaml"));
}

// A 50 MB value once took 15 s to parse and was printed whole in the error. A file over the cap
// (kMaxConfigFileBytes) is refused from its size, before it is read; a value that fits is quoted
// by its first bytes only.
TEST(YamlConfig, HugeValuesFailFastWithShortMessages) {
  const std::string huge(50u << 20, 'x');
  const std::string path = ::testing::TempDir() + "/huge_exporter.yaml";
  {
    std::ofstream out(path, std::ios::binary);
    out << "version: " << huge << "\n";
  }
  for (const bool from_file : {true, false}) {
    SCOPED_TRACE(from_file ? "file" : "text");
    const auto start = std::chrono::steady_clock::now();
    Result<YamlConfig> r = from_file ? LoadYamlConfig(path) : ParseText("version: " + huge);
    const auto took = std::chrono::steady_clock::now() - start;
    std::cerr << "took " << std::chrono::duration<double>(took).count() << " s, message "
              << (r.ok() ? 0 : r.status().message().size()) << " bytes\n";
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_LT(r.status().message().size(), 500u) << r.status().message().substr(0, 600);
    EXPECT_THAT(r.status().message(), HasSubstr("larger than the 1 MiB"));
    if (from_file) {
      EXPECT_THAT(r.status().message(), HasSubstr(path));
    }
    EXPECT_LT(took, std::chrono::seconds(2));
  }
  std::remove(path.c_str());
  // Under the cap: the value is quoted by its first 64 bytes and its length.
  const std::string message = ErrorOf("version: " + std::string(900000, 'y'));
  EXPECT_LT(message.size(), 500u);
  EXPECT_THAT(message, HasSubstr("\"" + std::string(64, 'y') + "\"... (900000 bytes)"));
}

// Go's path.Match, as dcgm-exporter matches field patterns.
TEST(FieldPattern, GoPathMatchSemantics) {
  struct Case {
    const char* pattern;
    const char* name;
    bool match;
  };
  const Case cases[] = {
      {"DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_GPU_TEMP", true},
      {"DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_GPU_TEMPX", false},  // whole name, not a prefix
      {"DCGM_FI_DEV_GPU", "DCGM_FI_DEV_GPU_TEMP", false},
      {"DCGM_FI_DEV_NVLINK_*", "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", true},
      {"*", "DCGM_FI_DEV_GPU_TEMP", true},
      {"*", "a/b", false},  // a star never crosses '/'
      {"*_TEMP", "DCGM_FI_DEV_MEMORY_TEMP", true},
      {"*_TEMP", "DCGM_FI_DEV_TEMP_X", false},
      {"DCGM_*_UTIL*", "DCGM_FI_DEV_MEM_COPY_UTIL", true},
      {"DCGM_FI_DEV_?PU_UTIL", "DCGM_FI_DEV_GPU_UTIL", true},
      {"DCGM_FI_DEV_?PU_UTIL", "DCGM_FI_DEV_GGPU_UTIL", false},
      {"DCGM_FI_PROF_[DP]*", "DCGM_FI_PROF_DRAM_ACTIVE", true},
      {"DCGM_FI_PROF_[DP]*", "DCGM_FI_PROF_GR_ENGINE_ACTIVE", false},
      {"DCGM_FI_PROF_[^DP]*", "DCGM_FI_PROF_GR_ENGINE_ACTIVE", true},
      {"DCGM_FI_DEV_FB_[A-Z]SED", "DCGM_FI_DEV_FB_USED", true},
      {"DCGM_FI_DEV_FB_[a-z]SED", "DCGM_FI_DEV_FB_USED", false},
      {"DCGM\\_FI*", "DCGM_FI_X", true},
      {"a*b*c", "aXXbYYc", true},
      {"a*b*c", "aXXbYY", false},
      {"", "", true},
      {"", "A", false},
  };
  for (const Case& c : cases) {
    EXPECT_TRUE(CheckFieldPattern(c.pattern).ok()) << c.pattern;
    EXPECT_EQ(MatchFieldPattern(c.pattern, c.name), c.match) << c.pattern << " ~ " << c.name;
  }
  for (const char* bad : {"[", "DCGM_[A-", "a[]b", "x\\", "[a-]", "[^]", "ok*[z"}) {
    EXPECT_FALSE(CheckFieldPattern(bad).ok()) << bad;
    EXPECT_FALSE(MatchFieldPattern(bad, "a")) << bad;
  }
}

std::vector<CollectorEntry> Rows(const std::string& csv) {
  Result<std::vector<CollectorEntry>> rows = ParseCollectorsCsv(csv, "c.csv", nullptr);
  EXPECT_TRUE(rows.ok()) << rows.status().message();
  return rows.ok() ? *rows : std::vector<CollectorEntry>{};
}

TEST(WatchGroups, EachFieldInOneGroupAndEachGroupMatchesSome) {
  const std::vector<CollectorEntry> rows = Rows(
      "DCGM_FI_DEV_GPU_TEMP, gauge, t\nDCGM_FI_DEV_POWER_USAGE, gauge, p\n"
      "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION, counter, e\n");
  using G = Options::WatchGroup;
  const G fast{"fast",
               milliseconds(1000),
               {"DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_*"},
               "exporter.yaml:9"};
  const G slow{"slow", milliseconds(60000), {"DCGM_FI_DEV_TOTAL_*"}, "exporter.yaml:14"};
  EXPECT_TRUE(CheckWatchGroups({fast, slow}, rows, "c.csv").ok());
  EXPECT_TRUE(CheckWatchGroups({}, rows, "c.csv").ok());

  const G greedy{"greedy", milliseconds(5000), {"DCGM_FI_DEV_*"}, "exporter.yaml:20"};
  Status both = CheckWatchGroups({fast, greedy}, rows, "c.csv");
  EXPECT_EQ(both.message(),
            "exporter.yaml:20: collection \"greedy\" matches DCGM_FI_DEV_GPU_TEMP (c.csv:1), "
            "which collection \"fast\" (exporter.yaml:9) matches too; a field belongs to one "
            "collection at most");

  const G none{"nvlink", milliseconds(5000), {"DCGM_FI_DEV_NVLINK_*", "X"}, "exporter.yaml:30"};
  EXPECT_EQ(CheckWatchGroups({fast, none}, rows, "c.csv").message(),
            "exporter.yaml:30: collection \"nvlink\" matches none of the fields of c.csv "
            "(patterns: DCGM_FI_DEV_NVLINK_*, X)");
}

// The shipped example is a valid version 2 file whose collections fit the default CSV.
TEST(YamlConfig, ShippedExampleFitsTheDefaultCounters) {
  const std::string etc = std::string(NVMLX_SOURCE_DIR) + "/etc/";
  Result<YamlConfig> y = LoadYamlConfig(etc + "exporter-config.yaml");
  ASSERT_TRUE(y.ok()) << y.status().message();
  EXPECT_EQ(y->version, 2);
  EXPECT_EQ(y->collect_interval, milliseconds(10000));
  ASSERT_EQ(y->collections.size(), 1u);
  EXPECT_EQ(y->collections[0].every, milliseconds(30000));
  Result<std::vector<CollectorEntry>> rows = LoadCollectorsCsv(etc + "default-counters.csv");
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  std::vector<Options::WatchGroup> groups;
  for (const YamlCollection& c : y->collections) {
    groups.push_back({c.name, c.every, c.patterns, y->file + ":" + std::to_string(c.line)});
  }
  EXPECT_TRUE(CheckWatchGroups(groups, *rows, "default-counters.csv").ok());
  // The costly fields of the default list are the ones it slows down.
  std::vector<std::string> slowed;
  for (const CollectorEntry& row : *rows) {
    for (const std::string& p : groups[0].patterns) {
      if (MatchFieldPattern(p, row.name)) slowed.push_back(row.name);
    }
  }
  EXPECT_THAT(slowed,
              ElementsAre("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
                          "DCGM_FI_DEV_VGPU_LICENSE_STATUS"));
}

// --- --config-file through ParseOptions: flag > env var > YAML > default.

class ConfigFileOptions : public ::testing::Test {
 protected:
  std::string Write(const std::string& text) {
    const std::string path = ::testing::TempDir() + "/" +
                             ::testing::UnitTest::GetInstance()->current_test_info()->name() +
                             ".yaml";
    std::ofstream(path) << text;
    return path;
  }
};

TEST_F(ConfigFileOptions, YamlBeatsDefaults) {
  const std::string path = Write(kV1);
  Result<Options> r = test::Parse({"--config-file", path.c_str()});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Options& o = *r;
  EXPECT_EQ(o.config_file, path);
  EXPECT_EQ(o.collectors, "/etc/dcgm-exporter/dcp-metrics-included.csv");
  EXPECT_TRUE(o.inline_collectors_csv.empty());
  EXPECT_EQ(o.collect_interval_ms, 15000);
  EXPECT_TRUE(o.enable_exporter_metrics);
  EXPECT_EQ(o.watch_max_keep_age, std::chrono::minutes(5));
  EXPECT_EQ(o.watch_max_keep_samples, 3);
  EXPECT_TRUE(o.enable_gpu_bind_unbind_watch);
  EXPECT_EQ(o.gpu_bind_unbind_poll_interval, milliseconds(250));
  EXPECT_EQ(o.max_concurrent_scrapes, 8);
  ASSERT_EQ(o.watch_groups.size(), 2u);
  EXPECT_EQ(o.watch_groups[0].name, "fast-thermals");
  EXPECT_EQ(o.watch_groups[0].every, milliseconds(1000));
  EXPECT_THAT(o.watch_groups[0].patterns,
              ElementsAre("DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_*"));
  EXPECT_EQ(o.watch_groups[0].where, path + ":11");
  EXPECT_EQ(o.watch_groups[1].where, path + ":19");
}

TEST_F(ConfigFileOptions, EnvVarNamesTheFile) {
  const std::string path = Write(
      "version: 2\ncollections:\n  - name: all\n    every: 2s\n"
      "    metrics:\n      include: ['*']\n");
  Result<Options> r = test::Parse({}, {{"DCGM_EXPORTER_CONFIG_FILE", path}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->config_file, path);
  EXPECT_EQ(r->collect_interval_ms, 2000);
  EXPECT_TRUE(r->watch_groups.empty());
}

TEST_F(ConfigFileOptions, FlagAndEnvVarBeatYaml) {
  const std::string path = Write(kV1);
  // A flag beats the YAML.
  Result<Options> r = test::Parse({"--config-file", path.c_str(), "-c", "5000", "-f", "/my.csv",
                                   "--enable-gpu-bind-unbind-watch=false"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->collect_interval_ms, 5000);
  EXPECT_EQ(r->collectors, "/my.csv");
  EXPECT_FALSE(r->enable_gpu_bind_unbind_watch);
  EXPECT_EQ(r->gpu_bind_unbind_poll_interval, milliseconds(250));  // not set: the YAML's
  // An env var beats the YAML too.
  r = test::Parse({"--config-file", path.c_str()},
                  {{"DCGM_EXPORTER_INTERVAL", "7000"},
                   {"DCGM_EXPORTER_COLLECTORS", "/env.csv"},
                   {"DCGM_EXPORTER_GPU_BIND_UNBIND_POLL_INTERVAL", "2s"}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->collect_interval_ms, 7000);
  EXPECT_EQ(r->collectors, "/env.csv");
  EXPECT_EQ(r->gpu_bind_unbind_poll_interval, milliseconds(2000));
  EXPECT_TRUE(r->enable_gpu_bind_unbind_watch);  // not set: the YAML's
  // An empty env var counts as unset, as for every flag.
  r = test::Parse({"--config-file", path.c_str()}, {{"DCGM_EXPORTER_INTERVAL", ""}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->collect_interval_ms, 15000);
}

TEST_F(ConfigFileOptions, InlineFieldsReplaceTheCollectorsFile) {
  const std::string path = Write(kV2);
  Result<Options> r = test::Parse({"--config-file", path.c_str()});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->inline_collectors_source, path);
  Result<std::vector<CollectorEntry>> rows =
      ParseCollectorsCsv(r->inline_collectors_csv, r->inline_collectors_source, nullptr);
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[1].name, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION");
  EXPECT_EQ(r->collect_interval_ms, 45000);
  EXPECT_EQ(r->watch_max_keep_age, std::chrono::minutes(10));
  EXPECT_EQ(r->watch_max_keep_samples, 4);  // the all-fields collection's, over the global 0
  EXPECT_EQ(r->max_concurrent_scrapes, 32);
  EXPECT_FALSE(r->enable_exporter_metrics);
  // -f on the command line wins over metrics.fields.
  r = test::Parse({"--config-file", path.c_str(), "-f", "/my.csv"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->inline_collectors_csv.empty());
  EXPECT_EQ(r->collectors, "/my.csv");
}

TEST_F(ConfigFileOptions, ErrorsAreUsageErrorsNamingTheFile) {
  const std::string path = Write(
      "version: 2\nmetrics:\n  fields:\n    - name: DCGM_FI_NOPE\n"
      "      prometheusType: gauge\n      help: h\n");
  // An unknown name is skipped by default (the daemon warns when it loads the list) and refused
  // with --collectors-unknown-fields=fatal, naming the YAML line.
  Result<Options> r = test::Parse({"--config-file", path.c_str()});
  ASSERT_TRUE(r.ok()) << r.status().message();
  r = test::Parse({"--config-file", path.c_str(), "--collectors-unknown-fields=fatal"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(ExitCodeFor(r.status()), ExitCode::kUsage);
  EXPECT_THAT(r.status().message(), HasSubstr(path + ":4: "));
  EXPECT_THAT(r.status().message(), HasSubstr("DCGM_FI_NOPE"));

  r = test::Parse({"--config-file", "/nonexistent/x.yaml"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(ExitCodeFor(r.status()), ExitCode::kUsage);
  EXPECT_EQ(r.status().message(),
            "--config-file: /nonexistent/x.yaml: cannot open the configuration file");
  r = test::Parse({}, {{"DCGM_EXPORTER_CONFIG_FILE", "/nonexistent/x.yaml"}});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("DCGM_EXPORTER_CONFIG_FILE: /nonexistent/x.yaml"));

  r = test::Parse({"--config-file="});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "--config-file: must not be empty");

  // The global retention may not keep nothing once the YAML has set it.
  const std::string zero = Write(
      "version: 2\nsources:\n  dcgm:\n    watch:\n      maxKeepAge: 0s\n      maxKeepSamples: 0\n");
  r = test::Parse({"--config-file", zero.c_str()});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), zero +
                                      ":5: the field-watch retention keeps no value: its age "
                                      "and sample limits cannot both be zero");
  // A collection's own policy is judged with the global one it inherits from.
  const std::string inherits = Write(
      "version: 2\nsources:\n  dcgm:\n    watch:\n      maxKeepSamples: 0\n"
      "collections:\n  - name: a\n    every: 1s\n    sources:\n      dcgm:\n        watch:\n"
      "          maxKeepAge: 0s\n    metrics:\n      include: [A]\n");
  r = test::Parse({"--config-file", inherits.c_str()});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), inherits +
                                      ":12: collections[0]: with the global retention this "
                                      "keeps no value (its age and sample limits both zero)");
}

}  // namespace
}  // namespace nvmlx::config
