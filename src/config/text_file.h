// Reading one of our configuration files whole (the collectors CSV, --config-file's YAML, the web
// config, the EMF rules file): util/file.h's bounded read with the configuration files' cap, so
// that every one is bounded the same way. The stages that parse such text (render/emf_rules.h, ...)
// do no I/O themselves and take the text and its source name.
//
// Thread-safety: a free function with no shared state.
#ifndef NVML_EXPORTER_CONFIG_TEXT_FILE_H_
#define NVML_EXPORTER_CONFIG_TEXT_FILE_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "util/file.h"
#include "util/status.h"

namespace nvmlx::config {

// The most a configuration file may hold. The largest we ship (etc/default-counters.csv) is
// 9 KB and a full dcgm-exporter YAML configuration a few KB; a file a hundred times that is not a
// configuration (a log, a data file given by mistake) or is one that would cost seconds to parse
// and print (a 50 MB YAML value took 9 s to parse and was printed whole in the error). Such a
// file is refused from its size, before it is read.
inline constexpr size_t kMaxConfigFileBytes = size_t{1} << 20;

// The contents of a configuration file: util::ReadBoundedFile (util/file.h) with the cap above.
inline Result<std::string> ReadTextFile(const std::string& path, std::string_view what,
                                        size_t max_bytes = kMaxConfigFileBytes) {
  return util::ReadBoundedFile(path, what, max_bytes);
}

using util::SizeText;

}  // namespace nvmlx::config

#endif  // NVML_EXPORTER_CONFIG_TEXT_FILE_H_
