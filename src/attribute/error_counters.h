// ErrorCounters: how often each attribution source failed, for
// nvml_exporter_attribution_errors_total{source="apiserver"|"cgroup"|"kubelet"}.
//
// app.cc owns one; every attribution source increments it on a failure, the renderer reads a
// copy once per collection. Sources registered up front are reported (as 0) before their first
// failure, so that rate() and absent() work from the first scrape.
//
// Thread-safety: all methods may be called from any thread (one mutex; increments are rare).
#ifndef NVML_EXPORTER_ATTRIBUTE_ERROR_COUNTERS_H_
#define NVML_EXPORTER_ATTRIBUTE_ERROR_COUNTERS_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/thread_annotations.h"

namespace nvmlx::attribute {

class ErrorCounters {
 public:
  // Makes `source` appear with 0 until it first fails.
  void Register(std::string_view source);
  void Increment(std::string_view source);
  // (source, count) pairs sorted by source.
  std::vector<std::pair<std::string, uint64_t>> Snapshot() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, uint64_t, std::less<>> counts_ NVMLX_GUARDED_BY(mu_);
};

// One source's failure streak: every failure is counted, but only the first of a streak is
// logged (warning), and the recovery once (info), so a source that is down for hours writes two
// lines, not one per attempt.
// Thread-safety: none; owned by the one thread that runs the source.
class FailureStreak {
 public:
  FailureStreak(std::string source, ErrorCounters* counters)
      : source_(std::move(source)), counters_(counters) {}
  // `what` says what failed ("list pods", "read /proc/12/cgroup"), `error` why.
  void Fail(std::string_view what, const std::string& error);
  void Succeed();
  bool failing() const { return failing_; }

 private:
  std::string source_;
  ErrorCounters* counters_;  // may be null (tests)
  bool failing_ = false;
};

}  // namespace nvmlx::attribute

#endif  // NVML_EXPORTER_ATTRIBUTE_ERROR_COUNTERS_H_
