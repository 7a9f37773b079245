#include "util/resident_pages.h"

#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace nvmlx::util {
namespace {

// One line of /proc/self/smaps' headers and its Anonymous: count.
struct Mapping {
  uintptr_t begin = 0;
  uintptr_t end = 0;
  bool file = false;  // backed by a path (not [heap], [vdso], an anonymous region)
  long anonymous_kib = 0;
};

std::vector<Mapping> ReadMappings() {
  std::vector<Mapping> out;
  std::ifstream in("/proc/self/smaps");
  std::string line;
  while (std::getline(in, line)) {
    // A mapping's header ("begin-end perms offset dev inode [path]"): its range before the first
    // space and the ':' of its device after it; an attribute line ("Rss: 4 kB") has no '-' there.
    const size_t space = line.find(' ');
    unsigned long begin = 0;
    unsigned long end = 0;
    if (space != std::string::npos && line.find('-') < space && line.find(':') > space &&
        std::sscanf(line.c_str(), "%lx-%lx", &begin, &end) == 2) {
      const size_t slash = line.find('/');
      out.push_back({begin, end, slash != std::string::npos, 0});
      continue;
    }
    long kib = 0;
    if (!out.empty() && std::sscanf(line.c_str(), "Anonymous: %ld kB", &kib) == 1) {
      out.back().anonymous_kib += kib;
    }
  }
  return out;
}

// Whether every mapping over [begin, end) is a file's, with no anonymous (written) page.
bool NeverWritten(const std::vector<Mapping>& mappings, uintptr_t begin, uintptr_t end) {
  bool covered = false;
  for (const Mapping& m : mappings) {
    if (m.end <= begin || m.begin >= end) continue;
    if (!m.file || m.anonymous_kib != 0) return false;
    covered = true;
  }
  return covered;
}

bool HasTextRelocations(const dl_phdr_info* info) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_DYNAMIC) continue;
    const auto* dyn = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + ph.p_vaddr);
    for (; dyn->d_tag != DT_NULL; ++dyn) {
      if (dyn->d_tag == DT_TEXTREL) return true;
      if (dyn->d_tag == DT_FLAGS && (dyn->d_un.d_val & DF_TEXTREL) != 0) return true;
    }
  }
  return false;
}

struct Walk {
  const std::vector<Mapping>* mappings;
  uintptr_t page;
  ReleasedPages result;
};

int ReleaseObject(dl_phdr_info* info, size_t /*size*/, void* data) {
  Walk& walk = *static_cast<Walk*>(data);
  ++walk.result.objects;
  const bool textrel = HasTextRelocations(info);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_W) != 0 || ph.p_memsz == 0) continue;
    const uintptr_t begin = (info->dlpi_addr + ph.p_vaddr) & ~(walk.page - 1);
    const uintptr_t end =
        (info->dlpi_addr + ph.p_vaddr + ph.p_memsz + walk.page - 1) & ~(walk.page - 1);
    if (textrel || !NeverWritten(*walk.mappings, begin, end) ||
        madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED) != 0) {
      ++walk.result.skipped;
      continue;
    }
    ++walk.result.segments;
    walk.result.bytes += end - begin;
  }
  return 0;
}

}  // namespace

ReleasedPages ReleaseReadOnlyImagePages() {
  const std::vector<Mapping> mappings = ReadMappings();
  const long page = sysconf(_SC_PAGESIZE);
  Walk walk{&mappings, static_cast<uintptr_t>(page > 0 ? page : 4096), {}};
  dl_iterate_phdr(&ReleaseObject, &walk);
  return walk.result;
}

}  // namespace nvmlx::util
