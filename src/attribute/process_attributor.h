// ProcessAttributor: maps the host PIDs of the GPU processes in the latest snapshot to their pod
// uid and container id, from <proc root>/<pid>/cgroup (cgroup.h), and publishes the result as an
// immutable ProcessAttribution.
//
// Flow: after each collection the app hands the snapshot's PIDs to Observe() (cheap: a copy under
// a mutex and a wake-up); the attributor's own thread reads /proc and publishes; the next
// collection attaches Latest() to its snapshot. New processes are therefore attributed one
// interval after they first appear. No /proc read ever happens on the scrape path.
//
// The proc root is --host-proc-root (default /proc): a daemon in a pod without hostPID reads the
// host's /proc mounted at e.g. /host/proc, since NVML reports host PIDs.
//
// Cache: per PID, the process start time (field 22 of <pid>/stat) and its owner; a recycled PID
// has another start time and is read again, so it is never given the previous process's pod.
// PIDs that left the snapshot are dropped from the cache.
//
// Failures: a PID whose /proc entry is gone is a process that exited between NVML's list and our
// read: skipped, not an error. A PID that NVML listed in two consecutive snapshots but /proc never
// shows (the proc root is not the host's PID namespace), or a read that fails otherwise (EACCES,
// EIO, a missing proc root) counts as an error of source "cgroup" (one per pass that had any),
// logged once per streak; the PIDs already attributed keep their owners.
//
// The thread is a util::PeriodicWorker with no period: Observe() asks it for a pass (RunSoon), and
// several Observe calls during one pass make one more pass.
//
// Thread-safety: Observe, Latest and ResolveNow may be called from any thread; Start/Stop from
// one controlling thread.
#ifndef NVML_EXPORTER_ATTRIBUTE_PROCESS_ATTRIBUTOR_H_
#define NVML_EXPORTER_ATTRIBUTE_PROCESS_ATTRIBUTOR_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "attribute/error_counters.h"
#include "model/snapshot.h"
#include "util/latest.h"
#include "util/mutex.h"
#include "util/periodic_worker.h"
#include "util/status.h"
#include "util/thread_annotations.h"

namespace nvmlx::attribute {

struct ProcessAttributorOptions {
  std::string proc_root = "/proc";
  model::SourceErrors* errors = nullptr;  // may be null (tests); must outlive the attributor
};

// What one /proc lookup found: the process exited (gone), or its start time and owner (nullopt
// owner: not in a pod). When the start time equals `known_start` (the cached process is still the
// same one) the cgroup file is not read and cgroup_read is false. Errors: a non-OK Status.
struct ProcLookup {
  bool gone = false;
  uint64_t start_time = 0;
  bool cgroup_read = false;
  std::optional<model::ProcessOwner> owner;
};
Result<ProcLookup> LookUpProcess(const std::string& proc_root, unsigned pid,
                                 std::optional<uint64_t> known_start = std::nullopt);

class ProcessAttributor {
 public:
  explicit ProcessAttributor(ProcessAttributorOptions options);
  ~ProcessAttributor();
  ProcessAttributor(const ProcessAttributor&) = delete;
  ProcessAttributor& operator=(const ProcessAttributor&) = delete;

  // The PIDs of every device's processes in `snapshot`; wakes the thread when they changed.
  void Observe(const model::Snapshot& snapshot) NVMLX_EXCLUDES(mu_);
  // The latest attribution; null until the first pass.
  std::shared_ptr<const model::ProcessAttribution> Latest() const;
  // One pass over the observed PIDs on the calling thread (--once, tests).
  void ResolveNow() NVMLX_EXCLUDES(mu_, resolve_mu_);

  void Start();
  void Stop();

 private:
  struct Cached {
    uint64_t start_time = 0;
    std::optional<model::ProcessOwner> owner;
  };
  const ProcessAttributorOptions options_;

  util::Mutex mu_;
  std::vector<unsigned> pids_ NVMLX_GUARDED_BY(mu_);  // ascending, from the latest snapshot

  // Only the resolving thread (the worker, or ResolveNow's caller) touches these; resolve_mu_
  // keeps ResolveNow and the thread apart.
  util::Mutex resolve_mu_;
  std::unordered_map<unsigned, Cached> cache_ NVMLX_GUARDED_BY(resolve_mu_);
  std::set<unsigned> missing_ NVMLX_GUARDED_BY(resolve_mu_);  // gone in the previous pass
  FailureStreak streak_ NVMLX_GUARDED_BY(resolve_mu_);

  util::Latest<model::ProcessAttribution> latest_;
  util::PeriodicWorker worker_;  // last: stopped before the members above go
};

}  // namespace nvmlx::attribute

#endif  // NVML_EXPORTER_ATTRIBUTE_PROCESS_ATTRIBUTOR_H_
