// FailureStreak: the logging rule shared by the attribution sources that fail and recover
// (the counters themselves are model::SourceErrors, source_errors.h).
#ifndef NVML_EXPORTER_ATTRIBUTE_ERROR_COUNTERS_H_
#define NVML_EXPORTER_ATTRIBUTE_ERROR_COUNTERS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "model/source_errors.h"

namespace nvmlx::attribute {

// One source's failure streak: every failure is counted, but only the first of a streak is
// logged (warning), and the recovery once (info), so a source that is down for hours writes two
// lines, not one per attempt.
// Thread-safety: none; owned by the one thread that runs the source.
class FailureStreak {
 public:
  FailureStreak(std::string source, model::SourceErrors* counters)
      : source_(std::move(source)), counters_(counters) {}
  // `what` says what failed ("list pods", "read /proc/12/cgroup"), `error` why.
  void Fail(std::string_view what, const std::string& error);
  void Succeed();
  bool failing() const { return failing_; }
  uint64_t failures() const { return failures_; }  // in the current streak

 private:
  std::string source_;
  model::SourceErrors* counters_;  // may be null (tests)
  bool failing_ = false;
  uint64_t failures_ = 0;
};

}  // namespace nvmlx::attribute

#endif  // NVML_EXPORTER_ATTRIBUTE_ERROR_COUNTERS_H_
