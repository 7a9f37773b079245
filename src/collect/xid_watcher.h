// XidWatcher: one background thread that receives Xid critical-error events from NVML and keeps,
// per GPU, the last Xid, the recent ones and how often each Xid came since the watcher started,
// for DCGM_FI_DEV_XID_ERRORS, DCGM_EXP_XID_ERRORS_COUNT and DCGM_EXP_XID_ERRORS_TOTAL.
//
// Xids are events, not values that can be polled: NVML delivers each one once through
// nvmlEventSetWait_v2 on an event set the devices were registered on. The thread waits with a
// short timeout (kWaitTimeout) so that Stop() returns promptly. A GPU whose registration fails
// (e.g. NOT_SUPPORTED on some vGPU setups) is warned about once and reports Watched() == false:
// its XID series are omitted rather than shown as a misleading 0.
//
// The last Xid is 0 until one arrives (as dcgm-exporter shows) and then sticks; the counts cover
// the last `window` (older Xids are dropped when read or when new ones arrive), measured on an
// injectable util::Clock, so that a test steps the window instead of sleeping through it. The
// totals only grow: every Xid event but value 0 (upstream's "no error") adds one to its Xid's
// total for the life of the watcher, which starts with the exporter (the collector creates it at
// start-up; a reload that first needs it restarts the process), so they are counts "since the
// exporter started", as dcgm-exporter 4.8.3's DCGM_EXP_XID_ERRORS_TOTAL.
//
// Xid 79 ("GPU has fallen off the bus") is remembered separately and for good (FellOffBus): the
// collector then treats that GPU exactly as one answering GPU_IS_LOST. The Xid often arrives
// before (or instead of) the first failing call, and a GPU that left the bus does not come back
// without a reset, which needs a new NVML session anyway.
//
// Thread-safety: Create/Start/Stop from one controlling thread; Read() from any thread
// concurrently with the watcher thread (state guarded by mu_).
#ifndef NVML_EXPORTER_COLLECT_XID_WATCHER_H_
#define NVML_EXPORTER_COLLECT_XID_WATCHER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include "model/snapshot.h"
#include "nvml/nvml.h"
#include "util/clock.h"
#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace nvmlx::collect {

class XidWatcher {
 public:
  static constexpr std::chrono::milliseconds kWaitTimeout{500};
  static constexpr int64_t kFallenOffTheBusXid = 79;

  struct Gpu {
    nvml::Device handle = nullptr;
    unsigned index = 0;  // NVML index, for log lines
  };

  // Creates the event set and registers every GPU (position i of `gpus` is device i of Read).
  // Never fails as a whole: without an event set no GPU is watched (warned once).
  static std::unique_ptr<XidWatcher> Create(const nvml::Library& lib, std::vector<Gpu> gpus,
                                            std::chrono::milliseconds window,
                                            util::Clock* clock = util::Clock::Real());
  ~XidWatcher();
  XidWatcher(const XidWatcher&) = delete;
  XidWatcher& operator=(const XidWatcher&) = delete;

  void Start() NVMLX_EXCLUDES(mu_);
  void Stop() NVMLX_EXCLUDES(mu_);
  // As Stop, waiting at most until `deadline`: false when the thread is still inside
  // nvmlEventSetWait_v2 (a stuck driver); Stop() or the destructor then waits for it.
  bool StopUntil(std::chrono::steady_clock::time_point deadline) NVMLX_EXCLUDES(mu_);
  // The NVML function the watcher thread is in right now (null between calls).
  const char* StuckCall() const;

  bool Watched(size_t device) const { return device < watched_.size() && watched_[device]; }
  std::chrono::milliseconds window() const { return window_; }
  // The last Xid (0 before any) and the counts per Xid within the window, ascending xid.
  // False (outputs untouched) when the device is not watched.
  bool Read(size_t device, int64_t* last, std::vector<model::XidCount>* counts) const
      NVMLX_EXCLUDES(mu_);
  // Every Xid value (but 0) received on the device since the watcher started, with how often,
  // ascending xid; never decreasing. False (output untouched) when the device is not watched.
  bool ReadTotals(size_t device, std::vector<model::XidCount>* totals) const NVMLX_EXCLUDES(mu_);
  // True once Xid 79 was seen on the device (sticky).
  bool FellOffBus(size_t device) const NVMLX_EXCLUDES(mu_);

 private:
  struct Seen {
    util::Clock::TimePoint at;
    int64_t xid;
  };
  struct State {
    int64_t last = 0;
    std::deque<Seen> recent;            // ascending time
    std::map<int64_t, int64_t> totals;  // xid -> events since start (0 left out)
    bool fell_off_bus = false;
  };

  XidWatcher(const nvml::Library& lib, std::vector<Gpu> gpus, std::chrono::milliseconds window,
             util::Clock* clock);
  void Loop() NVMLX_EXCLUDES(mu_);
  void Run() NVMLX_EXCLUDES(mu_);
  void Record(nvml::Device device, int64_t xid) NVMLX_EXCLUDES(mu_);

  const nvml::Library& lib_;
  const std::vector<Gpu> gpus_;
  const std::chrono::milliseconds window_;
  util::Clock* const clock_;
  nvml::EventSet set_;
  std::vector<bool> watched_;  // fixed after Create
  // Read without the lock between waits; set under mu_ so that the backoff wait cannot miss it.
  std::atomic<bool> stopping_{false};
  std::thread thread_;
  nvml::CallSite site_;  // the watcher thread's NVML calls

  mutable util::Mutex mu_;
  util::CondVar stop_cv_;  // wakes the backoff after a failing wait on Stop(); thread ended
  bool ended_ NVMLX_GUARDED_BY(mu_) = false;
  mutable std::vector<State> state_ NVMLX_GUARDED_BY(mu_);  // per device; Read prunes
};

}  // namespace nvmlx::collect

#endif  // NVML_EXPORTER_COLLECT_XID_WATCHER_H_
