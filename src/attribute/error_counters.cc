#include "attribute/error_counters.h"

#include "util/log.h"

namespace nvmlx::attribute {

void ErrorCounters::Register(std::string_view source) {
  std::lock_guard<std::mutex> lock(mu_);
  counts_.try_emplace(std::string(source), 0);
}

void ErrorCounters::Increment(std::string_view source) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = counts_.find(source);
  if (it == counts_.end()) it = counts_.emplace(std::string(source), 0).first;
  ++it->second;
}

std::vector<std::pair<std::string, uint64_t>> ErrorCounters::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {counts_.begin(), counts_.end()};
}

void FailureStreak::Fail(std::string_view what, const std::string& error) {
  if (counters_ != nullptr) counters_->Increment(source_);
  if (failing_) return;
  failing_ = true;
  log::Warn("attribution source failing; keeping its last good data (logged once per streak)",
            {{"source", source_}, {"what", std::string(what)}, {"err", error}});
}

void FailureStreak::Succeed() {
  if (!failing_) return;
  failing_ = false;
  log::Info("attribution source recovered", {{"source", source_}});
}

}  // namespace nvmlx::attribute
