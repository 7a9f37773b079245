#include "attribute/error_counters.h"

#include "util/log.h"

namespace nvmlx::attribute {

void FailureStreak::Fail(std::string_view what, const std::string& error) {
  if (counters_ != nullptr) counters_->Increment(source_);
  ++failures_;
  if (failing_) return;
  failing_ = true;
  log::Warn("attribution source failing; keeping its last good data (logged once per streak)",
            {{"source", source_}, {"what", std::string(what)}, {"err", error}});
}

void FailureStreak::Succeed() {
  if (!failing_) return;
  log::Info("attribution source recovered",
            {{"source", source_}, {"failed_attempts", std::to_string(failures_)}});
  failing_ = false;
  failures_ = 0;
}

}  // namespace nvmlx::attribute
