// PageStore: the latest rendered exposition plus what the probes need, swapped in atomically by
// the collector thread and read by the HTTP threads.
//
// The probes (docs/running.md "Endpoints and probes", docs/dcgm-compat.md §8):
//  - /health (liveness): the process is alive and its collection loop is publishing. It fails
//    only when no page has been published for longer than `max_age` (counted from the start
//    until the first page). GPU state does not fail it: a node whose GPUs are lost or absent
//    gets nothing from a restart loop; that state is in the metrics (nvml_exporter_gpu_up) and
//    in the body text.
//    The one GPU state that fails it: a GPU whose set-up at start never finished (a driver call
//    hung since the start, hardening round two, row 5). The other GPUs are served meanwhile,
//    but the start is incomplete, and only a new start can collect that GPU; a kubelet restart
//    is what dcgm-exporter gets there too (its port never opens).
//    With --health-require-gpus (dcgm-exporter 4.8.4's) it also fails while the latest page
//    collected no GPU, for fleets where every node has GPUs and an exporter that sees none is
//    broken (a restart may pick up a driver that came late).
//  - /ready (readiness): as /health, and a first page exists.
//
// Thread-safety: all methods may be called concurrently from any thread. Readers get a
// shared_ptr to an immutable Page, so a swap never disturbs a response being written.
#ifndef NVML_EXPORTER_APP_PAGE_STORE_H_
#define NVML_EXPORTER_APP_PAGE_STORE_H_

#include <chrono>
#include <memory>
#include <string>

#include "serve/http_server.h"
#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace nvmlx::app {

class PageStore {
 public:
  using Clock = std::chrono::steady_clock;

  // The max_age the daemon uses when --health-max-age is 0: three collection intervals, at
  // least 30 s (one slow NVML call must not restart the pod).
  static std::chrono::milliseconds DefaultMaxAge(std::chrono::milliseconds interval);

  // `max_age`: how long without a published page /health tolerates; `start`: when the wait for
  // the first page began.
  explicit PageStore(std::chrono::milliseconds max_age, Clock::time_point start = Clock::now())
      : PageStore(max_age, false, start) {}
  // `require_gpus`: --health-require-gpus.
  PageStore(std::chrono::milliseconds max_age, bool require_gpus,
            Clock::time_point start = Clock::now())
      : max_age_(max_age), require_gpus_(require_gpus), started_at_(start) {}

  // The GPUs of one collection, for the probes' body (never their status).
  struct GpuCounts {
    int total = 0;       // GPUs collected
    int lost = 0;        // fallen off the bus (GPU_IS_LOST, Xid 79)
    int stale = 0;       // a read stuck in the driver (docs/faults.md)
    int unreadable = 0;  // every read failed this round
    // Stale because their set-up at start has not finished: the start is incomplete, and
    // /health fails (the one GPU state that does; see the class comment).
    int setting_up = 0;
    std::string setting_up_calls = {};  // "gpu 0 in nvmlDeviceGetTemperature, ..."
  };
  void Publish(std::shared_ptr<const serve::Page> page, GpuCounts gpus,
               Clock::time_point at = Clock::now()) NVMLX_EXCLUDES(mu_);
  std::shared_ptr<const serve::Page> Latest() const NVMLX_EXCLUDES(mu_);
  serve::Health Health(serve::Probe probe, Clock::time_point now = Clock::now()) const
      NVMLX_EXCLUDES(mu_);

 private:
  const std::chrono::milliseconds max_age_;
  const bool require_gpus_;
  const Clock::time_point started_at_;
  mutable util::Mutex mu_;
  std::shared_ptr<const serve::Page> page_ NVMLX_GUARDED_BY(mu_);
  Clock::time_point published_at_ NVMLX_GUARDED_BY(mu_) = Clock::time_point();
  GpuCounts gpus_ NVMLX_GUARDED_BY(mu_);
};

}  // namespace nvmlx::app

#endif  // NVML_EXPORTER_APP_PAGE_STORE_H_
