#include "util/json_string.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace nvmlx::util {
namespace {

// Escapes, keeps valid UTF-8 (2, 3 and 4 bytes) and turns each byte of an invalid sequence
// (a lone lead byte, a surrogate) into U+FFFD; the result parses as JSON.
TEST(JsonString, EscapesAndRepairsStrings) {
  std::string out;
  AppendJsonEscaped("a\"b\\c\n\x1f\xc3\xa9\xe2\x9c\x93\xf0\x9f\x98\x80\xc3\xed\xa0\x80", &out);
  EXPECT_EQ(out,
            "a\\\"b\\\\c\\n\\u001f\xc3\xa9\xe2\x9c\x93\xf0\x9f\x98\x80\\ufffd\\ufffd\\ufffd"
            "\\ufffd");
  EXPECT_EQ(nlohmann::json::parse("\"" + out + "\"").get<std::string>().substr(0, 3), "a\"b");
}

TEST(JsonString, QuotedAddsTheQuotes) {
  std::string out;
  AppendJsonQuoted("tab\there\r", &out);
  EXPECT_EQ(out, "\"tab\\there\\r\"");
  out.clear();
  AppendJsonQuoted("", &out);
  EXPECT_EQ(out, "\"\"");
}

}  // namespace
}  // namespace nvmlx::util
