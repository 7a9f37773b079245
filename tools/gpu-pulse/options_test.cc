#include "options.h"

#include <gtest/gtest.h>

#include <vector>

namespace gpu_pulse {
namespace {

using std::chrono::hours;
using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::nanoseconds;
using std::chrono::seconds;

ParseResult Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "gpu-pulse");
  return ParseOptions(static_cast<int>(args.size()), args.data());
}

TEST(ParseDuration, GoSyntax) {
  EXPECT_EQ(ParseDuration("500ms"), milliseconds(500));
  EXPECT_EQ(ParseDuration("20s"), seconds(20));
  EXPECT_EQ(ParseDuration("5m"), minutes(5));
  EXPECT_EQ(ParseDuration("1h"), hours(1));
  EXPECT_EQ(ParseDuration("1h30m"), minutes(90));
  EXPECT_EQ(ParseDuration("2h45m10s"), hours(2) + minutes(45) + seconds(10));
  EXPECT_EQ(ParseDuration("1.5s"), milliseconds(1500));
  EXPECT_EQ(ParseDuration(".5s"), milliseconds(500));
  EXPECT_EQ(ParseDuration("10us"), microseconds(10));
  EXPECT_EQ(ParseDuration("10\xC2\xB5s"), microseconds(10));
  EXPECT_EQ(ParseDuration("7ns"), nanoseconds(7));
  EXPECT_EQ(ParseDuration("0"), nanoseconds(0));
  EXPECT_EQ(ParseDuration("0s"), nanoseconds(0));
  EXPECT_EQ(ParseDuration("+3s"), seconds(3));
}

TEST(ParseDuration, Rejects) {
  for (const char* bad :
       {"", "20", "s", "-1s", "1x", "1.2.3s", "1 s", "ms5", "1e3s", "+", "99999999999h"}) {
    EXPECT_FALSE(ParseDuration(bad).has_value()) << bad;
  }
}

TEST(ParseGpuList, Lists) {
  EXPECT_EQ(ParseGpuList("0"), std::vector<int>({0}));
  EXPECT_EQ(ParseGpuList("0,1,3"), std::vector<int>({0, 1, 3}));
  EXPECT_EQ(ParseGpuList("all"), std::vector<int>());
  for (const char* bad : {"", ",", "0,", ",1", "a", "-1", "0,0", "1;2", "0x1"}) {
    EXPECT_FALSE(ParseGpuList(bad).has_value()) << bad;
  }
}

TEST(ParseOptions, Defaults) {
  ParseResult r = Parse({});
  ASSERT_EQ(r.error, "");
  EXPECT_FALSE(r.help);
  EXPECT_EQ(r.options.on, seconds(20));
  EXPECT_EQ(r.options.off, seconds(20));
  EXPECT_EQ(r.options.duration, minutes(5));
  EXPECT_EQ(r.options.gpus, std::vector<int>({0}));
  EXPECT_EQ(r.options.mode, Mode::kFp32);
  EXPECT_EQ(r.options.kernel_time, milliseconds(25));
}

TEST(ParseOptions, FullCommandLine) {
  ParseResult r = Parse({"--on", "20s", "--off", "500ms", "--duration", "5m", "--gpus", "0,1",
                         "--mode", "tensor", "--kernel-ms=40", "--memory-gib", "2.5"});
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.options.on, seconds(20));
  EXPECT_EQ(r.options.off, milliseconds(500));
  EXPECT_EQ(r.options.duration, minutes(5));
  EXPECT_EQ(r.options.gpus, std::vector<int>({0, 1}));
  EXPECT_EQ(r.options.mode, Mode::kTensor);
  EXPECT_EQ(r.options.kernel_time, milliseconds(40));
  EXPECT_DOUBLE_EQ(r.options.memory_gib, 2.5);
}

TEST(ParseOptions, EqualsFormAndModes) {
  for (Mode m : {Mode::kFp32, Mode::kFp64, Mode::kTensor, Mode::kMemory}) {
    std::string arg = "--mode=" + std::string(ModeName(m));
    ParseResult r = Parse({arg.c_str(), "--duration=0", "--gpus=all"});
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(r.options.mode, m);
    EXPECT_EQ(r.options.duration, nanoseconds(0));
    EXPECT_TRUE(r.options.gpus.empty());
  }
}

TEST(ParseOptions, Help) {
  EXPECT_TRUE(Parse({"--help"}).help);
  EXPECT_TRUE(Parse({"-h"}).help);
  EXPECT_TRUE(Parse({"--mode", "fp32", "--help", "--bogus"}).help);
  EXPECT_NE(UsageText().find("--mode"), std::string::npos);
}

TEST(ParseOptions, Errors) {
  EXPECT_NE(Parse({"--on"}).error, "");
  EXPECT_NE(Parse({"--on", "20"}).error, "");
  EXPECT_NE(Parse({"--on", "0s"}).error, "");
  EXPECT_NE(Parse({"--off", "-1s"}).error, "");
  EXPECT_NE(Parse({"--mode", "int8"}).error, "");
  EXPECT_NE(Parse({"--gpus", "0,0"}).error, "");
  EXPECT_NE(Parse({"--kernel-ms", "0"}).error, "");
  EXPECT_NE(Parse({"--memory-gib", "100"}).error, "");
  EXPECT_NE(Parse({"--frobnicate"}).error, "");
  EXPECT_NE(Parse({"extra"}).error, "");
  EXPECT_NE(Parse({"--on20s"}).error, "");
  EXPECT_EQ(Parse({"--off", "0"}).error, "");
}

TEST(FormatDuration, GoLike) {
  EXPECT_EQ(FormatDuration(seconds(20)), "20s");
  EXPECT_EQ(FormatDuration(milliseconds(500)), "500ms");
  EXPECT_EQ(FormatDuration(minutes(5)), "5m0s");
  EXPECT_EQ(FormatDuration(minutes(90)), "1h30m0s");
  EXPECT_EQ(FormatDuration(nanoseconds(0)), "0s");
}

}  // namespace
}  // namespace gpu_pulse
