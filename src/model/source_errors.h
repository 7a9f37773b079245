// SourceErrors: how many refreshes of each attribution source failed, by source name
// ("kubelet", "cgroup"/"apiserver" from the process attribution, "apiserver_node" and
// "kubelet_allocatable" for Container Insights, ...). Rendered as the counter
// family nvml_exporter_attribution_errors_total{source="…"}.
//
// Design: app::AttributionSources owns one instance (shared_ptr) and hands it to every source,
// which calls Increment() from its own thread, and to the Prometheus renderer (PrometheusOptions),
// which reads Counts() once per collection when it renders the page. Counters are registered at
// zero when a source is enabled, so the family shows every enabled source before its first
// failure (Prometheus' rate() needs the zero).
// It lives in model/ because both the sources (attribute/) and the renderer (render/) use it,
// and the renderer must not depend on the sources.
//
// Thread-safety: every method is thread-safe (one mutex; calls are rare and short).
#ifndef NVML_EXPORTER_MODEL_SOURCE_ERRORS_H_
#define NVML_EXPORTER_MODEL_SOURCE_ERRORS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace nvmlx::model {

class SourceErrors {
 public:
  // Makes `source` appear with 0 if it has no count yet.
  void Register(std::string_view source) NVMLX_EXCLUDES(mu_) {
    util::MutexLock lock(&mu_);
    counts_.try_emplace(std::string(source), 0);
  }
  void Increment(std::string_view source) NVMLX_EXCLUDES(mu_) {
    util::MutexLock lock(&mu_);
    auto it = counts_.find(source);
    if (it == counts_.end()) it = counts_.emplace(std::string(source), 0).first;
    ++it->second;
  }
  // (source, count), ascending source name.
  std::vector<std::pair<std::string, uint64_t>> Counts() const NVMLX_EXCLUDES(mu_) {
    util::MutexLock lock(&mu_);
    return {counts_.begin(), counts_.end()};
  }

 private:
  mutable util::Mutex mu_;
  std::map<std::string, uint64_t, std::less<>> counts_ NVMLX_GUARDED_BY(mu_);
};

}  // namespace nvmlx::model

#endif  // NVML_EXPORTER_MODEL_SOURCE_ERRORS_H_
