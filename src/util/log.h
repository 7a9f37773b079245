// Logging: spdlog on stderr in logfmt (`time=… level=info msg="…" key=value`) or JSON lines,
// chosen by --log-format text|json, debug level by --debug.
//
// Thread-safety: Init() once at start-up before other threads log; the log functions are
// thread-safe (spdlog's _mt sink).
#ifndef NVML_EXPORTER_UTIL_LOG_H_
#define NVML_EXPORTER_UTIL_LOG_H_

#include <spdlog/spdlog.h>

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace nvmlx::log {

enum class Format { kText, kJson };

// Installs the stderr logger as spdlog's default.
void Init(Format format, bool debug);

// A key/value pair appended after msg: `gpu=0 field=DCGM_FI_DEV_FAN_SPEED`.
using Kv = std::pair<std::string_view, std::string>;

// Builds the line's msg part plus fields; the sink formats it as logfmt or JSON.
void Write(spdlog::level::level_enum level, std::string_view msg, std::initializer_list<Kv> kvs);

inline void Info(std::string_view msg, std::initializer_list<Kv> kvs = {}) {
  Write(spdlog::level::info, msg, kvs);
}
inline void Warn(std::string_view msg, std::initializer_list<Kv> kvs = {}) {
  Write(spdlog::level::warn, msg, kvs);
}
inline void Error(std::string_view msg, std::initializer_list<Kv> kvs = {}) {
  Write(spdlog::level::err, msg, kvs);
}
inline void Debug(std::string_view msg, std::initializer_list<Kv> kvs = {}) {
  Write(spdlog::level::debug, msg, kvs);
}

// Exposed for tests: the formatted line (no trailing newline) for a message at a fixed time.
std::string FormatLine(Format format, std::string_view time, std::string_view level,
                       std::string_view msg, std::initializer_list<Kv> kvs);

}  // namespace nvmlx::log

#endif  // NVML_EXPORTER_UTIL_LOG_H_
