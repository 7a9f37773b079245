// JSON string literals written by hand where a JSON library would cost more than the text
// (EMF documents, every line of the JSON log). Shared so that the two agree on what is escaped
// and on what becomes of bytes that are not UTF-8.
//
// Thread-safety: pure functions.
#ifndef NVML_EXPORTER_UTIL_JSON_STRING_H_
#define NVML_EXPORTER_UTIL_JSON_STRING_H_

#include <string>
#include <string_view>

namespace nvmlx::util {

// The body of a JSON string (no quotes) for `s`: escapes " \ and control characters (\n, \r,
// \t, else \u00XX); a byte that does not start a valid UTF-8 sequence becomes U+FFFD, so the
// document stays valid JSON whatever the input (a pod name, a log message).
void AppendJsonEscaped(std::string_view s, std::string* out);

// The same in double quotes.
void AppendJsonQuoted(std::string_view s, std::string* out);

}  // namespace nvmlx::util

#endif  // NVML_EXPORTER_UTIL_JSON_STRING_H_
