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

// A value can neither end the line nor carry a terminal escape sequence: \r and other control
// bytes are escaped (JSON's escapes, which logfmt readers and Go's strconv.Unquote accept).
TEST(LogTest, LogfmtEscapesEveryControlByte) {
  EXPECT_EQ(FormatLine(Format::kText, "t", "warn", "x", {{"pod", "a\rb\x1b[31mc\x7f"}}),
            "time=t level=warn msg=\"x\" pod=\"a\\rb\\u001b[31mc\x7f\"");
  EXPECT_EQ(FormatLine(Format::kText, "t", "info", "x", {{"name", "caf\xc3\xa9"}}),
            "time=t level=info msg=\"x\" name=caf\xc3\xa9");
}

TEST(LogTest, JsonIsOneObjectPerLine) {
  EXPECT_EQ(FormatLine(Format::kJson, "t", "error", "bad \"csv\"", {{"line", "7"}}),
            "{\"time\":\"t\",\"level\":\"error\",\"msg\":\"bad \\\"csv\\\"\",\"line\":\"7\"}");
}

}  // namespace
}  // namespace nvmlx::log
