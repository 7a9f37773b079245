// ScopedFd: owns one POSIX file descriptor and closes it when it goes out of scope, so that every
// early return of code that opens a file (an error after open, a failed read) closes it. One
// shared type instead of a hand-written closer per file: util/file.cc and app/energy_store.cc
// each had their own.
//
// A writer that must know whether its data reached the file calls Close() and checks the result:
// close() can report a write error (NFS, a full disk) that write() did not, and the destructor
// has nowhere to report it.
//
// Thread-safety: none of its own, like the descriptor it holds; one owner uses it at a time.
// Moving hands the descriptor over; copying is not possible (two owners would close it twice).
#ifndef NVML_EXPORTER_UTIL_SCOPED_FD_H_
#define NVML_EXPORTER_UTIL_SCOPED_FD_H_

#include <unistd.h>

namespace nvmlx::util {

class ScopedFd {
 public:
  ScopedFd() = default;
  // Takes `fd`, which may be negative (a failed open): then it holds nothing.
  explicit ScopedFd(int fd) noexcept : fd_(fd) {}
  ~ScopedFd() { reset(); }
  ScopedFd(ScopedFd&& other) noexcept : fd_(other.release()) {}
  ScopedFd& operator=(ScopedFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;

  // The descriptor, or a negative value when it holds none.
  int get() const noexcept { return fd_; }
  bool valid() const noexcept { return fd_ >= 0; }

  // Gives the descriptor up without closing it; holds none afterwards.
  int release() noexcept {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

  // Closes the descriptor held (its error ignored) and takes `fd` instead.
  void reset(int fd = -1) noexcept {
    if (fd_ >= 0) (void)::close(fd_);
    fd_ = fd;
  }

  // Closes the descriptor now and returns close()'s result (0, or -1 with errno set), for a
  // writer that must see a late write error. Holds none afterwards, even on failure: POSIX
  // leaves a descriptor whose close failed unusable, and Linux has already freed it, so a second
  // close could close another file's descriptor. 0 when it held none.
  int Close() noexcept {
    const int fd = release();
    return fd >= 0 ? ::close(fd) : 0;
  }

 private:
  int fd_ = -1;
};

}  // namespace nvmlx::util

#endif  // NVML_EXPORTER_UTIL_SCOPED_FD_H_
