#include "render/emf_rules.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/text_file.h"

namespace nvmlx::render {
namespace {

// Reads and parses a rules file the way the daemon does (app/emf_pipeline.cc).
Result<EmfRules> LoadEmfRules(const std::string& path, std::vector<std::string>* warnings) {
  Result<std::string> text = config::ReadTextFile(path, "EMF rules file");
  if (!text.ok()) return text.status();
  return ParseEmfRules(*text, path, warnings);
}

using Sets = std::vector<std::vector<std::string>>;

std::string Data(const std::string& name) {
  return std::string(NVMLX_SOURCE_DIR) + "/testdata/emf/" + name;
}

EmfRules Parse(const std::string& text) {
  std::vector<std::string> warnings;
  Result<EmfRules> r = ParseEmfRules(text, "t.yaml", &warnings);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : EmfRules{};
}

// The labels our daemon gives a GPU held by a pod, with the CloudWatch extras (emf.h).
Labels PodLabels() {
  return {{"gpu", "0"},
          {"UUID", "GPU-1"},
          {"pci_bus_id", "00000000:18:00.0"},
          {"device", "nvidia0"},
          {"modelName", "NVIDIA H200"},
          {"hostname", "node1"},
          {"DCGM_FI_DRIVER_VERSION", "580.159.04"},
          {"container", "main"},
          {"namespace", "kube-system"},
          {"pod", "gpu-burn-c68d8c774-ltg9s"},
          {"ClusterName", "do-eks-yaml-g5"},
          {"NodeName", "node1"},
          {"Service", "nvidia-dcgm-exporter"},
          {"job", "kubernetes-pod-dcgm-exporter"},
          {"Namespace", "kube-system"}};
}

Labels Without(Labels l, const std::string& name) {
  std::erase_if(l, [&](const auto& kv) { return kv.first == name; });
  return l;
}
Labels With(Labels l, const std::string& name, const std::string& value) {
  l = Without(std::move(l), name);
  l.emplace_back(name, value);
  return l;
}

TEST(EmfRulesTest, ArticleDeclarationLoadsUnchanged) {
  std::vector<std::string> warnings;
  Result<EmfRules> r = LoadEmfRules(Data("article_cwagent.json"), &warnings);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(r->metric_namespace, "ContainerInsights/Prometheus");
  ASSERT_EQ(r->declarations.size(), 1u);
  EXPECT_EQ(r->declarations[0].metric_selectors.size(), 14u);
  EXPECT_EQ(r->declarations[0].dimensions,
            (Sets{{"ClusterName", "Namespace", "Service", "job", "pod"}}));
}

// The corrected agent config shipped in deploy/ keeps the article's declaration: it loads too.
TEST(EmfRulesTest, DeployedAgentConfigLoads) {
  Result<EmfRules> r = LoadEmfRules(
      std::string(NVMLX_SOURCE_DIR) + "/deploy/cloudwatch/prometheus/cwagentconfig.json", nullptr);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->declarations.size(), 1u);
  EXPECT_EQ(r->declarations[0].metric_selectors.size(), 14u);
}

// Each case: labels, metric names, the expected directives (dimension sets, selected names).
struct Case {
  const char* what;
  Labels labels;
  std::vector<std::string_view> names;
  std::vector<std::pair<Sets, std::vector<std::string_view>>> want;
};

void RunCases(const EmfRules& rules, const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    std::vector<EmfDirective> got = MatchRules(rules, c.labels, c.names, nullptr);
    std::vector<std::pair<Sets, std::vector<std::string_view>>> actual;
    for (const EmfDirective& d : got) {
      std::vector<std::string_view> names;
      for (size_t m : d.metrics) names.push_back(c.names[m]);
      actual.emplace_back(d.dimensions, names);
    }
    EXPECT_EQ(actual, c.want) << c.what;
  }
}

TEST(EmfRulesTest, ArticleDeclarationSemantics) {
  Result<EmfRules> r = LoadEmfRules(Data("article_cwagent.json"), nullptr);
  ASSERT_TRUE(r.ok());
  const Sets article = {{"ClusterName", "Namespace", "Service", "job", "pod"}};
  const std::vector<std::string_view> names = {"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_GPU_TEMP",
                                               "DCGM_FI_DEV_GPU_UTIL_MAX",
                                               "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"};
  RunCases(*r,
           {
               {"pod-held GPU: the 14 selectors, anchored",
                PodLabels(),
                names,
                {{article, {"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"}}}},
               {"no pod label: the only set is incomplete", Without(PodLabels(), "pod"), names, {}},
               {"no ClusterName", Without(PodLabels(), "ClusterName"), names, {}},
               {"Service without dcgm", With(PodLabels(), "Service", "gpu-exporter"), names, {}},
               {"Service missing reads as empty", Without(PodLabels(), "Service"), names, {}},
               {"unanchored matcher: dcgm anywhere",
                With(PodLabels(), "Service", "my-dcgm-svc"),
                {"DCGM_FI_DEV_SM_CLOCK"},
                {{article, {"DCGM_FI_DEV_SM_CLOCK"}}}},
               {"case-sensitive", With(PodLabels(), "Service", "DCGM"), names, {}},
           });
}

TEST(EmfRulesTest, SelectorAndMatcherSemantics) {
  EmfRules rules = Parse(R"(
metric_declaration:
  - source_labels: [job, Service]
    label_matcher: "^a;b$"
    dimensions: [[job]]
    metric_selectors: ["gpu_util"]
  - source_labels: [Service]
    label_matcher: nginx
    dimensions: [[Service], [], [Service, Service]]
    metric_selectors: ["^gpu_util$", "temp"]
  - source_labels: [job, Service]
    label_matcher: "MY_JOB;^value2"
    dimensions: [[job]]
    metric_selectors: [".*"]
)");
  const Labels ab = {{"job", "a"}, {"Service", "b"}};
  const Labels nginx = {{"job", "j"}, {"Service", "my-nginx-svc"}};
  const Labels no_job = {{"Service", "b"}};
  const Labels my_job = {{"job", "MY_JOB"}, {"Service", "value2"}};
  RunCases(rules, {
                      {"joined with ;, selector unanchored",
                       ab,
                       {"gpu_util", "gpu_util_max", "x"},
                       {{{{"job"}}, {"gpu_util", "gpu_util_max"}}}},
                      {"missing source label is \"\"", no_job, {"gpu_util"}, {}},
                      {"matcher partial match; empty set ignored; keys deduplicated",
                       nginx,
                       {"gpu_util", "gpu_temp", "gpu_util_max"},
                       {{{{"Service"}}, {"gpu_util", "gpu_temp"}}}},
                      {"^ in mid-pattern never matches", my_job, {"gpu_util"}, {}},
                  });
  // Both declarations match one label set: names matching both share a directive with the
  // union of the sets; names matching one get their own.
  const Labels both = {{"job", "a"}, {"Service", "nginx"}};
  EmfRules two = Parse(R"(
metric_declaration:
  - source_labels: [job]
    dimensions: [[job]]
    metric_selectors: ["util"]
  - source_labels: [Service]
    dimensions: [[Service], [job, Service]]
    metric_selectors: ["^gpu_util$", "temp"]
)");
  RunCases(two, {{"union of matched declarations",
                  both,
                  {"gpu_util", "gpu_temp", "mem_util"},
                  {{{{"job"}, {"Service"}, {"Service", "job"}}, {"gpu_util"}},
                   {{{"Service"}, {"Service", "job"}}, {"gpu_temp"}},
                   {{{"job"}}, {"mem_util"}}}}});
}

TEST(EmfRulesTest, UnusableDimensionValueDropsTheSet) {
  EmfRules rules = Parse(
      "metric_declaration: [{source_labels: [a], dimensions: [[a], [b]], "
      "metric_selectors: [m]}]");
  const Labels labels = {{"a", "ok"}, {"b", "bad"}};
  auto usable = [](const Labels& l, std::string_view k) { return *FindLabel(l, k) != "bad"; };
  std::vector<EmfDirective> d = MatchRules(rules, labels, {"m"}, usable);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].dimensions, (Sets{{"a"}}));
}

TEST(EmfRulesTest, YamlFileWithNamespaceAndUnits) {
  Result<EmfRules> r = LoadEmfRules(Data("rules.yaml"), nullptr);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->metric_namespace, "GPU/Exporter");
  ASSERT_NE(r->UnitFor("DCGM_FI_DEV_POWER_USAGE"), nullptr);
  EXPECT_EQ(*r->UnitFor("DCGM_FI_DEV_POWER_USAGE"), "None");
  EXPECT_EQ(r->UnitFor("DCGM_FI_DEV_GPU_UTIL"), nullptr);
  ASSERT_EQ(r->declarations.size(), 1u);
  EXPECT_EQ(r->declarations[0].dimensions,
            (Sets{{"ClusterName", "NodeName", "gpu"}, {"ClusterName"}}));
}

TEST(EmfRulesTest, BadFilesNameFileLineAndExpectation) {
  struct Bad {
    const char* file;
    const char* line;
    const char* expect;
  };
  for (const Bad& b : {
           Bad{"bad_flat_dimensions.json", ":5: ", "array of arrays"},
           Bad{"bad_star_matcher.yaml", ":3: ", "not a valid RE2 regular expression"},
           Bad{"bad_unknown_key.yaml", ":4: ", "unknown key \"metric_selector\""},
           Bad{"bad_syntax.json", ":", "not valid YAML or JSON"},
       }) {
    Result<EmfRules> r = LoadEmfRules(Data(b.file), nullptr);
    ASSERT_FALSE(r.ok()) << b.file;
    const std::string& msg = r.status().message();
    EXPECT_NE(msg.find(Data(b.file) + b.line), std::string::npos) << msg;
    EXPECT_NE(msg.find(b.expect), std::string::npos) << msg;
  }
  EXPECT_EQ(LoadEmfRules(Data("missing.yaml"), nullptr).status().code(), StatusCode::kNotFound);
}

TEST(EmfRulesTest, InlineErrors) {
  struct Bad {
    const char* text;
    const char* expect;
  };
  for (const Bad& b : {
           Bad{"[1, 2]", "t.yaml:1: expected a mapping"},
           Bad{"metric_namespace: AWS/GPU\nmetric_declaration: []", "t.yaml:1: metric_namespace"},
           Bad{"metric_namespace: 'a b'\nmetric_declaration: []", "outside [a-zA-Z0-9._#:/-]"},
           Bad{"metric_unit: {A: Watts}\nmetric_declaration: []", "not a CloudWatch unit"},
           Bad{"metric_declaration: {}", "metric_declaration must be an array"},
           Bad{"metric_namespace: x", "no metric_declaration"},
           Bad{"logs: {metrics_collected: {}}", "expected a mapping \"prometheus\""},
           Bad{"emf_processor: {metric_declaration: []}\nextra: 1", "t.yaml:2: unknown key"},
           Bad{"metric_declaration:\n  - source_labels: Service\n    metric_selectors: [a]",
               "t.yaml:2: source_labels must be an array of strings"},
           Bad{"metric_declaration:\n  - source_labels: [a]\n    metric_selectors: ['(']",
               "t.yaml:3: metric_selectors entry \"(\" is not a valid RE2"},
       }) {
    Result<EmfRules> r = ParseEmfRules(b.text, "t.yaml", nullptr);
    ASSERT_FALSE(r.ok()) << b.text;
    EXPECT_NE(r.status().message().find(b.expect), std::string::npos) << r.status().message();
  }
  std::string keys;
  for (int i = 0; i < 31; ++i) keys += (i ? ", k" : "k") + std::to_string(i);
  Result<EmfRules> r = ParseEmfRules(
      "metric_declaration:\n  - source_labels: [a]\n    metric_selectors: [a]\n    dimensions: [[" +
          keys + "]]",
      "t.yaml", nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("at most 30"), std::string::npos);
}

// Found by emf_rules_fuzz (testdata/fuzz/emf_rules/crash_yaml_error_echoes_nul_*): yaml-cpp's
// message quotes the offending byte, and a NUL there cut the error short where it was printed.
// Every byte the file puts into a message is escaped now, keys included.
TEST(EmfRulesTest, ControlBytesInMessagesAreEscaped) {
  const std::string nul_escape("metric_namespace: \"a\\\0\"\nmetric_declaration: []\n", 46);
  ASSERT_EQ(nul_escape.find('\0'), 21u);
  Result<EmfRules> yaml = ParseEmfRules(nul_escape, "t.yaml", nullptr);
  ASSERT_FALSE(yaml.ok());
  EXPECT_EQ(yaml.status().message().find('\0'), std::string::npos);
  EXPECT_NE(yaml.status().message().find("t.yaml:1: not valid YAML or JSON: unknown escape "
                                         "character: \\x00"),
            std::string::npos)
      << yaml.status().message();
  Result<EmfRules> key =
      ParseEmfRules("metric_declaration: []\n\"k\\e\\n\": 1\n", "t.yaml", nullptr);
  ASSERT_FALSE(key.ok());
  EXPECT_NE(key.status().message().find("t.yaml:2: unknown key \"k\\x1b\\n\""), std::string::npos)
      << key.status().message();
}

TEST(EmfRulesTest, SkippedDeclarationsWarn) {
  std::vector<std::string> warnings;
  Result<EmfRules> r = ParseEmfRules(
      "metric_declaration:\n  - source_labels: [a]\n    dimensions: [[a]]\n"
      "  - metric_selectors: [a]\n    dimensions: [[a]]\n",
      "t.yaml", &warnings);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->declarations.empty());
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("t.yaml:2: declaration without metric_selectors"), std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[1].find("t.yaml:4: declaration without source_labels"), std::string::npos)
      << warnings[1];
}

TEST(EmfRulesTest, DefaultRulesPerPodAndPerGpu) {
  EmfRules with = DefaultEmfRules(true);
  EXPECT_EQ(with.metric_namespace, "ContainerInsights/Prometheus");
  std::vector<EmfDirective> d =
      MatchRules(with, PodLabels(), {"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_FREE"}, nullptr);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].dimensions, (Sets{{"ClusterName", "Namespace", "container", "pod"},
                                   {"ClusterName", "NodeName", "gpu"}}));
  EXPECT_EQ(d[0].metrics, std::vector<size_t>{0});
  // An idle GPU (no pod): per GPU only; without a cluster name the sets omit it.
  EmfRules without = DefaultEmfRules(false);
  Labels idle =
      Without(Without(Without(Without(PodLabels(), "pod"), "namespace"), "Namespace"), "container");
  d = MatchRules(without, idle, {"DCGM_FI_PROF_PCIE_RX_BYTES"}, nullptr);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].dimensions, (Sets{{"NodeName", "gpu"}}));
  // dcgm-exporter 4.10's spelling of the PCIe pair is sent too.
  d = MatchRules(without, idle,
                 {"DCGM_FI_PROF_PCIE_TX_BYTES_PER_SECOND", "DCGM_FI_PROF_PCIE_RX_BYTES_PER_SECOND"},
                 nullptr);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].metrics, (std::vector<size_t>{0, 1}));
  EXPECT_TRUE(RulesReferenceDimension(with, "ClusterName"));
  EXPECT_FALSE(RulesReferenceDimension(without, "ClusterName"));
}

}  // namespace
}  // namespace nvmlx::render
