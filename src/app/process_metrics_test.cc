#include "app/process_metrics.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "render/prometheus.h"

namespace nvmlx::app {
namespace {

const std::string kFake = NVMLX_SOURCE_DIR "/testdata/proc_self";

// The fixture's figures (testdata/proc_self/README.md) with a fixed tick and page size.
TEST(ProcessMetricsTest, ParsesStatAfterTheLastParenthesis) {
  ProcessStats s;
  const std::string stat =
      "4242 (nvml (exp) x) S 1 4242 4242 0 -1 4194560 500 0 0 0 1234 567 0 0 20 0 3 0 250000 "
      "123456789 2048 18446744073709551615 0 0\n";
  ASSERT_TRUE(
      ParseProcStat(stat, {.ticks_per_second = 100, .page_bytes = 4096, .boot_time_s = 1700000000},
                    &s)
          .ok());
  EXPECT_EQ(s.cpu_ms, 18010);  // (1234 + 567) ticks at 100 Hz
  EXPECT_EQ(s.start_time_ms, 1700000000LL * 1000 + 2500000);
  EXPECT_EQ(s.virtual_bytes, 123456789);
  EXPECT_EQ(s.resident_bytes, 2048 * 4096);
}

TEST(ProcessMetricsTest, BadStatNamesTheField) {
  ProcessStats s;
  EXPECT_EQ(ParseProcStat("1 (x) S 1 2", {}, &s).message(), "/proc stat: no utime field");
  EXPECT_EQ(ParseProcStat("no parenthesis", {}, &s).message(),
            "/proc stat: no ')' closing the command name");
  const std::string bad = "1 (x) S 1 1 1 0 -1 0 0 0 0 0 12x 5 0 0 20 0 1 0 9 9 9\n";
  EXPECT_EQ(ParseProcStat(bad, {}, &s).message(), "/proc stat: utime is not a number: \"12x\"");
  EXPECT_EQ(ParseBootTime("cpu 1 2\n").status().message(), "/proc/stat: no btime line");
  EXPECT_EQ(*ParseBootTime("cpu 1\nbtime 42\n"), 42);
}

TEST(ProcessMetricsTest, ReadsAProcTree) {
  Result<ProcessStats> s = ReadProcessStats(kFake);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->open_fds, 3);
  EXPECT_EQ(s->virtual_bytes, 123456789);
  EXPECT_EQ(s->resident_bytes, 2048 * ::sysconf(_SC_PAGESIZE));
  const int64_t tick = ::sysconf(_SC_CLK_TCK);
  EXPECT_EQ(s->cpu_ms, 1801 * 1000 / tick);
  EXPECT_EQ(s->start_time_ms, 1700000000LL * 1000 + 250000LL * 1000 / tick);
  EXPECT_EQ(ReadProcessStats("/nonexistent").status().message(), "/nonexistent/stat: cannot open");
}

// This test process's own figures are those of a running process.
TEST(ProcessMetricsTest, OwnFiguresArePlausible) {
  Result<ProcessStats> s = ReadProcessStats();
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_GT(s->resident_bytes, 1 << 20);  // a gtest binary is over 1 MiB resident
  EXPECT_GE(s->virtual_bytes, s->resident_bytes);
  EXPECT_GE(s->open_fds, 3);  // stdin, stdout, stderr
  rlimit rl{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &rl), 0);
  EXPECT_EQ(s->max_fds, static_cast<int64_t>(rl.rlim_cur));
  EXPECT_LE(s->open_fds, s->max_fds);
  EXPECT_GE(s->cpu_ms, 0);
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  // Started before now, and not before this test binary could have been built today.
  EXPECT_LE(s->start_time_ms, now_ms + 1000);
  EXPECT_GT(s->start_time_ms, now_ms - 3600 * 1000);
}

TEST(ProcessMetricsTest, FamiliesText) {
  render::SeriesModel model;
  AddProcessFamilies({.cpu_ms = 18010,
                      .resident_bytes = 8388608,
                      .virtual_bytes = 123456789,
                      .open_fds = 9,
                      .max_fds = 1024,
                      .start_time_ms = 1700002500000},
                     &model);
  std::string page;
  render::RenderPrometheus(model, &page);
  EXPECT_EQ(page,
            "# HELP process_cpu_seconds_total CPU time (user and system) used, seconds.\n"
            "# TYPE process_cpu_seconds_total counter\n"
            "process_cpu_seconds_total 18.010\n"
            "# HELP process_resident_memory_bytes Resident set size, bytes.\n"
            "# TYPE process_resident_memory_bytes gauge\n"
            "process_resident_memory_bytes 8388608\n"
            "# HELP process_virtual_memory_bytes Size of the virtual address space, bytes.\n"
            "# TYPE process_virtual_memory_bytes gauge\n"
            "process_virtual_memory_bytes 123456789\n"
            "# HELP process_open_fds File descriptors open.\n"
            "# TYPE process_open_fds gauge\n"
            "process_open_fds 9\n"
            "# HELP process_max_fds File descriptors the process may open (soft limit).\n"
            "# TYPE process_max_fds gauge\n"
            "process_max_fds 1024\n"
            "# HELP process_start_time_seconds When the process started, seconds since the Unix "
            "epoch.\n"
            "# TYPE process_start_time_seconds gauge\n"
            "process_start_time_seconds 1700002500.000\n");
}

}  // namespace
}  // namespace nvmlx::app
