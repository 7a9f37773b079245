#include "app/page_store.h"

#include <utility>

namespace nvmlx::app {

void PageStore::Publish(std::shared_ptr<const serve::Page> page, int gpus_total, int gpus_up,
                        Clock::time_point at) {
  util::MutexLock lock(&mu_);
  page_ = std::move(page);
  published_at_ = at;
  gpus_total_ = gpus_total;
  gpus_up_ = gpus_up;
}

std::shared_ptr<const serve::Page> PageStore::Latest() const {
  util::MutexLock lock(&mu_);
  return page_;
}

serve::Health PageStore::Health(Clock::time_point now) const {
  util::MutexLock lock(&mu_);
  if (page_ == nullptr) return {false, "no collection has completed yet"};
  const auto age = now - published_at_;
  if (age > 3 * interval_) {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(age).count();
    return {false, "last collection was " + std::to_string(ms) + " ms ago (more than 3 intervals)"};
  }
  // dcgm-exporter stays "OK" with zero GPUs (#744); an operator wants to know.
  if (gpus_total_ == 0) return {false, "no GPU is being collected"};
  if (gpus_up_ < gpus_total_) {
    return {true, "OK: " + std::to_string(gpus_total_ - gpus_up_) + " of " +
                      std::to_string(gpus_total_) + " GPU(s) lost"};
  }
  return {true, "OK"};
}

}  // namespace nvmlx::app
