#include "util/escape.h"

#include <gtest/gtest.h>

#include <string>

namespace nvmlx::util {
namespace {

using namespace std::string_literals;

TEST(EscapeControlBytes, EscapesEveryControlByteAndKeepsTheRest) {
  EXPECT_EQ(EscapeControlBytes("plain: ä €"), "plain: ä €");
  EXPECT_EQ(EscapeControlBytes("a\0b"s), "a\\x00b");
  EXPECT_EQ(EscapeControlBytes("l1\nl2\r\tx"), "l1\\nl2\\r\\tx");
  EXPECT_EQ(EscapeControlBytes("\x1b[2J\x7f\x01"), "\\x1b[2J\\x7f\\x01");
  EXPECT_EQ(EscapeControlBytes("back\\slash \"q\""), "back\\slash \"q\"");
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  for (char c : EscapeControlBytes(all)) {
    const auto u = static_cast<unsigned char>(c);
    EXPECT_TRUE(u >= 0x20 && u != 0x7f) << static_cast<int>(u);
  }
}

TEST(QuoteForMessage, Quotes) {
  EXPECT_EQ(QuoteForMessage(""), "\"\"");
  EXPECT_EQ(QuoteForMessage("x\0"s), "\"x\\x00\"");
}

// A 50 MB value quotes as its first 64 bytes and its length, whatever it holds.
TEST(QuoteForMessage, QuotesAtMostAPrefixOfALongValue) {
  const std::string huge(50u << 20, 'x');
  EXPECT_EQ(QuoteForMessage(huge), "\"" + std::string(64, 'x') + "\"... (52428800 bytes)");
  EXPECT_EQ(MessagePrefix(huge), std::string(64, 'x') + "... (52428800 bytes)");
  EXPECT_EQ(QuoteForMessage(std::string(64, 'y')), "\"" + std::string(64, 'y') + "\"");
  // The cut never splits a UTF-8 sequence: 63 ASCII bytes, then a 2-byte character.
  const std::string utf8 = std::string(63, 'a') + "\xc3\xa4" + "tail";
  EXPECT_EQ(MessagePrefix(utf8), std::string(63, 'a') + "... (69 bytes)");
}

}  // namespace
}  // namespace nvmlx::util
