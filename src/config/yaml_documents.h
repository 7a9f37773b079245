// How many YAML documents a text holds, counted without building them, at most up to a limit.
// yaml-cpp 0.7's YAML::LoadAll (Debian 12) never returns, growing memory, on a text whose first
// document is a flow node followed by a comma at the top level (`"a",b`, `[a],b`, `!t,b`: found
// by the yaml_config fuzzer): its parser then yields empty documents forever. Counting through
// YAML::Parser with a bound ends there, and the caller loads the one document with YAML::Load.
//
// Pure function: thread-safe.
#ifndef NVML_EXPORTER_CONFIG_YAML_DOCUMENTS_H_
#define NVML_EXPORTER_CONFIG_YAML_DOCUMENTS_H_

#include <string_view>

namespace nvmlx::config {

struct YamlDocuments {
  int count = 0;        // documents seen, at most the limit given
  int second_line = 0;  // 1-based line where the second one starts (0: none)
};

// Counts the documents of `text`, stopping at `limit`. yaml-cpp's parse errors are thrown
// (YAML::Exception), as YAML::Load throws them.
YamlDocuments CountYamlDocuments(std::string_view text, int limit);

}  // namespace nvmlx::config

#endif  // NVML_EXPORTER_CONFIG_YAML_DOCUMENTS_H_
