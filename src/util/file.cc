#include "util/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/escape.h"
#include "util/scoped_fd.h"

namespace nvmlx::util {

std::string SizeText(size_t bytes) {
  if (bytes >= (size_t{1} << 20) && bytes % (size_t{1} << 20) == 0) {
    return std::to_string(bytes >> 20) + " MiB";
  }
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

Result<std::string> ReadBoundedFile(const std::string& path, std::string_view what,
                                    size_t max_bytes) {
  const std::string shown = MessagePrefix(path, kMaxQuotedPathBytes);
  const std::string the = shown + ": the " + std::string(what);
  // A FIFO (or a device) given by mistake would block the open or the read forever, silently:
  // open without blocking, and read regular files only, from this very descriptor (a second
  // open could meet another file).
  const ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) {
    const int err = errno;
    const std::string msg = shown + ": cannot open the " + std::string(what);
    if (err == ENOENT) return NotFound(msg);
    if (err == EACCES || err == EPERM) {
      return Status(StatusCode::kNoPermission, msg + ": " + std::strerror(err));
    }
    return InvalidArgument(msg + ": " + std::strerror(err));
  }
  struct stat sb {};
  if (::fstat(fd.get(), &sb) != 0) return InvalidArgument(the + " cannot be examined");
  if (S_ISDIR(sb.st_mode)) return InvalidArgument(the + " is a directory");
  if (!S_ISREG(sb.st_mode)) {
    return InvalidArgument(the + " is not a regular file (a FIFO, socket or device)");
  }
  auto too_large = [&](size_t seen) {
    return InvalidArgument(the + " is larger than the " + SizeText(max_bytes) + " limit (" +
                           std::to_string(seen) + " bytes)");
  };
  if (static_cast<uint64_t>(sb.st_size) > max_bytes) {
    return too_large(static_cast<size_t>(sb.st_size));
  }
  std::string data;
  data.reserve(static_cast<size_t>(sb.st_size));
  char buf[16384];
  while (true) {
    const ssize_t n = ::read(fd.get(), buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return InvalidArgument(the + " cannot be read: " + std::strerror(errno));
    }
    if (n == 0) break;
    data.append(buf, static_cast<size_t>(n));
    if (data.size() > max_bytes) return too_large(data.size());  // grew since fstat
  }
  return data;
}

}  // namespace nvmlx::util
