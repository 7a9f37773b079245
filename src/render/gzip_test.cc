#include "render/gzip.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

namespace nvmlx::render {
namespace {

std::string Gunzip(const std::string& in) {
  std::optional<std::string> out = GzipDecompress(in);
  EXPECT_TRUE(out.has_value()) << "not a complete gzip stream";
  return out.value_or("");
}

TEST(GzipTest, DecompressRejectsTruncatedStream) {
  const std::string gz = GzipCompress(std::string(10000, 'x'));
  EXPECT_FALSE(GzipDecompress(gz.substr(0, gz.size() / 2)).has_value());
  EXPECT_FALSE(GzipDecompress("not gzip").has_value());
}

TEST(GzipTest, RoundTrip) {
  std::string text;
  for (int i = 0; i < 5000; ++i) {
    text +=
        "DCGM_FI_DEV_GPU_TEMP{gpu=\"" + std::to_string(i % 8) + "\"} " + std::to_string(i) + "\n";
  }
  const std::string gz = GzipCompress(text);
  ASSERT_GE(gz.size(), 18u);
  EXPECT_EQ(static_cast<unsigned char>(gz[0]), 0x1f);  // gzip magic, not a zlib header
  EXPECT_EQ(static_cast<unsigned char>(gz[1]), 0x8b);
  EXPECT_LT(gz.size(), text.size() / 5);
  EXPECT_EQ(Gunzip(gz), text);
}

TEST(GzipTest, CompressorReusedAcrossPagesGivesTheSameBytes) {
  GzipCompressor z;
  std::string a(20000, 'a'), b;
  for (int i = 0; i < 3000; ++i)
    b += "DCGM_FI_DEV_POWER_USAGE{gpu=\"" + std::to_string(i) + "\"} 1\n";
  const std::string ga = z.Compress(a);
  const std::string gb = z.Compress(b);
  EXPECT_EQ(Gunzip(ga), a);
  EXPECT_EQ(Gunzip(gb), b);
  // No state leaks from one page into the next: each is what a fresh stream writes.
  EXPECT_EQ(gb, GzipCompress(b));
  EXPECT_EQ(z.Compress(a), ga);
  EXPECT_EQ(Gunzip(z.Compress("")), "");
}

TEST(GzipTest, Empty) {
  const std::string gz = GzipCompress("");
  ASSERT_FALSE(gz.empty());
  EXPECT_EQ(Gunzip(gz), "");
}

TEST(GzipTest, Incompressible) {
  std::string noise;
  uint32_t x = 12345;
  for (int i = 0; i < 100000; ++i) {
    x = x * 1103515245u + 12345u;
    noise.push_back(static_cast<char>(x >> 24));
  }
  EXPECT_EQ(Gunzip(GzipCompress(noise)), noise);
}

}  // namespace
}  // namespace nvmlx::render
