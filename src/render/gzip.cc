#include "render/gzip.h"

#include <zlib.h>

#include <limits>

namespace nvmlx::render {

struct GzipCompressor::Stream {
  z_stream zs{};
};

GzipCompressor::GzipCompressor() : stream_(std::make_unique<Stream>()) {
  // windowBits 15 + 16 selects the gzip wrapper; memLevel 8 is zlib's default.
  if (deflateInit2(&stream_->zs, kGzipLevel, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    stream_.reset();
  }
}

GzipCompressor::~GzipCompressor() {
  if (stream_ != nullptr) deflateEnd(&stream_->zs);
}

std::string GzipCompressor::Compress(std::string_view data) {
  if (stream_ == nullptr || data.size() > std::numeric_limits<uInt>::max()) return {};
  z_stream& zs = stream_->zs;
  if (deflateReset(&zs) != Z_OK) return {};
  std::string out;
  // deflateBound covers the whole output of one Z_FINISH call (it includes the gzip header only
  // for the default header, which is what we write).
  out.resize(deflateBound(&zs, static_cast<uLong>(data.size())));
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&zs, Z_FINISH);
  const size_t produced = out.size() - zs.avail_out;
  zs.next_in = nullptr;  // `data` and `out` do not outlive this call
  zs.next_out = nullptr;
  if (rc != Z_STREAM_END) return {};
  out.resize(produced);
  return out;
}

std::string GzipCompress(std::string_view data) { return GzipCompressor().Compress(data); }

std::optional<std::string> GzipDecompress(std::string_view data) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK) return std::nullopt;  // 15 + 16: gzip wrapper only
  std::string out;
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  char buf[16384];
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof(buf);
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof(buf) - zs.avail_out);
  }
  inflateEnd(&zs);
  if (rc != Z_STREAM_END) return std::nullopt;
  return out;
}

}  // namespace nvmlx::render
