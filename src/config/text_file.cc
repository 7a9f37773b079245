#include "config/text_file.h"

#include <fstream>
#include <sstream>

namespace nvmlx::config {

Result<std::string> ReadTextFile(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot open the " + std::string(what));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace nvmlx::config
