// EnergyStore: energy per pod's state file (--state-dir DIR: DIR/pod-energy.json), read once at
// start and written after every collection by a thread of its own, so that the per-pod counters
// (render/pod_energy.h) go on across a restart of the daemon, a SIGKILL included, and never go
// back (issue 36).
//
// Never served before saved. After a SIGKILL the daemon starts from what the file holds, so any
// value a scrape saw must already be in the file, or the restored counter would be lower than
// the one Prometheus scraped (a reset to it: increase() would add the whole restored value). The
// publish step therefore hands each collection's ledger to Offer() and shows on the page what
// Servable() returns: the newest ledger whose write has completed (temporary file, then
// rename()). The page lags the live ledger by the time one write takes, normally less than a
// collection; the energy is not lost, only shown one collection later. The counters never go
// back, and their sum keeps following the GPU's energy counter: the restored file carries its
// collection's GPU readings (readings_mj), from which the first collection after the restart
// credits what was used meanwhile (PodEnergyLedger::kRestoreGap).
//
// Durability: rename() completes in the page cache, which outlives the process: enough for a
// SIGKILL, an OOM kill or a crash of the daemon, so there is no fsync (it would cost a disk flush
// a collection on every node). What the page cache loses, a kernel crash or a power cut, also
// reloads the driver, whose energy counter then restarts: the restored series go on from the
// last write that reached the disk, and the first window of the new driver counts nothing.
//
// A write that fails (a full or read-only disk, a directory in the file's place) is logged once
// per streak; while writes fail, Servable() returns the newest ledger offered: counters that
// stop growing would be worse than the lost guarantee, which cannot hold without a writable
// file. Servable() never returns a ledger older than one it returned before.
//
// Thread-safety: Offer, Servable and Stop are thread-safe (one mutex, never held across the file
// system: the collection thread never waits for a write). Load is a static function.
#ifndef NVML_EXPORTER_APP_ENERGY_STORE_H_
#define NVML_EXPORTER_APP_ENERGY_STORE_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "render/pod_energy.h"
#include "util/mutex.h"
#include "util/status.h"
#include "util/thread_annotations.h"

namespace nvmlx::app {

class EnergyStore {
 public:
  using Ledger = render::PodEnergyLedger;
  // Writes `text` to `path` so that a reader finds the old or the new text whole (tests replace
  // it to make the file system slow or failing).
  using WriteFn = std::function<Status(const std::string& path, const std::string& text)>;

  // The largest state file read. A ledger series takes about 250 bytes; 8 GPUs with 100 pod
  // containers each, kept an hour after their pod goes, are well under 1 MiB, so 16 MiB is
  // headroom, while it bounds what a start reads and parses (about 0.2 s) whatever is there.
  static constexpr size_t kMaxFileBytes = 16u << 20;

  // Restores `ledger` from the state file at start, read through util::ReadBoundedFile: regular
  // files only (a link to one is followed: a hostPath may be one), opened without blocking and
  // checked on the opened descriptor, at most kMaxFileBytes. Nothing there: an info line, the
  // counters start from 0. Anything else that cannot be read or restored (a FIFO, a device, a
  // directory, a larger file, text PodEnergyLedger::Restore refuses): renamed to `<path>.bad` (kept
  // to be looked at, not overwritten by the next write), ONE error line naming the file and what
  // was wrong, the counters start from 0. Series of GPUs this daemon does not have are left out
  // with one warning. True when restored.
  static bool Load(const std::string& path, const Ledger::KnownGpus& gpus,
                   std::chrono::system_clock::time_point now, Ledger* ledger);
  // The default WriteFn: `<path>.tmp` (whatever was there removed first, created anew, so that
  // a FIFO or a link left there is never written through), then rename() over `path`.
  static Status WriteAtomically(const std::string& path, const std::string& text);

  // Starts the writer thread. `restored`: the ledger Load left (empty or restored); it is on
  // disk already (or nothing is), so Servable() returns it until a write completes.
  EnergyStore(std::string path, std::shared_ptr<const Ledger> restored,
              WriteFn write = WriteAtomically);
  ~EnergyStore();  // Stop()
  EnergyStore(const EnergyStore&) = delete;
  EnergyStore& operator=(const EnergyStore&) = delete;

  // The ledger after a collection at `at`, to be written: returns at once. Only the newest
  // offer is kept; one offered while a write runs is written next.
  void Offer(std::shared_ptr<const Ledger> ledger, std::chrono::system_clock::time_point at)
      NVMLX_EXCLUDES(mu_);
  // What the page may show (see the class comment); never null.
  std::shared_ptr<const Ledger> Servable() NVMLX_EXCLUDES(mu_);
  // Writes what was offered and not yet written, then ends the thread. Idempotent; an Offer
  // afterwards is not written.
  void Stop() NVMLX_EXCLUDES(mu_);

  // Tests: writes completed (failed ones included), and a wait for `n` of them.
  uint64_t writes() const NVMLX_EXCLUDES(mu_);
  bool AwaitWrites(uint64_t n, std::chrono::milliseconds timeout) NVMLX_EXCLUDES(mu_);

 private:
  struct Version {
    std::shared_ptr<const Ledger> ledger;
    uint64_t seq = 0;  // offers are numbered from 1; 0 is the restored ledger
    std::chrono::system_clock::time_point at;
  };
  void Run() NVMLX_EXCLUDES(mu_);  // the writer thread

  const std::string path_;
  const WriteFn write_;
  mutable util::Mutex mu_;
  util::CondVar cv_;  // an offer, the stop, a write done
  uint64_t offered_ NVMLX_GUARDED_BY(mu_) = 0;
  Version pending_ NVMLX_GUARDED_BY(mu_);       // ledger null: nothing to write
  Version latest_ NVMLX_GUARDED_BY(mu_);        // the newest offered
  Version durable_ NVMLX_GUARDED_BY(mu_);       // the newest written
  Version served_ NVMLX_GUARDED_BY(mu_);        // the newest Servable() returned
  bool failing_ NVMLX_GUARDED_BY(mu_) = false;  // the last write failed
  bool stop_ NVMLX_GUARDED_BY(mu_) = false;
  uint64_t writes_ NVMLX_GUARDED_BY(mu_) = 0;
  bool too_big_logged_ = false;  // the writer thread's
  std::thread thread_;
};

}  // namespace nvmlx::app

#endif  // NVML_EXPORTER_APP_ENERGY_STORE_H_
