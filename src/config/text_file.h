// Reading a small configuration file (the EMF rules file) whole, so that the stages that parse
// such text (render/emf_rules.h) do no I/O themselves and take the text and its source name.
//
// Thread-safety: a free function with no shared state.
#ifndef NVML_EXPORTER_CONFIG_TEXT_FILE_H_
#define NVML_EXPORTER_CONFIG_TEXT_FILE_H_

#include <string>
#include <string_view>

#include "util/status.h"

namespace nvmlx::config {

// The contents of `path`, byte for byte. Errors: NOT_FOUND "<path>: cannot open the <what>"
// (e.g. what = "EMF rules file"); INVALID_ARGUMENT when it is no regular file (a FIFO would
// otherwise block the read until a writer comes).
Result<std::string> ReadTextFile(const std::string& path, std::string_view what);

}  // namespace nvmlx::config

#endif  // NVML_EXPORTER_CONFIG_TEXT_FILE_H_
