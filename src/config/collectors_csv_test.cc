#include "config/collectors_csv.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "config/text_file.h"
#include "fields/catalog.h"
#include "fields/container_insights.h"
#include "fields/dcgm_known.h"

namespace nvmlx::config {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Fixture(const std::string& name) {
  return ReadFile(std::string(NVMLX_SOURCE_DIR) + "/testdata/csv/" + name);
}

// Parses a fixture under its bare file name, so messages read `name.csv:7: ...`.
Result<std::vector<CollectorEntry>> ParseFixture(const std::string& name,
                                                 std::vector<std::string>* warnings = nullptr) {
  // The bad fixtures include an unknown name: refused as dcgm-exporter does (kFatal); the default
  // (kSkip) has its own tests below.
  return ParseCollectorsCsv(Fixture(name), name, warnings, UnknownFields::kFatal);
}

std::vector<std::string> Names(const std::vector<CollectorEntry>& rows) {
  std::vector<std::string> out;
  for (const auto& r : rows) out.push_back(r.name);
  return out;
}

const std::vector<std::string> kShippedRows = {
    "DCGM_FI_DEV_SM_CLOCK",
    "DCGM_FI_DEV_MEM_CLOCK",
    "DCGM_FI_DEV_MEMORY_TEMP",
    "DCGM_FI_DEV_GPU_TEMP",
    "DCGM_FI_DEV_POWER_USAGE",
    "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
    "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
    "DCGM_FI_DEV_GPU_UTIL",
    "DCGM_FI_DEV_MEM_COPY_UTIL",
    "DCGM_FI_DEV_ENC_UTIL",
    "DCGM_FI_DEV_DEC_UTIL",
    "DCGM_FI_DEV_XID_ERRORS",
    "DCGM_FI_DEV_FB_FREE",
    "DCGM_FI_DEV_FB_USED",
    "DCGM_FI_DEV_FB_RESERVED",
    "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL",
    "DCGM_FI_DEV_VGPU_LICENSE_STATUS",
    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
    "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
    "DCGM_FI_DEV_ROW_REMAP_FAILURE",
    "DCGM_FI_DRIVER_VERSION",
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
    "DCGM_FI_PROF_DRAM_ACTIVE",
    "DCGM_FI_PROF_PCIE_TX_BYTES",
    "DCGM_FI_PROF_PCIE_RX_BYTES",
};

// The shipped collectors files: etc/ has dcgm-exporter's newest rows (4.8.4), etc/4.8.2/ the
// 4.8.2 ones (--dcgm-exporter-compat 4.8.2). Both have the same 26 active rows; 4.8.3 made
// DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL a gauge (docs/upstream/generations.md).
struct ShippedFile {
  std::string path;  // under etc/
  bool newest;
};

void PrintTo(const ShippedFile& f, std::ostream* os) { *os << f.path; }

class ShippedFileTest : public ::testing::TestWithParam<ShippedFile> {
 protected:
  std::string Path() const { return std::string(NVMLX_SOURCE_DIR) + "/etc/" + GetParam().path; }
};

TEST_P(ShippedFileTest, HasThe26ActiveRowsOfItsRelease) {
  const std::string path = Path();
  std::vector<std::string> warnings;
  auto rows = ParseCollectorsCsv(ReadFile(path), path, &warnings);
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  EXPECT_THAT(warnings, IsEmpty());
  EXPECT_EQ(Names(*rows), kShippedRows);
  for (const auto& r : *rows) {
    ASSERT_NE(r.field, nullptr) << r.name;
    EXPECT_FALSE(r.help.empty()) << r.name;
    const bool counter = r.name == "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" ||
                         r.name == "DCGM_FI_DEV_PCIE_REPLAY_COUNTER" ||
                         (r.name == "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL" && !GetParam().newest) ||
                         r.name == "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS" ||
                         r.name == "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS";
    const MetricType want = r.name == "DCGM_FI_DRIVER_VERSION" ? MetricType::kLabel
                            : counter                          ? MetricType::kCounter
                                                               : MetricType::kGauge;
    EXPECT_EQ(r.type, want) << r.name;
  }
  EXPECT_EQ((*rows)[0].help, "SM clock frequency (in MHz).");
}

// A user uncommenting any shipped row must get a loadable file. Rows whose name the field table
// does not know yet are left out and listed (the exporter's _TOTAL counters are being added on
// another branch); every other name must be known.
TEST_P(ShippedFileTest, CommentedOutRowsParseWhenUncommented) {
  const std::string path = Path();
  std::istringstream in(ReadFile(path));
  std::string line, uncommented;
  int commented_rows = 0;
  std::vector<std::string> unknown;
  while (std::getline(in, line)) {
    if (line.rfind("# DCGM_", 0) == 0) {
      const std::string row = line.substr(2);
      const std::string name = row.substr(0, row.find_first_of(", "));
      if (fields::FindByName(name) == nullptr) {
        unknown.push_back(name);
        continue;
      }
      uncommented += row + "\n";
      ++commented_rows;
    } else {
      uncommented += line + "\n";
    }
  }
  EXPECT_GE(commented_rows, 30);
  for (const std::string& name : unknown) {
    EXPECT_TRUE(name == "DCGM_EXP_CLOCK_EVENTS_TOTAL" || name == "DCGM_EXP_XID_ERRORS_TOTAL")
        << path << ": " << name << " is not a field this parser knows";
  }
  std::vector<std::string> warnings;
  auto rows = ParseCollectorsCsv(uncommented, path, &warnings);
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  // 4.8.2 ships DCGM_FI_PROF_PCIE_{TX,RX}_BYTES twice (active as gauge, commented as counter);
  // 4.8.4 dropped the commented pair.
  const size_t duplicates = GetParam().newest ? 0 : 2;
  EXPECT_EQ(warnings.size(), duplicates) << ::testing::PrintToString(warnings);
  EXPECT_EQ(rows->size(), kShippedRows.size() + commented_rows - duplicates);
}

INSTANTIATE_TEST_SUITE_P(Etc, ShippedFileTest,
                         ::testing::Values(ShippedFile{"default-counters.csv", true},
                                           ShippedFile{"dcp-metrics-included.csv", true},
                                           ShippedFile{"4.8.2/default-counters.csv", false},
                                           ShippedFile{"4.8.2/dcp-metrics-included.csv", false}));

// etc/4.9/ and etc/4.10/ (--dcgm-exporter-compat 4.9 / 4.10): 4.8.4's active rows under DCGM 4.7
// names, the capacity added, the driver label renamed; 4.10 with the PCIe pair renamed again
// (docs/upstream/dcgm-exporter-4.9-4.10.md). Every name, commented or not, is one we know, so the
// files load even under --collectors-unknown-fields=fatal.
const std::vector<std::string> k49Rows = {
    "DCGM_FI_DEV_SM_CLOCK_HERTZ",
    "DCGM_FI_DEV_MEMORY_CLOCK_HERTZ",
    "DCGM_FI_DEV_MEMORY_TEMP_CELSIUS",
    "DCGM_FI_DEV_GPU_TEMP_CELSIUS",
    "DCGM_FI_DEV_BOARD_POWER_WATTS",
    "DCGM_FI_DEV_GPU_ENERGY_JOULES_TOTAL",
    "DCGM_FI_DEV_PCIE_REPLAY_TOTAL",
    "DCGM_FI_DEV_GPU_UTIL_RATIO",
    "DCGM_FI_DEV_MEMORY_UTIL_RATIO",
    "DCGM_FI_DEV_ENC_UTIL_RATIO",
    "DCGM_FI_DEV_DEC_UTIL_RATIO",
    "DCGM_FI_DEV_XID_ERROR",
    "DCGM_FI_DEV_FB_CAPACITY_BYTES",
    "DCGM_FI_DEV_FB_FREE_BYTES",
    "DCGM_FI_DEV_FB_USED_BYTES",
    "DCGM_FI_DEV_FB_RESERVED_BYTES",
    "DCGM_FI_DEV_NVLINK_THROUGHPUT_BYTES_PER_SECOND",
    "DCGM_FI_DEV_VGPU_LICENSE_STATUS",
    "DCGM_FI_DEV_ROW_REMAP_UNCORRECTABLE_TOTAL",
    "DCGM_FI_DEV_ROW_REMAP_CORRECTABLE_TOTAL",
    "DCGM_FI_DEV_ROW_REMAP_FAILED",
    "DCGM_FI_SYSTEM_DRIVER_VERSION",
    "DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO",
    "DCGM_FI_PROF_TENSOR_UTIL_RATIO",
    "DCGM_FI_PROF_DRAM_UTIL_RATIO",
    "DCGM_FI_PROF_PCIE_TX_BYTES",
    "DCGM_FI_PROF_PCIE_RX_BYTES",
};

std::vector<CollectorEntry> LoadShipped(const std::string& rel, bool uncomment) {
  const std::string path = std::string(NVMLX_SOURCE_DIR) + "/etc/" + rel;
  std::string text = ReadFile(path);
  if (uncomment) {
    std::istringstream in(text);
    std::string line;
    text.clear();
    while (std::getline(in, line)) {
      text += (line.rfind("# DCGM_", 0) == 0 ? line.substr(2) : line) + "\n";
    }
  }
  std::vector<std::string> warnings;
  auto rows = ParseCollectorsCsv(text, path, &warnings, UnknownFields::kFatal);
  EXPECT_TRUE(rows.ok()) << rows.status().message();
  EXPECT_THAT(warnings, IsEmpty());
  return rows.ok() ? std::move(rows).value() : std::vector<CollectorEntry>{};
}

TEST(ShippedFiles, Release49And410Files) {
  const std::vector<CollectorEntry> v49 = LoadShipped("4.9/default-counters.csv", false);
  EXPECT_EQ(Names(v49), k49Rows);
  std::vector<std::string> want410 = k49Rows;
  want410[want410.size() - 2] = "DCGM_FI_PROF_PCIE_TX_BYTES_PER_SECOND";
  want410[want410.size() - 1] = "DCGM_FI_PROF_PCIE_RX_BYTES_PER_SECOND";
  const std::vector<CollectorEntry> v410 = LoadShipped("4.10/default-counters.csv", false);
  EXPECT_EQ(Names(v410), want410);
  ASSERT_EQ(v49.size(), v410.size());
  for (size_t i = 0; i < v49.size(); ++i) {
    EXPECT_EQ(v49[i].field, v410[i].field) << v410[i].name;  // the renames are same-field twins
    EXPECT_EQ(v49[i].type, v410[i].type) << v410[i].name;
    EXPECT_FALSE(v49[i].help.empty()) << v49[i].name;
    const bool counter = v49[i].name.ends_with("_TOTAL");
    const MetricType want = v49[i].name == "DCGM_FI_SYSTEM_DRIVER_VERSION" ? MetricType::kLabel
                            : counter                                      ? MetricType::kCounter
                                                                           : MetricType::kGauge;
    EXPECT_EQ(v49[i].type, want) << v49[i].name;
  }
  // Uncommented, every row still loads, with no duplicate (4.10's NVLink pair included).
  EXPECT_GT(LoadShipped("4.9/default-counters.csv", true).size(), v49.size() + 30);
  const std::vector<CollectorEntry> all410 = LoadShipped("4.10/default-counters.csv", true);
  EXPECT_TRUE(std::any_of(all410.begin(), all410.end(), [](const CollectorEntry& e) {
    return e.name == "DCGM_FI_PROF_NVLINK_RX_BYTES_PER_SECOND" &&
           e.field == fields::FindByName("DCGM_FI_PROF_NVLINK_RX_BYTES");
  }));
}

// etc/container-insights.csv: every field Container Insights' GPU metrics copy, and it loads.
TEST(ShippedFiles, ContainerInsightsFileHasEveryFieldTheSchemaNeeds) {
  const std::string path = std::string(NVMLX_SOURCE_DIR) + "/etc/container-insights.csv";
  std::vector<std::string> warnings;
  auto rows = ParseCollectorsCsv(ReadFile(path), path, &warnings);
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  EXPECT_TRUE(warnings.empty()) << ::testing::PrintToString(warnings);
  for (std::string_view name : fields::ContainerInsightsFieldNames()) {
    bool found = false;
    for (const CollectorEntry& r : *rows) found = found || r.field->name == name;
    EXPECT_TRUE(found) << name;
  }
}

// etc/1.x-compatibility-metrics.csv: upstream's rows (4.5.3-4.8.2), the 1.x lower-case aliases.
TEST(ShippedFiles, OneXCompatibilityFileLoadsWithItsTwoExpectedDuplicates) {
  const std::string path = std::string(NVMLX_SOURCE_DIR) + "/etc/1.x-compatibility-metrics.csv";
  std::vector<std::string> warnings;
  auto rows = ParseCollectorsCsv(ReadFile(path), path, &warnings);
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  // Upstream lists the two PCIe DCP rows in its PCIe section and again under DCP.
  EXPECT_THAT(warnings, ElementsAre(HasSubstr("duplicate field \"dcgm_fi_prof_pcie_tx_bytes\""),
                                    HasSubstr("duplicate field \"dcgm_fi_prof_pcie_rx_bytes\"")));
  const std::vector<std::string> want = {"dcgm_sm_clock",
                                         "dcgm_memory_clock",
                                         "dcgm_memory_temp",
                                         "dcgm_gpu_temp",
                                         "dcgm_power_usage",
                                         "dcgm_total_energy_consumption",
                                         "dcgm_fi_prof_pcie_tx_bytes",
                                         "dcgm_fi_prof_pcie_rx_bytes",
                                         "dcgm_pcie_replay_counter",
                                         "dcgm_gpu_utilization",
                                         "dcgm_mem_copy_utilization",
                                         "dcgm_enc_utilization",
                                         "dcgm_dec_utilization",
                                         "dcgm_xid_errors",
                                         "dcgm_fb_free",
                                         "dcgm_fb_used",
                                         "dcgm_nvlink_bandwidth_total",
                                         "dcgm_fi_prof_gr_engine_active",
                                         "dcgm_fi_prof_pipe_tensor_active",
                                         "dcgm_fi_prof_dram_active"};
  EXPECT_EQ(Names(*rows), want);
  for (const auto& r : *rows) {
    EXPECT_TRUE(r.field->skip_reason.empty()) << r.name;
    EXPECT_FALSE(r.help.empty()) << r.name;
  }
  // Every commented-out row loads once uncommented.
  std::istringstream in(ReadFile(path));
  std::string line, uncommented;
  int commented_rows = 0;
  while (std::getline(in, line)) {
    if (line.rfind("# dcgm_", 0) == 0) {
      uncommented += line.substr(2) + "\n";
      ++commented_rows;
    } else {
      uncommented += line + "\n";
    }
  }
  EXPECT_EQ(commented_rows, 19);
  auto all = ParseCollectorsCsv(uncommented, path, &warnings);
  ASSERT_TRUE(all.ok()) << all.status().message();
  EXPECT_EQ(all->size(), want.size() + commented_rows);
}

TEST(ShippedFiles, OnlyDefaultCountersHasTheExporterBlock) {
  const std::string etc = std::string(NVMLX_SOURCE_DIR) + "/etc/";
  EXPECT_THAT(ReadFile(etc + "default-counters.csv"), HasSubstr("# DCGM_EXP_XID_ERRORS_COUNT"));
  // dcgm-exporter 4.8.3's opt-in counters, commented out as upstream ships them (they load once
  // uncommented: ShippedFileTest).
  EXPECT_THAT(ReadFile(etc + "default-counters.csv"), HasSubstr("# DCGM_EXP_XID_ERRORS_TOTAL,"));
  EXPECT_THAT(ReadFile(etc + "default-counters.csv"), HasSubstr("# DCGM_EXP_CLOCK_EVENTS_TOTAL,"));
  EXPECT_THAT(ReadFile(etc + "dcp-metrics-included.csv"), ::testing::Not(HasSubstr("DCGM_EXP_")));
}

TEST(CollectorsCsv, Quoting) {
  auto rows = ParseFixture("good_quoting.csv");
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 5u);
  const auto& r = *rows;
  EXPECT_EQ(r[0].help, "SM clock, in MHz.");
  EXPECT_EQ(r[0].line, 2);
  EXPECT_EQ(r[1].name, "DCGM_FI_DEV_MEM_CLOCK");  // a quoted field name is unquoted
  EXPECT_EQ(r[1].help, "Memory \"MEM\" clock.");
  EXPECT_EQ(r[2].help, "first line\nsecond line, with a comma");
  EXPECT_EQ(r[2].line, 4);
  EXPECT_EQ(r[3].help, "");
  EXPECT_EQ(r[3].line, 6);  // the quoted newline counted
  EXPECT_EQ(r[4].line, 7);
  EXPECT_EQ(r[4].help, "GPU utilization (in %).");
}

TEST(CollectorsCsv, TabsAndIndentedComments) {
  auto rows = ParseFixture("good_tabs_comments.csv");
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 3u);
  const auto& r = *rows;
  EXPECT_EQ(r[0].name, "DCGM_FI_DEV_SM_CLOCK");
  EXPECT_EQ(r[0].type, MetricType::kGauge);
  EXPECT_EQ(r[0].help, "SM clock frequency (in MHz).");
  EXPECT_EQ(r[0].line, 5);
  EXPECT_EQ(r[1].name, "DCGM_FI_DEV_MEM_CLOCK");
  EXPECT_EQ(r[1].type, MetricType::kCounter);
  EXPECT_EQ(r[1].line, 6);
  EXPECT_EQ(r[2].name, "DCGM_FI_DEV_GPU_TEMP");
  EXPECT_EQ(r[2].type, MetricType::kLabel);
  EXPECT_EQ(r[2].help, "");
  EXPECT_EQ(r[2].line, 8);
}

TEST(CollectorsCsv, CrlfTrailingSpacesAndNoFinalNewline) {
  auto rows = ParseFixture("good_crlf.csv");
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 3u);
  const auto& r = *rows;
  EXPECT_EQ(r[0].help, "SM clock frequency (in MHz).");
  EXPECT_EQ(r[0].line, 3);
  EXPECT_EQ(r[1].help, "Memory clock,\nin MHz.");  // \r\n inside quotes reads as \n
  EXPECT_EQ(r[2].line, 6);
  EXPECT_EQ(r[2].help, "GPU temperature (in C).");
}

TEST(CollectorsCsv, CrlfInline) {
  auto rows = ParseCollectorsCsv(
      "# c\r\n\r\nDCGM_FI_DEV_SM_CLOCK, gauge, a \r\nDCGM_FI_DEV_GPU_TEMP, gauge, b\r", "x.csv");
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].help, "a");
  EXPECT_EQ((*rows)[1].help, "b");  // a lone \r before the end of the text is dropped
  EXPECT_EQ((*rows)[1].line, 4);
}

TEST(CollectorsCsv, AllTypes) {
  auto rows = ParseFixture("good_types.csv");
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  std::vector<MetricType> types;
  std::vector<std::string> names;
  for (const auto& r : *rows) {
    types.push_back(r.type);
    names.emplace_back(MetricTypeName(r.type));
  }
  EXPECT_THAT(types, ElementsAre(MetricType::kGauge, MetricType::kCounter, MetricType::kHistogram,
                                 MetricType::kSummary, MetricType::kLabel));
  EXPECT_THAT(names, ElementsAre("gauge", "counter", "histogram", "summary", "label"));
}

TEST(CollectorsCsv, DuplicateNameKeepsTheFirstRowAndWarns) {
  std::vector<std::string> warnings;
  auto rows = ParseFixture("good_duplicate.csv", &warnings);
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  EXPECT_THAT(Names(*rows), ElementsAre("DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_GPU_TEMP"));
  EXPECT_EQ((*rows)[0].help, "first");
  EXPECT_THAT(warnings, ElementsAre("good_duplicate.csv:3: duplicate field "
                                    "\"DCGM_FI_DEV_SM_CLOCK\" (first at line 1); ignoring this "
                                    "row"));
}

TEST(CollectorsCsv, Utf8BomIsIgnored) {
  auto rows = ParseFixture("good_bom.csv");
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  EXPECT_THAT(Names(*rows), ElementsAre("DCGM_FI_DEV_SM_CLOCK"));
}

TEST(CollectorsCsv, MetricNameIsColumnOneVerbatim) {
  // A legacy 1.x alias resolves to the same field but keeps its own name on the page.
  auto rows = ParseCollectorsCsv(
      "dcgm_sm_clock, gauge, old name\n"
      "DCGM_FI_DEV_SM_CLOCK, gauge, new name\n",
      "x.csv");
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].name, "dcgm_sm_clock");
  EXPECT_EQ((*rows)[0].field, (*rows)[1].field);
}

// dcgm-exporter starts on an empty file (and serves no DCGM series); so do we, with a warning
// that names the file (hardening issue, defect 6).
TEST(CollectorsCsv, EmptyAndCommentOnlyFilesLoadWithAWarningNamingTheFile) {
  for (std::string_view text : {std::string_view(""), std::string_view("# a\n\n  # b\n\t\n"),
                                std::string_view("\xEF\xBB\xBF\r\n")}) {
    std::vector<std::string> warnings;
    auto rows = ParseCollectorsCsv(text, "/etc/x.csv", &warnings);
    ASSERT_TRUE(rows.ok()) << rows.status().message();
    EXPECT_THAT(*rows, IsEmpty());
    EXPECT_THAT(warnings, ElementsAre(AllOf(StartsWith("/etc/x.csv: no collector rows"),
                                            HasSubstr("only comments"))));
  }
  std::vector<std::string> warnings;
  ASSERT_TRUE(ParseCollectorsCsv("DCGM_FI_DEV_SM_CLOCK, gauge, SM\n", "x.csv", &warnings).ok());
  EXPECT_THAT(warnings, IsEmpty());
}

// A NUL byte used to end the error message where it was printed as a C string (hardening issue,
// defect 6): now the file is refused at the NUL, with its line and character, the byte escaped.
TEST(CollectorsCsv, NulByteIsAnErrorNamingLineAndCharacter) {
  using namespace std::string_literals;
  const std::string text =
      "DCGM_FI_DEV_SM_CLOCK, gauge, SM clock\n# ok\nDCGM_FI_DEV_GPU\0UTIL, g, u\n"s;
  auto rows = ParseCollectorsCsv(text, "x.csv");
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().message(),
            "x.csv:3: NUL byte (\\x00) at character 16; a collectors file is text (is this file "
            "damaged or binary?)");
  EXPECT_EQ(rows.status().message().find('\0'), std::string::npos);
  auto first = ParseCollectorsCsv(std::string_view("\0", 1), "x.csv");
  ASSERT_FALSE(first.ok());
  EXPECT_THAT(first.status().message(), StartsWith("x.csv:1: NUL byte (\\x00) at character 1;"));
}

// Cell text echoed in a message has its control bytes escaped: no raw newline or escape
// sequence reaches the operator's terminal or the log.
TEST(CollectorsCsv, ControlBytesInEchoedCellsAreEscaped) {
  auto name =
      ParseCollectorsCsv("\"DCGM_FI\nX\x1b[2J\", gauge, h\n", "x.csv", UnknownFields::kFatal);
  ASSERT_FALSE(name.ok());
  EXPECT_THAT(name.status().message(),
              StartsWith("x.csv:1: unknown field \"DCGM_FI\\nX\\x1b[2J\""));
  auto type = ParseCollectorsCsv("DCGM_FI_DEV_SM_CLOCK, gau\rge, h\n", "x.csv");
  ASSERT_FALSE(type.ok());
  EXPECT_THAT(type.status().message(), HasSubstr("unknown metric type \"gau\\rge\""));
}

TEST(CollectorsCsv, ExporterRowTypeIsNotCheckedAsInDcgmExporter) {
  std::vector<std::string> warnings;
  auto rows = ParseCollectorsCsv("DCGM_EXP_XID_ERRORS_COUNT, whatever, XIDs\n", "x.csv", &warnings);
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].type, MetricType::kGauge);
  EXPECT_THAT(warnings, ElementsAre(HasSubstr("x.csv:1: unknown metric type \"whatever\"")));
}

TEST(CollectorsCsv, UnknownFieldWithoutSuggestion) {
  auto rows = ParseCollectorsCsv("\nQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ, gauge, x\n", "x.csv",
                                 UnknownFields::kFatal);
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(rows.status().message(),
              StartsWith("x.csv:2: unknown field \"QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ\""));
}

// dcgm-exporter loads a file naming any field go-dcgm knows (it warns "metric not enabled" for
// those DCGM cannot watch); so must we. One row per DCGM name, all in one file.
TEST(CollectorsCsv, EveryDcgmFieldNameLoads) {
  std::string csv;
  for (const fields::DcgmFieldName& n : fields::AllDcgmNames()) {
    csv += std::string(n.name) + ", gauge, help\n";
  }
  std::vector<std::string> warnings;
  auto rows = ParseCollectorsCsv(csv, "all.csv", &warnings);
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), fields::AllDcgmNames().size());
  EXPECT_THAT(warnings, IsEmpty());
  for (size_t i = 0; i < rows->size(); ++i) {
    const CollectorEntry& e = (*rows)[i];
    EXPECT_EQ(e.name, fields::AllDcgmNames()[i].name);
    EXPECT_EQ(e.field->id, fields::AllDcgmNames()[i].id) << e.name;
    EXPECT_EQ(e.line, static_cast<int>(i) + 1);
  }
}

TEST(CollectorsCsv, KnownButUnreadFieldCarriesItsReason) {
  auto rows = ParseCollectorsCsv(
      "DCGM_FI_DEV_NVSWITCH_TEMPERATURE_CURRENT, gauge, t\n"
      "DCGM_FI_DEV_CPU_UTIL_TOTAL, gauge, u\n"
      "DCGM_FI_DEV_NVLINK_BANDWIDTH_L0, counter, b\n",
      "x.csv");
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_THAT(std::string((*rows)[0].field->skip_reason), HasSubstr("NvSwitch"));
  EXPECT_THAT(std::string((*rows)[1].field->skip_reason), HasSubstr("Grace"));
  EXPECT_TRUE((*rows)[2].field->skip_reason.empty());  // read through NVML
  EXPECT_EQ((*rows)[2].field->id, 440);
}

TEST(CollectorsCsv, UnknownDcgmLikeNameSuggestsTheNearestDcgmName) {
  auto rows = ParseCollectorsCsv("DCGM_FI_DEV_NVSWITCH_TEMPERATURE_CURENT, gauge, x\n", "x.csv",
                                 UnknownFields::kFatal);
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().message(),
            "x.csv:1: unknown field \"DCGM_FI_DEV_NVSWITCH_TEMPERATURE_CURENT\" (did you mean "
            "DCGM_FI_DEV_NVSWITCH_TEMPERATURE_CURRENT?)");
}

// A name from a release newer than this daemon (or a typo) is skipped by default, so that a chart
// upgrade shipping a new field cannot crash-loop the DaemonSet: one warning naming file:line and
// the name (with the suggestion), the row kept with the unknown-name entry for the plan to leave
// out and list, the other rows as before.
TEST(CollectorsCsv, UnknownFieldIsSkippedWithOneWarningByDefault) {
  std::vector<std::string> warnings;
  auto rows = ParseCollectorsCsv(
      "DCGM_FI_DEV_SM_CLOCK, gauge, c\n"
      "# a comment\n"
      "DCGM_FI_DEV_FROM_A_LATER_RELEASE, gauge, new\n"
      "DCGM_FI_DEV_GPU_UTL, gauge, typo\n"
      "DCGM_FI_DEV_GPU_TEMP, gauge, t\n",
      "x.csv", &warnings);
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 4u);
  EXPECT_EQ((*rows)[0].field, fields::FindByName("DCGM_FI_DEV_SM_CLOCK"));
  EXPECT_TRUE(fields::IsUnknownName(*(*rows)[1].field));
  EXPECT_EQ((*rows)[1].name, "DCGM_FI_DEV_FROM_A_LATER_RELEASE");
  EXPECT_EQ((*rows)[1].line, 3);
  EXPECT_TRUE(fields::IsUnknownName(*(*rows)[2].field));
  EXPECT_EQ((*rows)[3].field, fields::FindByName("DCGM_FI_DEV_GPU_TEMP"));
  EXPECT_THAT(
      warnings,
      ElementsAre(
          AllOf(StartsWith("x.csv:3: unknown field \"DCGM_FI_DEV_FROM_A_LATER_RELEASE\""),
                HasSubstr("skipping this row"), HasSubstr("--collectors-unknown-fields=fatal")),
          StartsWith("x.csv:4: unknown field \"DCGM_FI_DEV_GPU_UTL\" (did you mean "
                     "DCGM_FI_DEV_GPU_UTIL?); skipping this row")));
  // Repeated, it is one row and one more (duplicate) warning, as any name.
  warnings.clear();
  rows = ParseCollectorsCsv("DCGM_FI_X_LATER, gauge, a\nDCGM_FI_X_LATER, gauge, b\n", "x.csv",
                            &warnings);
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->size(), 1u);
  EXPECT_THAT(warnings, ElementsAre(HasSubstr("x.csv:1: unknown field"),
                                    HasSubstr("x.csv:2: duplicate field")));
  // Its type is still checked: a broken row is a broken file.
  EXPECT_FALSE(ParseCollectorsCsv("DCGM_FI_X_LATER, gauges, a\n", "x.csv", &warnings).ok());
}

TEST(CollectorsCsv, UnknownFieldIsFatalOnRequestAsInDcgmExporter) {
  std::vector<std::string> warnings;
  auto rows = ParseCollectorsCsv("DCGM_FI_DEV_SM_CLOCK, gauge, c\nDCGM_FI_DEV_LATER, gauge, n\n",
                                 "x.csv", &warnings, UnknownFields::kFatal);
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(rows.status().message(), StartsWith("x.csv:2: unknown field \"DCGM_FI_DEV_LATER\""));
  EXPECT_THAT(warnings, IsEmpty());
}

// dcgm-exporter 4.10.0's renamed profiling rates (its release notes) load under both policies
// and are their older twins' fields, under the names the file gives.
TEST(CollectorsCsv, DcgmExporter410ProfilingNamesLoad) {
  for (UnknownFields policy : {UnknownFields::kSkip, UnknownFields::kFatal}) {
    std::vector<std::string> warnings;
    auto rows = ParseCollectorsCsv(
        "DCGM_FI_PROF_PCIE_TX_BYTES_PER_SECOND, gauge, a\n"
        "DCGM_FI_PROF_PCIE_RX_BYTES_PER_SECOND, gauge, b\n"
        "DCGM_FI_PROF_NVLINK_TX_BYTES_PER_SECOND, gauge, c\n"
        "DCGM_FI_PROF_NVLINK_RX_BYTES_PER_SECOND, gauge, d\n"
        "DCGM_FI_PROF_PCIE_TX_BYTES, gauge, e\n",
        "x.csv", &warnings, policy);
    ASSERT_TRUE(rows.ok()) << rows.status().message();
    ASSERT_EQ(rows->size(), 5u);
    EXPECT_THAT(warnings, IsEmpty());
    EXPECT_EQ((*rows)[0].name, "DCGM_FI_PROF_PCIE_TX_BYTES_PER_SECOND");
    EXPECT_EQ((*rows)[0].field, fields::FindByName("DCGM_FI_PROF_PCIE_TX_BYTES"));
    EXPECT_EQ((*rows)[0].field, (*rows)[4].field);
    EXPECT_EQ((*rows)[1].field, fields::FindByName("DCGM_FI_PROF_PCIE_RX_BYTES"));
    EXPECT_EQ((*rows)[2].field, fields::FindByName("DCGM_FI_PROF_NVLINK_TX_BYTES"));
    EXPECT_EQ((*rows)[3].field, fields::FindByName("DCGM_FI_PROF_NVLINK_RX_BYTES"));
  }
}

TEST(CollectorsCsv, TrailingCommaIsAFourthColumn) {
  auto rows = ParseCollectorsCsv("DCGM_FI_DEV_SM_CLOCK, gauge, help,\n", "x.csv");
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().message(),
            "x.csv:1: expected 3 comma-separated columns (field, type, help), got 4");
}

struct BadCase {
  const char* file;
  const char* message;
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.file; }

class BadFileTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadFileTest, ExactMessage) {
  auto rows = ParseFixture(GetParam().file);
  ASSERT_FALSE(rows.ok()) << GetParam().file << " parsed";
  EXPECT_EQ(rows.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(rows.status().message(), GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, BadFileTest,
    ::testing::Values(
        BadCase{"bad_unknown_field.csv",
                "bad_unknown_field.csv:7: unknown field \"DCGM_FI_DEV_GPU_UTL\" (did you mean "
                "DCGM_FI_DEV_GPU_UTIL?)"},
        BadCase{"bad_four_columns.csv",
                "bad_four_columns.csv:3: expected 3 comma-separated columns (field, type, help), "
                "got 4"},
        BadCase{"bad_two_columns.csv",
                "bad_two_columns.csv:1: expected 3 comma-separated columns (field, type, help), "
                "got 2"},
        BadCase{"bad_one_column.csv",
                "bad_one_column.csv:2: expected 3 comma-separated columns (field, type, help), "
                "got 1"},
        BadCase{"bad_type.csv",
                "bad_type.csv:5: unknown metric type \"gauge2\" (expected gauge, counter, "
                "histogram, summary or label)"},
        BadCase{"bad_type_case.csv",
                "bad_type_case.csv:1: unknown metric type \"Gauge\" (expected gauge, counter, "
                "histogram, summary or label)"},
        BadCase{"bad_space_before_quote.csv",
                "bad_space_before_quote.csv:1: bare quote (\") in unquoted column 3 at character "
                "30; a quoted value must start right after the comma, as in: gauge,\"a, b\""},
        BadCase{"bad_quote_inside.csv",
                "bad_quote_inside.csv:2: bare quote (\") in unquoted column 3 at character 35; a "
                "quoted value must start right after the comma, as in: gauge,\"a, b\""},
        BadCase{"bad_indented_data_quote.csv",
                "bad_indented_data_quote.csv:1: bare quote (\") in unquoted column 1 at character "
                "3; a quoted value must start right after the comma, as in: gauge,\"a, b\""},
        BadCase{"bad_after_closing_quote.csv",
                "bad_after_closing_quote.csv:1: unexpected character after the closing quote of "
                "column 3 at character 39; write \"\" for a quote inside a quoted value"},
        BadCase{"bad_unterminated.csv",
                "bad_unterminated.csv:2: quoted column 3 is never closed (opening quote at "
                "character 30)"},
        BadCase{"bad_after_multiline.csv",
                "bad_after_multiline.csv:5: unknown metric type \"gaug\" (expected gauge, "
                "counter, histogram, summary or label)"},
        BadCase{"bad_empty_name.csv", "bad_empty_name.csv:1: missing field name in column 1"}));

TEST(LoadCollectorsCsv, NamesThePath) {
  const std::string path = std::string(NVMLX_SOURCE_DIR) + "/testdata/csv/bad_type.csv";
  auto rows = LoadCollectorsCsv(path);
  ASSERT_FALSE(rows.ok());
  EXPECT_THAT(rows.status().message(), StartsWith(path + ":5: unknown metric type"));

  auto ok = LoadCollectorsCsv(std::string(NVMLX_SOURCE_DIR) + "/etc/default-counters.csv");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->size(), 26u);
}

TEST(LoadCollectorsCsv, MissingFileAndDirectory) {
  auto missing = LoadCollectorsCsv("/nonexistent/dir/counters.csv");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(),
              HasSubstr("/nonexistent/dir/counters.csv: cannot open the collectors file"));

  auto dir = LoadCollectorsCsv(std::string(NVMLX_SOURCE_DIR) + "/testdata");
  ASSERT_FALSE(dir.ok());
  EXPECT_THAT(dir.status().message(), HasSubstr("is a directory"));
}

// Hardening round two, row 11: a FIFO given as the collectors file (or any file read whole, such as
// the config file) is refused at once, not waited on for a writer that never comes.
TEST(LoadCollectorsCsv, FifoIsRefusedWithoutBlocking) {
  const std::string fifo = ::testing::TempDir() + "collectors_csv_test.fifo";
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto r = LoadCollectorsCsv(fifo);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("not a regular file"));
  auto text = ReadTextFile(fifo, "configuration file");
  ASSERT_FALSE(text.ok());
  EXPECT_THAT(text.status().message(), HasSubstr("configuration file is not a regular file"));
  ::unlink(fifo.c_str());
}

}  // namespace
}  // namespace nvmlx::config
