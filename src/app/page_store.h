// PageStore: the latest rendered exposition plus what /health needs, swapped in atomically by
// the collector thread and read by the HTTP threads.
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

  // `interval`: the collection interval; /health fails after 3 intervals without a collection.
  explicit PageStore(std::chrono::milliseconds interval) : interval_(interval) {}

  // gpus_total: devices collected; gpus_up: of those, not lost.
  void Publish(std::shared_ptr<const serve::Page> page, int gpus_total, int gpus_up,
               Clock::time_point at = Clock::now()) NVMLX_EXCLUDES(mu_);
  std::shared_ptr<const serve::Page> Latest() const NVMLX_EXCLUDES(mu_);
  serve::Health Health(Clock::time_point now = Clock::now()) const NVMLX_EXCLUDES(mu_);

 private:
  const std::chrono::milliseconds interval_;
  mutable util::Mutex mu_;
  std::shared_ptr<const serve::Page> page_ NVMLX_GUARDED_BY(mu_);
  Clock::time_point published_at_ NVMLX_GUARDED_BY(mu_) = Clock::time_point();
  int gpus_total_ NVMLX_GUARDED_BY(mu_) = 0;
  int gpus_up_ NVMLX_GUARDED_BY(mu_) = 0;
};

}  // namespace nvmlx::app

#endif  // NVML_EXPORTER_APP_PAGE_STORE_H_
