// Making untrusted text safe to show in a message: control bytes escaped as \n, \r, \t or \xNN.
// Configuration parsers echo what they read (an unknown key, a bad value) in their errors; a NUL
// byte there would cut the message short wherever it is printed as a C string, and a newline or
// a terminal escape sequence would forge or garble the operator's log and terminal lines.
//
// Thread-safety: pure functions.
#ifndef NVML_EXPORTER_UTIL_ESCAPE_H_
#define NVML_EXPORTER_UTIL_ESCAPE_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace nvmlx::util {

// `s` with every byte below 0x20 and 0x7f escaped (\n, \r, \t, else \xNN, lower-case hex); other
// bytes, UTF-8 included, unchanged. A backslash is not escaped: the result is for reading, not
// for parsing back.
std::string EscapeControlBytes(std::string_view s);

// At most this many bytes of one value are quoted in a message: a configuration value, a flag,
// an environment variable or a peer's answer can be megabytes, and an error (or a log line) that
// repeats all of it costs as much again to print and buries the reason. 64 bytes show any name or
// number we expect whole.
inline constexpr size_t kMaxQuotedBytes = 64;
// A file path is quoted up to this many bytes: longer than any path we expect, bounded all the
// same (a path comes from a flag or an environment variable, which may be megabytes).
inline constexpr size_t kMaxQuotedPathBytes = 256;

// EscapeControlBytes of at most the first `max_bytes` of `s` (cut before a UTF-8 sequence
// that would not fit whole), followed by "..." and the whole length when `s` is longer:
// `abc...` (70000 bytes). Unquoted, for messages that already frame the value.
std::string MessagePrefix(std::string_view s, size_t max_bytes = kMaxQuotedBytes);

// MessagePrefix(s) in double quotes, for "unknown field \"...\"" style messages.
std::string QuoteForMessage(std::string_view s);

}  // namespace nvmlx::util

#endif  // NVML_EXPORTER_UTIL_ESCAPE_H_
