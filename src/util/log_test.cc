#include "util/log.h"

#include <gtest/gtest.h>

namespace nvmlx::log {
namespace {

TEST(LogTest, LogfmtQuotesMessageAndEscapes) {
  EXPECT_EQ(FormatLine(Format::kText, "2026-12-02T00:00:00.000Z", "info", "collector started",
                       {{"interval_ms", "1000"}, {"path", "/a b"}}),
            "time=2026-12-02T00:00:00.000Z level=info msg=\"collector started\" interval_ms=1000 "
            "path=\"/a b\"");
  EXPECT_EQ(FormatLine(Format::kText, "t", "warn", "x", {{"err", "say \"hi\"\n"}}),
            "time=t level=warn msg=\"x\" err=\"say \\\"hi\\\"\\n\"");
}

TEST(LogTest, JsonIsOneObjectPerLine) {
  EXPECT_EQ(FormatLine(Format::kJson, "t", "error", "bad \"csv\"", {{"line", "7"}}),
            "{\"time\":\"t\",\"level\":\"error\",\"msg\":\"bad \\\"csv\\\"\",\"line\":\"7\"}");
}

}  // namespace
}  // namespace nvmlx::log
