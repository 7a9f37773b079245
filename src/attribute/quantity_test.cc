// Kubernetes quantities (quantity.h): every suffix, rounding up as resource.Quantity.Value()
// does, saturation, and strings that are not quantities.
#include "attribute/quantity.h"

#include <gtest/gtest.h>

#include <limits>

namespace nvmlx::attribute {
namespace {

TEST(QuantityTest, PlainIntegers) {
  EXPECT_EQ(ParseQuantityCeil("0"), 0);
  EXPECT_EQ(ParseQuantityCeil("1"), 1);
  EXPECT_EQ(ParseQuantityCeil("8"), 8);
  EXPECT_EQ(ParseQuantityCeil("+2"), 2);
  EXPECT_EQ(ParseQuantityCeil("-2"), -2);
  EXPECT_EQ(ParseQuantityCeil("007"), 7);
}

TEST(QuantityTest, FractionsRoundUp) {
  EXPECT_EQ(ParseQuantityCeil("0.5"), 1);
  EXPECT_EQ(ParseQuantityCeil(".5"), 1);
  EXPECT_EQ(ParseQuantityCeil("5."), 5);
  EXPECT_EQ(ParseQuantityCeil("1.0"), 1);
  EXPECT_EQ(ParseQuantityCeil("100m"), 1);
  EXPECT_EQ(ParseQuantityCeil("1000m"), 1);  // exact: no floating point rounding to 2
  EXPECT_EQ(ParseQuantityCeil("1001m"), 2);
  EXPECT_EQ(ParseQuantityCeil("-0.5"), 0);  // towards +infinity
  EXPECT_EQ(ParseQuantityCeil("-1500m"), -1);
  EXPECT_EQ(ParseQuantityCeil("1e-30"), 1);
}

TEST(QuantityTest, Suffixes) {
  EXPECT_EQ(ParseQuantityCeil("2k"), 2000);
  EXPECT_EQ(ParseQuantityCeil("1M"), 1000000);
  EXPECT_EQ(ParseQuantityCeil("1G"), 1000000000);
  EXPECT_EQ(ParseQuantityCeil("1Ki"), 1024);
  EXPECT_EQ(ParseQuantityCeil("1.5Ki"), 1536);
  EXPECT_EQ(ParseQuantityCeil("1Gi"), int64_t{1} << 30);
  EXPECT_EQ(ParseQuantityCeil("1e3"), 1000);
  EXPECT_EQ(ParseQuantityCeil("1E+2"), 100);
  EXPECT_EQ(ParseQuantityCeil("25e-1"), 3);
}

TEST(QuantityTest, HugeValuesSaturate) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(ParseQuantityCeil("9223372036854775807"), kMax);
  EXPECT_EQ(ParseQuantityCeil("9223372036854775808"), kMax);
  EXPECT_EQ(ParseQuantityCeil("8Ei"), kMax);
  EXPECT_EQ(ParseQuantityCeil("1e30"), kMax);
  EXPECT_EQ(ParseQuantityCeil("-10E"), std::numeric_limits<int64_t>::min());
}

TEST(QuantityTest, NotQuantities) {
  for (const char* bad :
       {"", "+", "-", ".", "gpu", "1 ", " 1", "1.2.3", "1ki", "1Xi", "1e", "1e+", "1e1000", "1e31",
        "1mm", "1KiB", "0x10", "1,5", "1234567890123456789012345678901"}) {
    EXPECT_FALSE(ParseQuantityCeil(bad).has_value()) << '"' << bad << '"';
  }
}

}  // namespace
}  // namespace nvmlx::attribute
