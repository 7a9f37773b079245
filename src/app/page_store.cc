#include "app/page_store.h"

#include <algorithm>
#include <utility>

namespace nvmlx::app {
namespace {

std::string Ms(std::chrono::steady_clock::duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + " ms";
}

}  // namespace

std::chrono::milliseconds PageStore::DefaultMaxAge(std::chrono::milliseconds interval) {
  return std::max(3 * interval, std::chrono::milliseconds(30000));
}

void PageStore::Publish(std::shared_ptr<const serve::Page> page, GpuCounts gpus,
                        Clock::time_point at) {
  util::MutexLock lock(&mu_);
  page_.swap(page);  // the previous page (megabytes) is freed with `page`, after the lock
  published_at_ = at;
  gpus_ = gpus;
}

std::shared_ptr<const serve::Page> PageStore::Latest() const {
  util::MutexLock lock(&mu_);
  return page_;
}

serve::Health PageStore::Health(serve::Probe probe, Clock::time_point now) const {
  util::MutexLock lock(&mu_);
  const std::string limit = " (--health-max-age " + Ms(max_age_) + ")";
  if (page_ == nullptr) {
    if (now - started_at_ > max_age_) {
      return {false, "no collection has completed in " + Ms(now - started_at_) + limit};
    }
    if (probe == serve::Probe::kReady) return {false, "no collection has completed yet"};
    return {true, "OK: starting, no collection has completed yet"};
  }
  if (now - published_at_ > max_age_) {
    return {false, "last collection was " + Ms(now - published_at_) + " ago" + limit};
  }
  // GPU state is reported, never a failure (see the class comment), but for no GPU at all when
  // the operator asked for one (dcgm-exporter 4.8.4: no GPU collector registered).
  if (gpus_.total == 0) {
    if (require_gpus_) return {false, "no GPU is being collected (--health-require-gpus)"};
    return {true, "OK: no GPU is being collected"};
  }
  if (gpus_.setting_up > 0) {
    return {false, "start-up incomplete: " + std::to_string(gpus_.setting_up) + " of " +
                       std::to_string(gpus_.total) + " GPU(s) still in their set-up (" +
                       gpus_.setting_up_calls + "); the others are served"};
  }
  std::string body = "OK";
  const std::string of = " of " + std::to_string(gpus_.total) + " GPU(s) ";
  const char* sep = ": ";
  for (const auto& [n, what] : {std::pair<int, const char*>{gpus_.lost, "lost"},
                                {gpus_.stale, "stale (a driver call is stuck)"},
                                {gpus_.unreadable, "unreadable (every read failed)"}}) {
    if (n == 0) continue;
    body += sep + std::to_string(n) + of + what;
    sep = ", ";
  }
  return {true, body};
}

}  // namespace nvmlx::app
