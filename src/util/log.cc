#include "util/log.h"

#include <spdlog/sinks/stdout_sinks.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>

#include "util/json_string.h"

namespace nvmlx::log {
namespace {

std::atomic<Format> g_format{Format::kText};  // trivially constructible: no static-init order

// logfmt value: bare when safe, else quoted. The quoting is JSON's (\" \\ \n \r \t, \u00XX for
// other control bytes, U+FFFD for bytes that are not UTF-8), which Go's strconv.Unquote and
// logfmt parsers read back: a value can never end a log line early or carry a terminal escape
// sequence (a pod name, a file line echoed in an error).
void AppendLogfmtValue(std::string_view v, std::string* out) {
  bool bare = !v.empty();
  for (char c : v) {
    const auto u = static_cast<unsigned char>(c);
    if (c == ' ' || c == '"' || c == '=' || c == '\\' || u < 0x20 || u == 0x7f) {
      bare = false;
      break;
    }
  }
  if (bare) {
    out->append(v);
    return;
  }
  util::AppendJsonQuoted(v, out);
}

std::string NowRfc3339() {
  auto now = std::chrono::system_clock::now();
  auto secs = std::chrono::system_clock::to_time_t(now);
  auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

std::string_view LevelName(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
      return "trace";
    case spdlog::level::debug:
      return "debug";
    case spdlog::level::info:
      return "info";
    case spdlog::level::warn:
      return "warn";
    case spdlog::level::err:
      return "error";
    case spdlog::level::critical:
      return "critical";
    default:
      return "info";
  }
}

}  // namespace

std::string FormatLine(Format format, std::string_view time, std::string_view level,
                       std::string_view msg, std::initializer_list<Kv> kvs) {
  std::string out;
  out.reserve(64 + msg.size());
  if (format == Format::kJson) {
    out += "{\"time\":";
    util::AppendJsonQuoted(time, &out);
    out += ",\"level\":";
    util::AppendJsonQuoted(level, &out);
    out += ",\"msg\":";
    util::AppendJsonQuoted(msg, &out);
    for (const auto& [k, v] : kvs) {
      out.push_back(',');
      util::AppendJsonQuoted(k, &out);
      out.push_back(':');
      util::AppendJsonQuoted(v, &out);
    }
    out.push_back('}');
    return out;
  }
  out += "time=";
  out += time;
  out += " level=";
  out += level;
  out += " msg=";
  // msg is always quoted, as Go's slog text handler does for anything with spaces.
  std::string quoted;
  AppendLogfmtValue(msg, &quoted);
  if (!quoted.empty() && quoted.front() != '"') quoted = "\"" + quoted + "\"";
  out += quoted;
  for (const auto& [k, v] : kvs) {
    out.push_back(' ');
    out += k;
    out.push_back('=');
    AppendLogfmtValue(v, &out);
  }
  return out;
}

void Init(Format format, bool debug) {
  g_format.store(format);
  spdlog::drop("nvml-exporter");  // a second Init (a test suite) replaces the first
  auto logger = spdlog::stderr_logger_mt("nvml-exporter");
  logger->set_pattern("%v");  // Write() formats the whole line itself
  logger->set_level(debug ? spdlog::level::debug : spdlog::level::info);
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(logger);
}

void Write(spdlog::level::level_enum level, std::string_view msg, std::initializer_list<Kv> kvs) {
  auto logger = spdlog::default_logger_raw();
  if (logger == nullptr || !logger->should_log(level)) return;
  std::string line = FormatLine(g_format.load(), NowRfc3339(), LevelName(level), msg, kvs);
  logger->log(level, "{}", line);
}

}  // namespace nvmlx::log
