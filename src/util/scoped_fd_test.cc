#include "util/scoped_fd.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace nvmlx::util {
namespace {

// Whether `fd` is an open descriptor of this process.
bool IsOpen(int fd) { return ::fcntl(fd, F_GETFD) != -1 || errno != EBADF; }

// A pipe's two ends; the read end is owned here, the write end is handed to the test.
struct Pipe {
  Pipe() {
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    read_end = ScopedFd(fds[0]);
    write_end = fds[1];
  }
  ScopedFd read_end;
  int write_end = -1;
};

TEST(ScopedFdTest, ClosesOnScopeExit) {
  Pipe p;
  {
    ScopedFd fd(p.write_end);
    EXPECT_TRUE(fd.valid());
    EXPECT_EQ(fd.get(), p.write_end);
    EXPECT_TRUE(IsOpen(p.write_end));
  }
  EXPECT_FALSE(IsOpen(p.write_end));
  char c;
  EXPECT_EQ(::read(p.read_end.get(), &c, 1), 0);  // the only writer is gone: end of file
}

TEST(ScopedFdTest, HoldsNothingForANegativeDescriptor) {
  ScopedFd fd(-1);
  EXPECT_FALSE(fd.valid());
  EXPECT_EQ(fd.Close(), 0);
  ScopedFd empty;
  EXPECT_FALSE(empty.valid());
}

TEST(ScopedFdTest, MoveHandsTheDescriptorOver) {
  Pipe p;
  ScopedFd a(p.write_end);
  ScopedFd b(std::move(a));
  EXPECT_FALSE(a.valid());  // NOLINT(bugprone-use-after-move): checking the moved-from state
  EXPECT_EQ(b.get(), p.write_end);
  ScopedFd c;
  c = std::move(b);
  EXPECT_EQ(c.get(), p.write_end);
  EXPECT_TRUE(IsOpen(p.write_end));
  c.reset();
  EXPECT_FALSE(IsOpen(p.write_end));
}

TEST(ScopedFdTest, ReleaseKeepsTheDescriptorOpen) {
  Pipe p;
  int fd = -1;
  {
    ScopedFd owned(p.write_end);
    fd = owned.release();
    EXPECT_FALSE(owned.valid());
  }
  EXPECT_TRUE(IsOpen(fd));
  EXPECT_EQ(::close(fd), 0);
}

TEST(ScopedFdTest, CloseReportsAndForgets) {
  Pipe p;
  ScopedFd fd(p.write_end);
  EXPECT_EQ(fd.Close(), 0);
  EXPECT_FALSE(fd.valid());
  EXPECT_FALSE(IsOpen(p.write_end));
  EXPECT_EQ(fd.Close(), 0);  // nothing left to close
}

}  // namespace
}  // namespace nvmlx::util
