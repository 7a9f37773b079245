// libFuzzer entry point for HTTP request parsing as our server wires it: Beast's request parser
// with the server's limits (ConfigureParser), the checks a session applies to every request
// head (CheckRequestHead: Transfer-Encoding, URL length, body), then what a request's fields
// feed (Accept-Encoding negotiation, Basic credentials). Built with clang
// -fsanitize=fuzzer,address by -DNVMLX_BUILD_FUZZ=ON (docs/development.md "Fuzzing"); replayed over
// testdata/fuzz/http_request/ by http_request_fuzz_replay_test in the ordinary build.
#include <boost/asio/buffer.hpp>
#include <boost/beast/http.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "serve/basic_auth.h"
#include "serve/http_server.h"
#include "serve/http_session.h"

namespace http = boost::beast::http;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nvmlx::serve::ServerOptions o;  // the daemon's defaults
  o.max_url_bytes = 256;          // small enough for the fuzzer to cross
  o.max_request_header_bytes = 2048;
  const char* p = reinterpret_cast<const char*>(data);
  // Pipelined requests, one after another on one connection, as a session reads them.
  while (size > 0) {
    http::request_parser<http::empty_body> parser;
    nvmlx::serve::ConfigureParser(o, &parser);
    boost::beast::error_code ec;
    size_t used = 0;
    // Fed in two pieces: the parser must not care where the reads split.
    const size_t first = size / 2 + 1 > size ? size : size / 2 + 1;
    used += parser.put(boost::asio::buffer(p, first), ec);
    if (ec == http::error::need_more) {
      ec = {};
      used = parser.put(boost::asio::buffer(p, size), ec);
    }
    if (ec || !parser.is_header_done()) return 0;  // the session answers 4xx and closes
    if (used == 0 || used > size) std::abort();
    if (auto refusal = nvmlx::serve::CheckRequestHead(o, parser)) return 0;  // 4xx and close
    const auto& req = parser.get();
    if (req.target().size() > o.max_url_bytes) std::abort();
    for (const auto& f : req) {
      const std::string_view v(f.value().data(), f.value().size());
      if (f.name() == http::field::accept_encoding) (void)nvmlx::serve::AcceptsGzip(v);
      if (f.name() == http::field::authorization) {
        auto creds = nvmlx::serve::ParseBasicAuthorization(v);
        if (creds && creds->first.find(':') != std::string::npos) std::abort();
      }
    }
    if (!req.keep_alive()) return 0;
    p += used;
    size -= used;
  }
  return 0;
}
