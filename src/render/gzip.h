// gzip compression of a rendered page, done once per collection so that no request ever
// compresses (the server sends the precomputed bytes).
//
// Level 1 (zlib's fastest): on exposition text it is about 3.5 times faster than level 6 for
// about 10 % more bytes (docs/benchmarks.md), and the compression runs on the collector thread
// every interval whether a scrape comes or not, so its CPU counts in every collection.
//
// GzipCompress and GzipDecompress are pure functions: thread-safe. A GzipCompressor is used by
// one thread at a time.
#ifndef NVML_EXPORTER_RENDER_GZIP_H_
#define NVML_EXPORTER_RENDER_GZIP_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace nvmlx::render {

inline constexpr int kGzipLevel = 1;

// RFC 1952 gzip stream (zlib, kGzipLevel). Returns an empty string if zlib fails, which the
// server reads as "do not offer gzip".
std::string GzipCompress(std::string_view data);

// The same output as GzipCompress, from one zlib stream kept across calls (deflateReset instead
// of deflateInit2/deflateEnd: no allocation of zlib's window and hash tables per page).
class GzipCompressor {
 public:
  GzipCompressor();
  ~GzipCompressor();
  GzipCompressor(const GzipCompressor&) = delete;
  GzipCompressor& operator=(const GzipCompressor&) = delete;
  // Empty when zlib fails (as GzipCompress).
  std::string Compress(std::string_view data);

 private:
  struct Stream;
  std::unique_ptr<Stream> stream_;  // null when deflateInit2 failed
};

// The inverse, for tests and tools that read what we serve. Empty optional when `data` is not a
// complete gzip stream.
std::optional<std::string> GzipDecompress(std::string_view data);

}  // namespace nvmlx::render

#endif  // NVML_EXPORTER_RENDER_GZIP_H_
