// DeviceWorker: one thread that runs the NVML reads of one GPU (and its MIG instances), one job
// at a time, so that a call that never returns from the driver holds this thread only: the
// collector's loops post jobs and wait for them with a deadline, and every other GPU goes on.
//
// At most one job is outstanding: Post() refuses a new one while the previous one runs, so a
// stuck call never piles up threads or work. The worker records which NVML function it is in
// (nvml::CallSite) and since when its job runs (on the collector's util::Clock), for the
// watchdog's log line and for Stop's report of what is stuck.
//
// Stop is bounded: StopUntil() asks the thread to end after its job and waits until a deadline;
// a thread stuck inside the driver is left running (StopUntil says so) and the destructor then
// waits for it. The daemon's exit path never destroys a collector whose worker is stuck: it logs
// and leaves the process with _exit (docs/faults.md).
//
// Thread-safety: Post, Busy, BusySince, CurrentCall and StopUntil from any thread; the job runs
// on the worker's own thread.
#ifndef NVML_EXPORTER_COLLECT_DEVICE_WORKER_H_
#define NVML_EXPORTER_COLLECT_DEVICE_WORKER_H_

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include "nvml/call_site.h"
#include "util/clock.h"
#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace nvmlx::collect {

class DeviceWorker {
 public:
  // `clock` times BusySince (must outlive the worker). Starts the thread.
  DeviceWorker(std::string name, util::Clock* clock);
  ~DeviceWorker();  // StopUntil(no deadline): waits for a job in progress, however long
  DeviceWorker(const DeviceWorker&) = delete;
  DeviceWorker& operator=(const DeviceWorker&) = delete;

  // Runs `job` on the worker's thread, then, once the worker counts as idle again (a Post from
  // `done` or after it succeeds), `done`. False (nothing posted) while the previous job has not
  // finished, or after StopUntil.
  bool Post(std::function<void()> job, std::function<void()> done) NVMLX_EXCLUDES(mu_);
  // When the running job started; nullopt while idle.
  std::optional<util::Clock::TimePoint> BusySince() const NVMLX_EXCLUDES(mu_);
  // The NVML function the job is in right now, or null.
  const char* CurrentCall() const { return site_.current(); }
  const std::string& name() const { return name_; }

  // Lets the thread end after its current job and waits for it until `deadline` (steady clock).
  // True when the thread has ended (joined); false when a job is still running (stuck).
  bool StopUntil(std::chrono::steady_clock::time_point deadline) NVMLX_EXCLUDES(mu_);

 private:
  void Loop() NVMLX_EXCLUDES(mu_);

  const std::string name_;
  util::Clock* const clock_;
  nvml::CallSite site_;

  mutable util::Mutex mu_;
  util::CondVar cv_;  // a job was posted, stop was asked, or the thread ended
  std::function<void()> job_ NVMLX_GUARDED_BY(mu_);
  std::function<void()> done_ NVMLX_GUARDED_BY(mu_);
  std::optional<util::Clock::TimePoint> busy_since_ NVMLX_GUARDED_BY(mu_);
  bool stopping_ NVMLX_GUARDED_BY(mu_) = false;
  bool ended_ NVMLX_GUARDED_BY(mu_) = false;
  std::thread thread_;  // joined by StopUntil once ended_, or by the destructor
};

}  // namespace nvmlx::collect

#endif  // NVML_EXPORTER_COLLECT_DEVICE_WORKER_H_
