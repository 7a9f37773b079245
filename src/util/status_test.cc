#include "util/status.h"

#include <gtest/gtest.h>

#include <memory>

namespace nvmlx {
namespace {

TEST(StatusTest, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.ToString(), "OK");
}

TEST(StatusTest, CarriesCodeAndMessage) {
  Status s = NotSupported("nvmlDeviceGetFanSpeed: Not Supported (3)");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kNotSupported);
  EXPECT_EQ(s.ToString(), "NOT_SUPPORTED: nvmlDeviceGetFanSpeed: Not Supported (3)");
}

Status FailsFirst() {
  NVMLX_RETURN_IF_ERROR(InvalidArgument("first"));
  return Internal("unreachable");
}

TEST(StatusTest, ReturnIfErrorPropagates) {
  Status s = FailsFirst();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "first");
}

TEST(ResultTest, HoldsValueOrStatus) {
  Result<int> good(7);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 7);
  EXPECT_TRUE(good.status().ok());
  Result<int> bad(NotFound("x"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kNotFound);
}

TEST(ResultTest, MoveOnlyValue) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(3);
  ASSERT_TRUE(r.ok());
  std::unique_ptr<int> p = std::move(r).value();
  EXPECT_EQ(*p, 3);
}

}  // namespace
}  // namespace nvmlx
