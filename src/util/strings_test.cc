#include "util/strings.h"

#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <string_view>

namespace nvmlx::util {
namespace {

using namespace std::string_view_literals;

TEST(TrimBlanks, StripsSpacesAndTabsOnly) {
  EXPECT_EQ(TrimBlanks(" \t a b \t "), "a b");
  EXPECT_EQ(TrimBlanks("ab"), "ab");
  EXPECT_EQ(TrimBlanks(""), "");
  EXPECT_EQ(TrimBlanks(" \t \t"), "");
  // Line breaks, form feeds and vertical tabs are content to it.
  EXPECT_EQ(TrimBlanks("\n a \r"), "\n a \r");
  EXPECT_EQ(TrimBlanks("\f\va\v\f"), "\f\va\v\f");
}

TEST(TrimWhitespace, StripsTheIsspaceSet) {
  EXPECT_EQ(TrimWhitespace(" \t\n\v\f\ra b\r\f\v\n\t "), "a b");
  EXPECT_EQ(TrimWhitespace("\n\r\n"), "");
  EXPECT_EQ(TrimWhitespace(""), "");
  // A NUL and UTF-8 bytes are not whitespace.
  EXPECT_EQ(TrimWhitespace("\0 x \0"sv), "\0 x \0"sv);
  EXPECT_EQ(TrimWhitespace("\u00a0x\u00a0"), "\u00a0x\u00a0");
  for (int c = 0; c < 256; ++c) {
    const std::string s(1, static_cast<char>(c));
    EXPECT_EQ(TrimWhitespace(s).empty(), std::isspace(c) != 0) << c;
  }
}

TEST(TrimChars, IsAViewIntoTheInput) {
  const std::string s = "--x--";
  const std::string_view t = TrimChars(s, "-");
  EXPECT_EQ(t, "x");
  EXPECT_EQ(t.data(), s.data() + 2);
  EXPECT_EQ(TrimChars(" \t\r\na\f", " \t\r\n"), "a\f");
  static_assert(TrimBlanks(" a ") == "a");
}

TEST(EqualsIgnoreCase, FoldsAsciiLettersOnly) {
  EXPECT_TRUE(EqualsIgnoreCase("Chunked", "chunked"));
  EXPECT_TRUE(EqualsIgnoreCase("X-GZIP", "x-gzip"));
  EXPECT_TRUE(EqualsIgnoreCase("", ""));
  EXPECT_FALSE(EqualsIgnoreCase("gzip", "gzipx"));
  EXPECT_FALSE(EqualsIgnoreCase("gzip", "gzi"));
  EXPECT_FALSE(EqualsIgnoreCase("gzip", "gzjp"));
  // '@' and '`' sit next to 'A' and 'a'; '[' is 'Z' + 1: none of them fold.
  EXPECT_FALSE(EqualsIgnoreCase("@", "`"));
  EXPECT_FALSE(EqualsIgnoreCase("[", "{"));
  EXPECT_FALSE(EqualsIgnoreCase("\u00c4", "\u00e4"));
  static_assert(EqualsIgnoreCase("NVIDIA", "nvidia"));
}

TEST(DecodeUtf8, ValidSequencesAndEveryKindOfInvalidOne) {
  uint32_t cp = 0;
  EXPECT_EQ(DecodeUtf8("a", 0, &cp), 1u);
  EXPECT_EQ(cp, uint32_t{'a'});
  EXPECT_EQ(DecodeUtf8("\xc3\xa4", 0, &cp), 2u);  // ä
  EXPECT_EQ(cp, 0xE4u);
  EXPECT_EQ(DecodeUtf8("x\xe2\x82\xac", 1, &cp), 3u);  // €, from an offset
  EXPECT_EQ(cp, 0x20ACu);
  EXPECT_EQ(DecodeUtf8("\xf0\x9f\x98\x80", 0, &cp), 4u);  // U+1F600
  EXPECT_EQ(cp, 0x1F600u);
  EXPECT_EQ(DecodeUtf8("\xf4\x8f\xbf\xbf", 0, &cp), 4u);  // U+10FFFF, the last
  EXPECT_EQ(cp, 0x10FFFFu);
  EXPECT_EQ(DecodeUtf8("\x80", 0, &cp), 0u);              // a stray continuation byte
  EXPECT_EQ(DecodeUtf8("\xc0\x80", 0, &cp), 0u);          // overlong NUL
  EXPECT_EQ(DecodeUtf8("\xe0\x80\x80", 0, &cp), 0u);      // overlong, three bytes
  EXPECT_EQ(DecodeUtf8("\xf0\x80\x80\x80", 0, &cp), 0u);  // overlong, four bytes
  EXPECT_EQ(DecodeUtf8("\xed\xa0\x80", 0, &cp), 0u);      // surrogate U+D800
  EXPECT_EQ(DecodeUtf8("\xf4\x90\x80\x80", 0, &cp), 0u);  // beyond U+10FFFF
  EXPECT_EQ(DecodeUtf8("\xe2\x82", 0, &cp), 0u);          // truncated
  EXPECT_EQ(DecodeUtf8("\xe2\x28\xa1", 0, &cp), 0u);      // a continuation missing
  static_assert([] {
    uint32_t c = 0;
    return DecodeUtf8("\xc3\xa4", 0, &c) == 2 && c == 0xE4;
  }());
}

}  // namespace
}  // namespace nvmlx::util
