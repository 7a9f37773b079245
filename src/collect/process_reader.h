// ProcessReader: one GPU's compute processes and their utilization since the previous read
// (DeviceSnapshot::processes), for process attribution.
//
// Utilization uses NVML's lastSeenTimeStamp protocol (docs/nvml.md §4): each read passes the
// largest sample timestamp the previous one returned, so a value covers exactly the time since
// then, and NOT_FOUND ("nothing new") reads as idle. The constructor takes a priming read whose
// samples are discarded: with lastSeen 0 NVML would average its whole buffer, which stays stale
// long after a process went idle. A process with several samples in the window gets their mean.
//
// On a MIG device handle the reader lists processes and their memory only (kMemoryOnly): NVML has
// no per-process utilization under MIG (NOT_SUPPORTED), and dcgm-exporter reads only per-instance
// process memory there, so the call is not made and nothing is logged for it.
//
// Thread-safety: not thread-safe; used by the collector's fast loop only.
#ifndef NVML_EXPORTER_COLLECT_PROCESS_READER_H_
#define NVML_EXPORTER_COLLECT_PROCESS_READER_H_

#include <cstdint>
#include <vector>

#include "model/snapshot.h"
#include "nvml/nvml.h"
#include "util/status.h"

namespace nvmlx::collect {

class ProcessReader {
 public:
  enum class Mode { kMemoryAndUtilization, kMemoryOnly };
  ProcessReader(const nvml::Library& lib, nvml::Device device,
                Mode mode = Mode::kMemoryAndUtilization);

  // Fills *out (ascending pid). A failed process list leaves *out empty and is returned; a failed
  // utilization read (e.g. NOT_SUPPORTED under MIG) keeps the list with has_utilization false and
  // is returned too, so the caller can log it once.
  Status Read(std::vector<model::ProcessSample>* out);

 private:
  const nvml::Library& lib_;
  nvml::Device device_;
  Mode mode_;
  uint64_t last_seen_us_ = 0;
};

}  // namespace nvmlx::collect

#endif  // NVML_EXPORTER_COLLECT_PROCESS_READER_H_
