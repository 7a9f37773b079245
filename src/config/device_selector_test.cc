#include "config/device_selector.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

namespace nvmlx::config {
namespace {

using Kind = DeviceSelector::Kind;

struct GoodCase {
  const char* text;
  Kind kind;
  bool all;
  std::vector<unsigned> ids;
};

void PrintTo(const GoodCase& c, std::ostream* os) { *os << '"' << c.text << '"'; }

class GoodSelectorTest : public ::testing::TestWithParam<GoodCase> {};

TEST_P(GoodSelectorTest, Parses) {
  const GoodCase& c = GetParam();
  Result<DeviceSelector> sel = ParseDeviceSelector(c.text);
  ASSERT_TRUE(sel.ok()) << c.text << ": " << sel.status().message();
  EXPECT_EQ(sel->kind, c.kind) << c.text;
  EXPECT_EQ(sel->all, c.all) << c.text;
  EXPECT_EQ(sel->ids, c.ids) << c.text;
}

INSTANTIATE_TEST_SUITE_P(
    Table, GoodSelectorTest,
    ::testing::Values(GoodCase{"f", Kind::kFlex, true, {}}, GoodCase{"g", Kind::kGpus, true, {}},
                      GoodCase{"i", Kind::kInstances, true, {}},
                      GoodCase{"g:0,1", Kind::kGpus, false, {0, 1}},
                      GoodCase{"g:0-3", Kind::kGpus, false, {0, 1, 2, 3}},
                      GoodCase{"g:3", Kind::kGpus, false, {3}},
                      GoodCase{"g:2-2", Kind::kGpus, false, {2}},
                      GoodCase{"i:0,2-4", Kind::kInstances, false, {0, 2, 3, 4}},
                      // Sorted and unique whatever the order written.
                      GoodCase{"g:5,1-3,2,0", Kind::kGpus, false, {0, 1, 2, 3, 5}},
                      // Blanks around the value and the items are harmless.
                      GoodCase{" g:0, 2 - 3 ", Kind::kGpus, false, {0, 2, 3}},
                      GoodCase{"g:007", Kind::kGpus, false, {7}}));

struct BadCase {
  const char* text;
  const char* message;
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << '"' << c.text << '"'; }

class BadSelectorTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadSelectorTest, ExactMessage) {
  Result<DeviceSelector> sel = ParseDeviceSelector(GetParam().text);
  ASSERT_FALSE(sel.ok()) << GetParam().text;
  EXPECT_EQ(sel.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(sel.status().message(), GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    Table, BadSelectorTest,
    ::testing::Values(
        BadCase{"",
                "invalid device selector \"\": expected f, g, i, g:<ids> or i:<ids> (e.g. "
                "g:0,2-3)"},
        BadCase{"x",
                "invalid device selector \"x\": expected f, g, i, g:<ids> or i:<ids> (e.g. "
                "g:0,2-3)"},
        BadCase{"G",
                "invalid device selector \"G\": expected f, g, i, g:<ids> or i:<ids> (e.g. "
                "g:0,2-3)"},
        BadCase{"x:0", "invalid device selector \"x:0\": expected g or i before ':'"},
        BadCase{"f:0",
                "invalid device selector \"f:0\": no id list is allowed with f (flex); use "
                "g:<ids> to pick GPUs"},
        BadCase{"f:0-1",
                "invalid device selector \"f:0-1\": no id list is allowed with f (flex); "
                "use g:<ids> to pick GPUs"},
        BadCase{"g:0:1", "invalid device selector \"g:0:1\": at most one ':' is allowed"},
        BadCase{"g:",
                "invalid device selector \"g:\": expected a list of ids after ':' (e.g. "
                "0,2-3)"},
        BadCase{"g:0,", "invalid device selector \"g:0,\": empty entry in the id list"},
        BadCase{"g:0,,1", "invalid device selector \"g:0,,1\": empty entry in the id list"},
        BadCase{"g:a", "invalid device selector \"g:a\": expected a number, got \"a\""},
        // '+' joins selectors (g+i): "g:" is then a part without ids.
        BadCase{"g:+1",
                "invalid device selector \"g:+1\": expected a list of ids after ':' (e.g. "
                "0,2-3)"},
        BadCase{"g+i+g", "invalid device selector \"g+i+g\": g is given twice"},
        BadCase{"i:0+i:1", "invalid device selector \"i:0+i:1\": i is given twice"},
        BadCase{"g+f", "invalid device selector \"g+f\": f (flex) cannot be combined with g or i"},
        BadCase{"+i", "invalid device selector \"+i\": empty selector next to '+'"},
        BadCase{"g++i", "invalid device selector \"g++i\": empty selector next to '+'"},
        BadCase{"g+x",
                "invalid device selector \"g+x\": expected f, g, i, g:<ids> or i:<ids> "
                "(e.g. g:0,2-3)"},
        BadCase{"g:1-", "invalid device selector \"g:1-\": expected a number after '-'"},
        BadCase{"g:-1", "invalid device selector \"g:-1\": expected a number before '-'"},
        BadCase{"g:1-x", "invalid device selector \"g:1-x\": expected a number after '-'"},
        BadCase{"g:1-2-3",
                "invalid device selector \"g:1-2-3\": a range is <number>-<number>, got "
                "\"1-2-3\""},
        BadCase{"g:3-1", "invalid device selector \"g:3-1\": range 3-1 is backwards (write 1-3)"},
        BadCase{"g:70000",
                "invalid device selector \"g:70000\": id 70000 is too large (at most 65535)"},
        BadCase{"g:99999999999999999999999",
                "invalid device selector \"g:99999999999999999999999\": id "
                "99999999999999999999999 is too large (at most 65535)"},
        BadCase{"i:0-4000000000",
                "invalid device selector \"i:0-4000000000\": range 0-4000000000 is too large "
                "(ids are at most 65535)"}));

TEST(DeviceSelector, SelectsGpu) {
  DeviceSelector flex = *ParseDeviceSelector("f");
  EXPECT_TRUE(flex.SelectsGpu(0));
  EXPECT_TRUE(flex.SelectsGpu(7));

  DeviceSelector all = *ParseDeviceSelector("g");
  EXPECT_TRUE(all.SelectsGpu(0));
  EXPECT_TRUE(all.SelectsGpu(100));

  DeviceSelector some = *ParseDeviceSelector("g:1,3-4");
  EXPECT_FALSE(some.SelectsGpu(0));
  EXPECT_TRUE(some.SelectsGpu(1));
  EXPECT_FALSE(some.SelectsGpu(2));
  EXPECT_TRUE(some.SelectsGpu(3));
  EXPECT_TRUE(some.SelectsGpu(4));
  EXPECT_FALSE(some.SelectsGpu(5));

  DeviceSelector inst = *ParseDeviceSelector("i:0");
  EXPECT_FALSE(inst.SelectsGpu(0));
  EXPECT_FALSE(ParseDeviceSelector("i")->SelectsGpu(0));
}

// g+i (dcgm-exporter 4.8.3+): the g part picks GPUs, the i part MIG instances, in either order.
TEST(DeviceSelector, CombinedGpusAndInstances) {
  DeviceSelector both = *ParseDeviceSelector(" i:2,0 + g:1-2 ");
  EXPECT_EQ(both.kind, Kind::kGpusAndInstances);
  EXPECT_FALSE(both.all);
  EXPECT_EQ(both.ids, (std::vector<unsigned>{1, 2}));
  EXPECT_FALSE(both.instances_all);
  EXPECT_EQ(both.instance_ids, (std::vector<unsigned>{0, 2}));
  EXPECT_FALSE(both.SelectsGpu(0));
  EXPECT_TRUE(both.SelectsGpu(2));
  EXPECT_TRUE(both.SelectsInstance(0));
  EXPECT_FALSE(both.SelectsInstance(1));
  DeviceSelector all = *ParseDeviceSelector("g+i");
  EXPECT_TRUE(all.all && all.instances_all);
  EXPECT_TRUE(all.SelectsGpu(9) && all.SelectsInstance(9));
  // The single kinds: g picks no instance, i no GPU, f everything.
  EXPECT_FALSE(ParseDeviceSelector("g")->SelectsInstance(0));
  EXPECT_TRUE(ParseDeviceSelector("i:3")->SelectsInstance(3));
  EXPECT_FALSE(ParseDeviceSelector("i:3")->SelectsInstance(2));
  EXPECT_TRUE(ParseDeviceSelector("f")->SelectsInstance(5));
}

TEST(DeviceSelector, DefaultIsFlexAll) {
  DeviceSelector d;
  EXPECT_EQ(d.kind, Kind::kFlex);
  EXPECT_TRUE(d.all);
  EXPECT_TRUE(d.SelectsGpu(3));
}

}  // namespace
}  // namespace nvmlx::config
