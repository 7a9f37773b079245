#include "config/text_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace nvmlx::config {

Result<std::string> ReadTextFile(const std::string& path, std::string_view what) {
  // A FIFO (or a device) given by mistake would block the open or the read forever, silently:
  // look first without blocking, and read regular files only.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return NotFound(path + ": cannot open the " + std::string(what));
  struct stat sb {};
  const bool regular = ::fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode);
  ::close(fd);
  if (!regular) {
    return InvalidArgument(path + ": the " + std::string(what) +
                           " is not a regular file (a directory, FIFO, socket or device)");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot open the " + std::string(what));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace nvmlx::config
