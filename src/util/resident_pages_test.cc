#include "util/resident_pages.h"

#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace nvmlx::util {
namespace {

// Written at run time: its page is a copy-on-write copy of the binary's .data, which a release
// must never discard (the file holds the initial 1).
int g_written = 1;
// Relocated by the loader (a pointer in .data.rel.ro of a PIE, protected read-only after
// relocation): discarding its page would bring back the unrelocated file contents.
const char* const kRelocated[] = {"relocated", "pointers"};

// Rss of this test binary's own mappings, in KiB.
long ExeRssKib() {
  char exe[PATH_MAX] = {};
  if (readlink("/proc/self/exe", exe, sizeof(exe) - 1) <= 0) return -1;
  std::ifstream in("/proc/self/smaps");
  std::string line;
  bool ours = false;
  long total = 0;
  while (std::getline(in, line)) {
    const size_t space = line.find(' ');
    // A mapping's header ("begin-end perms offset dev inode path"): its range before the first
    // space, and the ':' of its device after it; an attribute line ("Rss: 4 kB") has no '-'.
    if (space != std::string::npos && line.find('-') < space && line.find(':') > space) {
      const size_t slash = line.find('/');
      ours = slash != std::string::npos && line.compare(slash, std::string::npos, exe) == 0;
      continue;
    }
    long kib = 0;
    if (ours && std::sscanf(line.c_str(), "Rss: %ld kB", &kib) == 1) total += kib;
  }
  return total;
}

TEST(ResidentPages, ReleasesTheCodeItRanAndTheProcessGoesOn) {
  const long before = ExeRssKib();
  ASSERT_GT(before, 0);
  const ReleasedPages r = ReleaseReadOnlyImagePages();
  const long after = ExeRssKib();
  EXPECT_GT(r.objects, 1u);  // this binary and at least libc
  EXPECT_GT(r.segments, 0u);
  EXPECT_GT(r.bytes, 0u);
  EXPECT_LT(after, before) << "the binary's read-only pages stayed mapped";
  // Code and read-only data come back on their next use.
  EXPECT_EQ(std::to_string(12345), "12345");
  EXPECT_EQ(std::strlen("steady state"), 12u);
}

TEST(ResidentPages, NeverDiscardsWrittenOrRelocatedPages) {
  g_written = 42;
  const ReleasedPages r = ReleaseReadOnlyImagePages();
  EXPECT_GT(r.segments, 0u);
  EXPECT_EQ(g_written, 42);
  EXPECT_STREQ(kRelocated[0], "relocated");
  EXPECT_STREQ(kRelocated[1], "pointers");
  // Twice in a row is as safe as once.
  (void)ReleaseReadOnlyImagePages();
  EXPECT_EQ(g_written, 42);
  EXPECT_STREQ(kRelocated[1], "pointers");
}

}  // namespace
}  // namespace nvmlx::util
