// Reading one of our configuration files whole (the collectors CSV, --config-file's YAML, the web
// config, the EMF rules file): the one door through which they are read, so that every one is
// bounded the same way. The stages that parse such text (render/emf_rules.h, ...) do no I/O
// themselves and take the text and its source name.
//
// Thread-safety: a free function with no shared state.
#ifndef NVML_EXPORTER_CONFIG_TEXT_FILE_H_
#define NVML_EXPORTER_CONFIG_TEXT_FILE_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "util/status.h"

namespace nvmlx::config {

// The most a configuration file may hold. The largest we ship (etc/default-counters.csv) is
// 9 KB and a full dcgm-exporter YAML configuration a few KB; a file a hundred times that is not a
// configuration (a log, a data file given by mistake) or is one that would cost seconds to parse
// and print (a 50 MB YAML value took 9 s to parse and was printed whole in the error). Such a
// file is refused from its size, before it is read.
inline constexpr size_t kMaxConfigFileBytes = size_t{1} << 20;

// The contents of `path`, byte for byte, read through one non-blocking open of a regular file.
// Errors, each starting "<path>: ":
//  - NOT_FOUND "cannot open the <what>" (e.g. what = "EMF rules file") when it does not exist;
//    NO_PERMISSION or INVALID_ARGUMENT with the system's reason when it cannot be opened;
//  - INVALID_ARGUMENT when it is a directory, or no regular file (a FIFO would otherwise block
//    the open or the read until a writer comes, a device could be endless);
//  - INVALID_ARGUMENT "the <what> is larger than the 1 MiB limit" when it holds more than
//    `max_bytes` (checked on its size first, and again while reading, as it may grow).
Result<std::string> ReadTextFile(const std::string& path, std::string_view what,
                                 size_t max_bytes = kMaxConfigFileBytes);

// A size as messages name a cap: "1 MiB", "512 KiB", "100 bytes".
std::string SizeText(size_t bytes);

}  // namespace nvmlx::config

#endif  // NVML_EXPORTER_CONFIG_TEXT_FILE_H_
