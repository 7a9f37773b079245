// ReleaseReadOnlyImagePages: unmaps from this process the resident pages of the read-only parts
// of every loaded ELF object (the daemon, its libraries, NVML, CUPTI: each PT_LOAD segment
// without PF_W), so that what start-up alone touched stops counting in its RSS.
//
// Why: a long-lived daemon touches most of its code once while it starts (flag and YAML
// parsing, the field catalog, NVML's and CUPTI's set-up) and only a fraction of it afterwards,
// but a file page once mapped stays in the process's RSS until the kernel reclaims it under
// pressure, and the kernel maps file pages 64 KiB at a time around each fault. Dropping the
// mappings after start-up leaves the pages in the page cache (nothing is read from disk again)
// and lets the steady state map back only what it runs; the RSS then shows the working set
// (docs/benchmarks.md "Performance round": the RSS rows).
//
// Safety: MADV_DONTNEED on a private file mapping discards only the process's own copies of its
// pages, and the next access maps the file's page again. It is applied only to segments that
// were never written: not to writable segments (data, .bss, and the RELRO region, which the
// loader relocates inside the writable segment before protecting it), not to objects with text
// relocations (DT_TEXTREL), and not to any segment whose range holds an anonymous page in
// /proc/self/smaps (a copy-on-write page: code patched at run time). It runs inside
// dl_iterate_phdr, which holds the loader's lock, so no object it visits is unloaded and its
// range reused meanwhile. Device mappings (/dev/nvidia*) are not ELF segments and are never
// touched.
//
// Thread-safety: callable from any thread at any time; other threads keep running code that is
// mapped back on its next fault.
#ifndef NVML_EXPORTER_UTIL_RESIDENT_PAGES_H_
#define NVML_EXPORTER_UTIL_RESIDENT_PAGES_H_

#include <cstddef>

namespace nvmlx::util {

struct ReleasedPages {
  size_t objects = 0;   // ELF objects visited
  size_t segments = 0;  // read-only segments released
  size_t skipped = 0;   // read-only segments left as they were (written, text relocations)
  size_t bytes = 0;     // the released segments' size (mapped or not: RSS falls by at most this)
};

ReleasedPages ReleaseReadOnlyImagePages();

}  // namespace nvmlx::util

#endif  // NVML_EXPORTER_UTIL_RESIDENT_PAGES_H_
