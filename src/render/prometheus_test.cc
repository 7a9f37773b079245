#include "render/prometheus.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "fields/xid_text.h"
#include "render/prometheus_test_fixture.h"
#include "render/text_format.h"

namespace nvmlx::render {
namespace {

using config::MetricType;
using fields::ValueKind;
using model::DeviceIdentity;
using test::DefaultFixture;
using test::ExpectGolden;
using test::Fixture;
using test::MakeIdentity;

TEST(RenderPrometheusTest, GoldenOneGpu) {
  ExpectGolden(DefaultFixture(1).Render(), "prometheus_1gpu.txt");
}

TEST(RenderPrometheusTest, GoldenEightGpus) {
  ExpectGolden(DefaultFixture(8).Render(), "prometheus_8gpu.txt");
}

// The golden comparison is only worth something if a one-byte change shows up.
TEST(RenderPrometheusTest, GoldenDetectsChange) {
  Fixture f = DefaultFixture(8);
  const std::string good = f.Render();
  f.snapshot.devices[7].samples.back().value = int64_t{999};
  EXPECT_NE(f.Render(), good);
}

TEST(RenderPrometheusTest, OneGpuLayout) {
  const std::string out = DefaultFixture(1).Render();
  const std::string labels =
      "{gpu=\"0\",UUID=\"GPU-a1b2c3d4-1c2d-3e4f-5a6b-7c8d9e0f0000\",pci_bus_id=\"00000000:18:00."
      "0\","
      "device=\"nvidia0\",modelName=\"NVIDIA H200\",hostname=\"node1\","
      "DCGM_FI_DRIVER_VERSION=\"580.159.04\"}";
  EXPECT_EQ(out.rfind("# HELP DCGM_FI_DEV_SM_CLOCK SM clock frequency (in MHz).\n"
                      "# TYPE DCGM_FI_DEV_SM_CLOCK gauge\n"
                      "DCGM_FI_DEV_SM_CLOCK" +
                          labels + " 20\n",
                      0),
            0u)
      << out.substr(0, 400);
  EXPECT_NE(out.find("# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n"
                     "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" +
                     labels + " 123456789012345\n"),
            std::string::npos);
  // Label rows make no family.
  EXPECT_EQ(out.find("# HELP DCGM_FI_DRIVER_VERSION"), std::string::npos);
  EXPECT_EQ(out.find("\n\n"), std::string::npos);
  EXPECT_EQ(out.back(), '\n');
  // Ascending field id: 393 before 526 although the CSV lists 526 first.
  EXPECT_LT(out.find("# HELP DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS"),
            out.find("# HELP DCGM_FI_DEV_VGPU_LICENSE_STATUS"));
}

TEST(RenderPrometheusTest, SelfMetrics) {
  Fixture f = DefaultFixture(2);
  f.snapshot.devices[1].up = false;
  f.snapshot.devices[1].stale = true;  // a read stuck in the driver
  const std::string out = f.Render();
  const std::string tail =
      "# HELP nvml_exporter_collect_duration_seconds Time the last collection of all devices "
      "took, in seconds.\n"
      "# TYPE nvml_exporter_collect_duration_seconds gauge\n"
      "nvml_exporter_collect_duration_seconds 0.012345\n"
      "# HELP nvml_exporter_last_collect_timestamp_seconds Unix time when the last collection "
      "started, in seconds.\n"
      "# TYPE nvml_exporter_last_collect_timestamp_seconds gauge\n"
      "nvml_exporter_last_collect_timestamp_seconds 1700000000.123\n"
      "# HELP nvml_exporter_gpu_up 1 if the last collection could read the GPU, 0 if it is lost, "
      "stale (a read stuck in the driver) or every read failed.\n"
      "# TYPE nvml_exporter_gpu_up gauge\n"
      "nvml_exporter_gpu_up{gpu=\"0\",UUID=\"GPU-a1b2c3d4-1c2d-3e4f-5a6b-7c8d9e0f0000\"} 1\n"
      "nvml_exporter_gpu_up{gpu=\"1\",UUID=\"GPU-a1b2c3d5-1c2d-3e4f-5a6b-7c8d9e0f0001\"} 0\n"
      "# HELP nvml_exporter_gpu_stale 1 if the GPU's reads (fast: gauges, slow: energy, PCIe, "
      "violations) did not finish within the read deadline (a call stuck in the driver); their "
      "series are left out meanwhile.\n"
      "# TYPE nvml_exporter_gpu_stale gauge\n"
      "nvml_exporter_gpu_stale{gpu=\"0\",UUID=\"GPU-a1b2c3d4-1c2d-3e4f-5a6b-7c8d9e0f0000\","
      "reads=\"fast\"} 0\n"
      "nvml_exporter_gpu_stale{gpu=\"0\",UUID=\"GPU-a1b2c3d4-1c2d-3e4f-5a6b-7c8d9e0f0000\","
      "reads=\"slow\"} 0\n"
      "nvml_exporter_gpu_stale{gpu=\"1\",UUID=\"GPU-a1b2c3d5-1c2d-3e4f-5a6b-7c8d9e0f0001\","
      "reads=\"fast\"} 1\n"
      "nvml_exporter_gpu_stale{gpu=\"1\",UUID=\"GPU-a1b2c3d5-1c2d-3e4f-5a6b-7c8d9e0f0001\","
      "reads=\"slow\"} 0\n"
      "# HELP nvml_exporter_build_info Build and runtime information of nvml-exporter; the value "
      "is always 1.\n"
      "# TYPE nvml_exporter_build_info gauge\n"
      "nvml_exporter_build_info{version=\"0.1.0\",revision=\"abc1234\","
      "nvml_library=\"/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1\",driver_version=\"580.159.04\"}"
      " 1\n";
  ASSERT_GE(out.size(), tail.size());
  EXPECT_EQ(out.substr(out.size() - tail.size()), tail);
}

// Defect 4 of the hardening issue: a UUID that could not be read was rendered as UUID="".
TEST(RenderPrometheusTest, UnreadableUuidLeavesTheLabelOut) {
  Fixture f = DefaultFixture(1);
  auto ids = std::make_shared<std::vector<model::DeviceIdentity>>(*f.snapshot.identities);
  (*ids)[0].uuid.clear();
  f.snapshot.identities = ids;
  f.snapshot.devices[0].identity = &(*ids)[0];
  const std::string out = f.Render();
  EXPECT_EQ(out.find("UUID=\"\""), std::string::npos) << out;
  EXPECT_NE(out.find("nvml_exporter_gpu_up{gpu=\"0\"} 1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("{gpu=\"0\",pci_bus_id="), std::string::npos) << out;
}

TEST(RenderPrometheusTest, TimestampMillisecondsPadded) {
  Fixture f = DefaultFixture(1);
  f.snapshot.time = std::chrono::system_clock::time_point(std::chrono::milliseconds(1700000000007));
  EXPECT_NE(f.Render().find("nvml_exporter_last_collect_timestamp_seconds 1700000000.007\n"),
            std::string::npos);
}

TEST(RenderPrometheusTest, DownGpuHasNoSeries) {
  Fixture f = DefaultFixture(3);
  f.snapshot.devices[1].up = false;
  const std::string out = f.Render();
  EXPECT_EQ(out.find("DCGM_FI_DEV_SM_CLOCK{gpu=\"1\""), std::string::npos);
  EXPECT_NE(out.find("DCGM_FI_DEV_SM_CLOCK{gpu=\"0\""), std::string::npos);
  EXPECT_NE(out.find("DCGM_FI_DEV_SM_CLOCK{gpu=\"2\""), std::string::npos);
  EXPECT_NE(out.find("nvml_exporter_gpu_up{gpu=\"1\",UUID=\"GPU-a1b2c3d5-1c2d-3e4f-5a6b-"
                     "7c8d9e0f0001\"} 0\n"),
            std::string::npos);
}

// A lost GPU with health results (the collector sets them: ALL fails, fallen off the bus) keeps
// exactly its health series; a down GPU without them has none (above).
TEST(RenderPrometheusTest, LostGpuKeepsOnlyItsHealthSeries) {
  Fixture f = DefaultFixture(2);
  f.AddEntry(9003, "DCGM_EXP_GPU_HEALTH_STATUS", MetricType::kGauge, "Health.");
  f.snapshot.devices[0].health = {{"ALL", "DCGM_FR_OK", 0}};
  f.snapshot.devices[1].up = false;
  f.snapshot.devices[1].health = {{"NVLINK", "DCGM_FR_OK", 0},
                                  {"ALL", "DCGM_FR_FALLEN_OFF_BUS", 20}};
  const std::string out = f.Render();
  EXPECT_NE(out.find("DCGM_EXP_GPU_HEALTH_STATUS{gpu=\"1\""), std::string::npos) << out;
  EXPECT_NE(out.find("health_error_code=\"DCGM_FR_FALLEN_OFF_BUS\",health_watch=\"ALL\"} 20\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("health_watch=\"NVLINK\"} 0\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("DCGM_FI_DEV_SM_CLOCK{gpu=\"1\""), std::string::npos) << out;
  EXPECT_NE(out.find("DCGM_FI_DEV_SM_CLOCK{gpu=\"0\""), std::string::npos) << out;
  EXPECT_NE(out.find("nvml_exporter_gpu_up{gpu=\"1\",UUID=\"GPU-a1b2c3d5-1c2d-3e4f-5a6b-"
                     "7c8d9e0f0001\"} 0\n"),
            std::string::npos);
}

TEST(RenderPrometheusTest, AllDevicesDownOmitsFamilies) {
  Fixture f = DefaultFixture(2);
  for (auto& d : f.snapshot.devices) d.up = false;
  const std::string out = f.Render();
  EXPECT_EQ(out.find("DCGM_FI_"), std::string::npos);
  EXPECT_EQ(out.rfind("# HELP nvml_exporter_collect_duration_seconds", 0), 0u);
}

TEST(RenderPrometheusTest, EscapesModelNameAndHelp) {
  Fixture f;
  f.AddEntry(150, "DCGM_FI_DEV_GPU_TEMP", MetricType::kGauge, "a \\ back\nslash \"quoted\" é");
  DeviceIdentity id = MakeIdentity(0);
  id.model_name = "NVIDIA \"H200\" \\ 141GB\nnext ünïcødé";
  id.label_values.clear();
  f.SetIdentities({id});
  f.snapshot.devices[0].samples = {{150, int64_t{33}}};
  const std::string out = f.Render();
  EXPECT_NE(out.find("# HELP DCGM_FI_DEV_GPU_TEMP a \\\\ back\\nslash \"quoted\" é\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(",modelName=\"NVIDIA \\\"H200\\\" \\\\ 141GB\\nnext ünïcødé\"} 33\n"),
            std::string::npos)
      << out;
}

TEST(RenderPrometheusTest, EscapeFunctions) {
  std::string s;
  AppendEscapedLabelValue("a\\b\"c\nd\te", &s);
  EXPECT_EQ(s, "a\\\\b\\\"c\\nd\te");
  s.clear();
  AppendEscapedHelp("a\\b\"c\nd", &s);
  EXPECT_EQ(s, "a\\\\b\"c\\nd");
}

TEST(RenderPrometheusTest, EmptyHelpKeepsTrailingSpace) {
  Fixture f;
  f.AddEntry(150, "DCGM_FI_DEV_GPU_TEMP", MetricType::kGauge, "");
  f.SetIdentities({MakeIdentity(0)});
  f.snapshot.devices[0].samples = {{150, int64_t{33}}};
  EXPECT_EQ(
      f.Render().rfind("# HELP DCGM_FI_DEV_GPU_TEMP \n# TYPE DCGM_FI_DEV_GPU_TEMP gauge\n", 0), 0u);
}

TEST(RenderPrometheusTest, OldNamespaceUuidLabel) {
  Fixture f = DefaultFixture(1);
  f.options.use_old_namespace = true;
  const std::string out = f.Render();
  EXPECT_EQ(out.find("UUID="), std::string::npos);
  EXPECT_NE(out.find("DCGM_FI_DEV_SM_CLOCK{gpu=\"0\",uuid=\"GPU-a1b2c3d4-"), std::string::npos);
  EXPECT_NE(out.find("nvml_exporter_gpu_up{gpu=\"0\",uuid=\"GPU-"), std::string::npos);
}

TEST(RenderPrometheusTest, NoHostnameLabelWhenEmpty) {
  Fixture f = DefaultFixture(1);
  f.options.hostname.clear();
  const std::string out = f.Render();
  EXPECT_EQ(out.find("hostname="), std::string::npos);
  EXPECT_EQ(out.find("Hostname="), std::string::npos);
  EXPECT_NE(out.find("modelName=\"NVIDIA H200\",DCGM_FI_DRIVER_VERSION=\"580.159.04\"}"),
            std::string::npos);
}

// dcgm-exporter 4.8.2's spelling (--dcgm-exporter-compat 4.8.2 or --hostname-label Hostname).
TEST(RenderPrometheusTest, HostnameLabelSpelling) {
  Fixture f = DefaultFixture(1);
  f.options.hostname_label = "Hostname";
  const std::string out = f.Render();
  EXPECT_EQ(out.find("hostname="), std::string::npos);
  EXPECT_NE(out.find(",Hostname=\"node1\",DCGM_FI_DRIVER_VERSION="), std::string::npos);
}

TEST(RenderPrometheusTest, LabelRowsSortedByNameAndMissingOnesOmitted) {
  Fixture f;
  f.AddEntry(150, "DCGM_FI_DEV_GPU_TEMP", MetricType::kGauge, "t");
  f.AddEntry(3, "DCGM_FI_DEV_SERIAL", MetricType::kLabel, "", ValueKind::kString);
  f.AddEntry(1, "DCGM_FI_DRIVER_VERSION", MetricType::kLabel, "", ValueKind::kString);
  f.AddEntry(2, "DCGM_FI_DEV_BRAND", MetricType::kLabel, "", ValueKind::kString);
  DeviceIdentity a = MakeIdentity(0);
  a.label_values = {{1, "580.159.04"}, {3, "1650123456789"}, {2, "NVIDIA"}};
  DeviceIdentity b = MakeIdentity(1);
  b.label_values = {{1, "580.159.04"}};  // serial and brand reads failed
  f.SetIdentities({a, b});
  f.snapshot.devices[0].samples = {{150, int64_t{30}}};
  f.snapshot.devices[1].samples = {{150, int64_t{31}}};
  const std::string out = f.Render();
  EXPECT_EQ(out.find("hostname="), std::string::npos);  // no hostname set
  EXPECT_NE(out.find("modelName=\"NVIDIA H200\",DCGM_FI_DEV_BRAND=\"NVIDIA\","
                     "DCGM_FI_DEV_SERIAL=\"1650123456789\",DCGM_FI_DRIVER_VERSION=\"580.159.04\"}"
                     " 30\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("modelName=\"NVIDIA H200\",DCGM_FI_DRIVER_VERSION=\"580.159.04\"} 31\n"),
            std::string::npos)
      << out;
}

TEST(RenderPrometheusTest, FamiliesByFieldIdThenCsvOrder) {
  Fixture f;
  f.AddEntry(252, "DCGM_FI_DEV_FB_USED", MetricType::kGauge, "used");
  f.AddEntry(100, "DCGM_FI_DEV_SM_CLOCK", MetricType::kGauge, "sm");
  f.AddEntry(150, "gpu_temp_alias_b", MetricType::kGauge, "b");
  f.AddEntry(150, "gpu_temp_alias_a", MetricType::kGauge, "a");
  f.AddEntry(150, "gpu_temp_alias_b", MetricType::kGauge, "duplicate name: dropped");
  f.SetIdentities({MakeIdentity(0)});
  f.snapshot.devices[0].samples = {{100, int64_t{1}}, {150, int64_t{2}}, {252, int64_t{3}}};
  const std::string out = f.Render();
  std::vector<std::string> helps;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# HELP ", 0) == 0 && line.find("nvml_exporter") == std::string::npos) {
      helps.push_back(line);
    }
  }
  EXPECT_EQ(helps, (std::vector<std::string>{
                       "# HELP DCGM_FI_DEV_SM_CLOCK sm", "# HELP gpu_temp_alias_b b",
                       "# HELP gpu_temp_alias_a a", "# HELP DCGM_FI_DEV_FB_USED used"}));
  EXPECT_NE(out.find("\ngpu_temp_alias_a{gpu=\"0\""), std::string::npos);
}

TEST(RenderPrometheusTest, StringValueInGaugeIsSkipped) {
  Fixture f;
  f.AddEntry(100, "DCGM_FI_DEV_SM_CLOCK", MetricType::kGauge, "sm");
  f.AddEntry(50, "DCGM_FI_DEV_NAME", MetricType::kGauge, "a string field declared gauge",
             ValueKind::kString);
  f.SetIdentities({MakeIdentity(0), MakeIdentity(1)});
  f.snapshot.devices[0].samples = {{50, std::string("NVIDIA H200")}, {100, int64_t{1980}}};
  f.snapshot.devices[1].samples = {{50, std::string("NVIDIA H200")}, {100, int64_t{1755}}};
  const std::string out = f.Render();
  EXPECT_EQ(out.find("DCGM_FI_DEV_NAME"), std::string::npos) << out;  // whole family omitted
  EXPECT_NE(out.find("DCGM_FI_DEV_SM_CLOCK{gpu=\"1\""), std::string::npos);
}

TEST(RenderPrometheusTest, TypesAsWritten) {
  Fixture f;
  f.AddEntry(100, "a", MetricType::kGauge, "");
  f.AddEntry(101, "b", MetricType::kCounter, "");
  f.AddEntry(102, "c", MetricType::kHistogram, "");
  f.AddEntry(103, "d", MetricType::kSummary, "");
  f.SetIdentities({MakeIdentity(0)});
  f.snapshot.devices[0].samples = {
      {100, int64_t{1}}, {101, int64_t{2}}, {102, int64_t{3}}, {103, int64_t{4}}};
  const std::string out = f.Render();
  EXPECT_NE(out.find("# TYPE a gauge\n"), std::string::npos);
  EXPECT_NE(out.find("# TYPE b counter\n"), std::string::npos);
  EXPECT_NE(out.find("# TYPE c histogram\n"), std::string::npos);
  EXPECT_NE(out.find("# TYPE d summary\n"), std::string::npos);
}

TEST(RenderPrometheusTest, MissingSampleOmitsSeries) {
  Fixture f;
  f.AddEntry(100, "DCGM_FI_DEV_SM_CLOCK", MetricType::kGauge, "sm");
  f.SetIdentities({MakeIdentity(0), MakeIdentity(1)});
  f.snapshot.devices[1].samples = {{100, int64_t{7}}};
  const std::string out = f.Render();
  EXPECT_EQ(out.find("DCGM_FI_DEV_SM_CLOCK{gpu=\"0\""), std::string::npos);
  EXPECT_NE(out.find("DCGM_FI_DEV_SM_CLOCK{gpu=\"1\""), std::string::npos);
}

TEST(RenderPrometheusTest, IntegersAsPercentD) {
  Fixture f;
  f.AddEntry(100, "x", MetricType::kGauge, "");
  f.SetIdentities({MakeIdentity(0), MakeIdentity(1), MakeIdentity(2)});
  f.snapshot.devices[0].samples = {{100, int64_t{0}}};
  f.snapshot.devices[1].samples = {{100, std::numeric_limits<int64_t>::min()}};
  f.snapshot.devices[2].samples = {{100, std::numeric_limits<int64_t>::max()}};
  const std::string out = f.Render();
  EXPECT_NE(out.find("\"} 0\n"), std::string::npos);
  EXPECT_NE(out.find("\"} -9223372036854775808\n"), std::string::npos);
  EXPECT_NE(out.find("\"} 9223372036854775807\n"), std::string::npos);
}

struct FixedCase {
  double in;
  const char* want;
};

TEST(AppendGoFixedTest, MatchesGoPercentF) {
  const FixedCase cases[] = {
      {0.1, "0.100000"},
      {299.437, "299.437000"},
      {302.206, "302.206000"},
      {1e20, "100000000000000000000.000000"},
      {-1.5, "-1.500000"},
      {-0.0000004, "-0.000000"},  // Go keeps the sign of a negative value rounding to zero
      {0.0, "0.000000"},
      {0.0000005, "0.000000"},  // 5e-7 is slightly below half in binary
      {0.0000015, "0.000002"},
      {2.5, "2.500000"},
      {0.1234565, "0.123456"},  // exact binary value lies below the tie
      {123456789.123456789, "123456789.123457"},
      {1e-300, "0.000000"},
      {std::numeric_limits<double>::quiet_NaN(), "NaN"},
      {std::numeric_limits<double>::infinity(), "+Inf"},
      {-std::numeric_limits<double>::infinity(), "-Inf"},
  };
  for (const FixedCase& c : cases) {
    std::string s;
    AppendGoFixed(c.in, &s);
    EXPECT_EQ(s, c.want) << "input " << c.in;
  }
  std::string big;
  AppendGoFixed(std::numeric_limits<double>::max(), &big);
  EXPECT_EQ(big.size(), 309u + 7u);
  EXPECT_EQ(big.substr(0, 6), "179769");
  EXPECT_EQ(big.substr(big.size() - 7), ".000000");
}

TEST(RenderPrometheusTest, DoubleSamplesUsePercentF) {
  Fixture f;
  f.AddEntry(155, "DCGM_FI_DEV_POWER_USAGE", MetricType::kGauge, "", ValueKind::kDouble);
  f.SetIdentities({MakeIdentity(0), MakeIdentity(1)});
  f.snapshot.devices[0].samples = {{155, 299.437}};
  f.snapshot.devices[1].samples = {{155, std::numeric_limits<double>::quiet_NaN()}};
  const std::string out = f.Render();
  EXPECT_NE(out.find("\"} 299.437000\n"), std::string::npos);
  EXPECT_NE(out.find("\"} NaN\n"), std::string::npos);
}

// dcgm-exporter's label order: fixed labels, sorted Labels (DCGM_FI_DRIVER_VERSION before the
// lower-case window_size_in_ms and xid), then Attributes (err_code, err_msg).
TEST(RenderPrometheusTest, XidFamiliesLabelsAndOrder) {
  Fixture f;
  f.AddEntry(9001, "DCGM_EXP_XID_ERRORS_COUNT", MetricType::kCounter, "XIDs.");
  f.AddEntry(230, "DCGM_FI_DEV_XID_ERRORS", MetricType::kGauge, "Last XID.");
  f.AddEntry(203, "DCGM_FI_DEV_GPU_UTIL", MetricType::kGauge, "Util.");
  f.AddEntry(1, "DCGM_FI_DRIVER_VERSION", MetricType::kLabel, "Driver.", ValueKind::kString);
  f.SetIdentities({MakeIdentity(0), MakeIdentity(1), MakeIdentity(2)});
  f.snapshot.xid_window_ms = 1000;
  f.snapshot.devices[0].samples = {{203, int64_t{5}}, {230, int64_t{79}}};
  f.snapshot.devices[0].xid_watched = true;
  f.snapshot.devices[0].xid_counts = {{13, 1}, {79, 2}};
  f.snapshot.devices[1].samples = {{203, int64_t{6}}, {230, int64_t{0}}};
  f.snapshot.devices[1].xid_watched = true;
  f.snapshot.devices[2].samples = {{203, int64_t{7}}};  // not watched: no XID series
  const std::string out = f.Render();
  const std::string p0 =
      "{gpu=\"0\",UUID=\"GPU-a1b2c3d4-1c2d-3e4f-5a6b-7c8d9e0f0000\",pci_bus_id=\"00000000:18:00."
      "0\","
      "device=\"nvidia0\",modelName=\"NVIDIA H200\",DCGM_FI_DRIVER_VERSION=\"580.159.04\"";
  const std::string p1 =
      "{gpu=\"1\",UUID=\"GPU-a1b2c3d5-1c2d-3e4f-5a6b-7c8d9e0f0001\",pci_bus_id=\"00000000:28:00."
      "0\","
      "device=\"nvidia1\",modelName=\"NVIDIA H200\",DCGM_FI_DRIVER_VERSION=\"580.159.04\"";
  const std::string expected_xid =
      "# HELP DCGM_FI_DEV_XID_ERRORS Last XID.\n# TYPE DCGM_FI_DEV_XID_ERRORS gauge\n"
      "DCGM_FI_DEV_XID_ERRORS" +
      p0 +
      ",err_code=\"79\",err_msg=\"GPU has fallen off the bus\"} 79\n"
      "DCGM_FI_DEV_XID_ERRORS" +
      p1 + ",err_code=\"0\",err_msg=\"No Error\"} 0\n";
  const std::string expected_count =
      "# HELP DCGM_EXP_XID_ERRORS_COUNT XIDs.\n# TYPE DCGM_EXP_XID_ERRORS_COUNT counter\n"
      "DCGM_EXP_XID_ERRORS_COUNT" +
      p0 +
      ",window_size_in_ms=\"1000\",xid=\"13\"} 1\n"
      "DCGM_EXP_XID_ERRORS_COUNT" +
      p0 +
      ",window_size_in_ms=\"1000\",xid=\"79\"} 2\n"
      "DCGM_EXP_XID_ERRORS_COUNT" +
      p1 + ",window_size_in_ms=\"1000\"} 0\n";
  EXPECT_NE(out.find(expected_xid), std::string::npos) << out;
  EXPECT_NE(out.find(expected_count), std::string::npos) << out;
  // Families by id: GPU_UTIL (203), XID_ERRORS (230), then the DCGM_EXP_* family last.
  EXPECT_LT(out.find("# HELP DCGM_FI_DEV_GPU_UTIL"), out.find("# HELP DCGM_FI_DEV_XID_ERRORS"));
  EXPECT_LT(out.find("# HELP DCGM_FI_DEV_XID_ERRORS"),
            out.find("# HELP DCGM_EXP_XID_ERRORS_COUNT"));
  EXPECT_LT(out.find("# HELP DCGM_EXP_XID_ERRORS_COUNT"), out.find("# HELP nvml_exporter_"));
  EXPECT_EQ(out.find("XID_ERRORS{gpu=\"2\""), std::string::npos) << out;
  EXPECT_EQ(out.find("XID_ERRORS_COUNT{gpu=\"2\""), std::string::npos) << out;
}

// DCGM_EXP_CLOCK_EVENTS_COUNT: one series per reason (ascending bit), clock_event before
// window_size_in_ms; sampled but no reason: no series; never sampled: one 0 without clock_event.
TEST(RenderPrometheusTest, ClockEventCountsLabelsAndQuirks) {
  Fixture f;
  f.AddEntry(9002, "DCGM_EXP_CLOCK_EVENTS_COUNT", MetricType::kCounter, "Clock events.");
  f.AddEntry(1, "DCGM_FI_DRIVER_VERSION", MetricType::kLabel, "Driver.", ValueKind::kString);
  f.SetIdentities({MakeIdentity(0), MakeIdentity(1), MakeIdentity(2), MakeIdentity(3)});
  f.snapshot.clock_events_window_ms = 300000;
  f.snapshot.devices[0].clock_events_watched = true;
  f.snapshot.devices[0].clock_events_sampled = true;
  f.snapshot.devices[0].clock_event_counts = {{0x1, 3}, {0x4, 10}};
  f.snapshot.devices[1].clock_events_watched = true;
  f.snapshot.devices[1].clock_events_sampled = true;  // read, nothing active
  f.snapshot.devices[2].clock_events_watched = true;  // no good read in the window
  // device 3: not watched (e.g. a MIG instance): nothing
  const std::string out = f.Render();
  const std::string p0 =
      "{gpu=\"0\",UUID=\"GPU-a1b2c3d4-1c2d-3e4f-5a6b-7c8d9e0f0000\",pci_bus_id=\"00000000:18:00."
      "0\",device=\"nvidia0\",modelName=\"NVIDIA H200\",DCGM_FI_DRIVER_VERSION=\"580.159.04\"";
  const std::string expected =
      "# HELP DCGM_EXP_CLOCK_EVENTS_COUNT Clock events.\n"
      "# TYPE DCGM_EXP_CLOCK_EVENTS_COUNT counter\n"
      "DCGM_EXP_CLOCK_EVENTS_COUNT" +
      p0 +
      ",clock_event=\"gpu_idle\",window_size_in_ms=\"300000\"} 3\n"
      "DCGM_EXP_CLOCK_EVENTS_COUNT" +
      p0 + ",clock_event=\"power_cap\",window_size_in_ms=\"300000\"} 10\n";
  EXPECT_NE(out.find(expected), std::string::npos) << out;
  EXPECT_EQ(out.find("CLOCK_EVENTS_COUNT{gpu=\"1\""), std::string::npos) << out;
  EXPECT_NE(out.find("DCGM_FI_DRIVER_VERSION=\"580.159.04\",window_size_in_ms=\"300000\"} 0\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("CLOCK_EVENTS_COUNT{gpu=\"2\""), std::string::npos) << out;
  EXPECT_EQ(out.find("CLOCK_EVENTS_COUNT{gpu=\"3\""), std::string::npos) << out;
}

// A MIG instance: the parent's gpu/UUID/pci_bus_id/device/modelName, then GPU_I_PROFILE and
// GPU_I_ID, then hostname and the label fields. nvml_exporter_gpu_up stays one per GPU.
TEST(RenderPrometheusTest, MigInstanceLabelsAfterParentLabels) {
  Fixture f;
  f.AddEntry(252, "DCGM_FI_DEV_FB_USED", MetricType::kGauge, "FB used.");
  f.AddEntry(1, "DCGM_FI_DRIVER_VERSION", MetricType::kLabel, "Driver.", ValueKind::kString);
  DeviceIdentity inst = MakeIdentity(0);
  inst.mig = DeviceIdentity::Mig{7, 0, "1g.18gb", "MIG-11111111-2222-3333-4444-555555555555"};
  f.SetIdentities({MakeIdentity(0), inst});
  f.options.hostname = "node1";
  f.snapshot.devices[1].samples = {{252, int64_t{1000}}};
  const std::string out = f.Render();
  EXPECT_NE(out.find("DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-a1b2c3d4-1c2d-3e4f-5a6b-"
                     "7c8d9e0f0000\",pci_bus_id=\"00000000:18:00.0\",device=\"nvidia0\","
                     "modelName=\"NVIDIA H200\",GPU_I_PROFILE=\"1g.18gb\",GPU_I_ID=\"7\","
                     "hostname=\"node1\",DCGM_FI_DRIVER_VERSION=\"580.159.04\"} 1000\n"),
            std::string::npos)
      << out;
  size_t up_lines = 0;
  for (size_t at = out.find("\nnvml_exporter_gpu_up{"); at != std::string::npos;
       at = out.find("\nnvml_exporter_gpu_up{", at + 1)) {
    ++up_lines;
  }
  EXPECT_EQ(up_lines, 1u) << out;
}

TEST(XidDescriptionTest, KnownAndUnknown) {
  EXPECT_EQ(fields::XidDescription(0), "No Error");
  EXPECT_EQ(fields::XidDescription(13), "Graphics Engine Exception");
  EXPECT_EQ(fields::XidDescription(79), "GPU has fallen off the bus");
  EXPECT_EQ(fields::XidDescription(95), "Uncontained ECC error");
  EXPECT_EQ(fields::XidDescription(99999), "Unknown Error");
  EXPECT_EQ(fields::XidDescription(-1), "Unknown Error");
}

}  // namespace
}  // namespace nvmlx::render
