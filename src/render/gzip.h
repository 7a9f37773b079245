// gzip compression of a rendered page, done once per collection so that no request ever
// compresses (the server sends the precomputed bytes).
//
// Pure function: thread-safe.
#ifndef NVML_EXPORTER_RENDER_GZIP_H_
#define NVML_EXPORTER_RENDER_GZIP_H_

#include <optional>
#include <string>
#include <string_view>

namespace nvmlx::render {

// RFC 1952 gzip stream (zlib, level 6). Returns an empty string if zlib fails, which the server
// reads as "do not offer gzip".
std::string GzipCompress(std::string_view data);

// The inverse, for tests and tools that read what we serve. Empty optional when `data` is not a
// complete gzip stream.
std::optional<std::string> GzipDecompress(std::string_view data);

}  // namespace nvmlx::render

#endif  // NVML_EXPORTER_RENDER_GZIP_H_
