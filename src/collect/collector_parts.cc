#include "collect/collector_parts.h"

namespace nvmlx::collect {

void RoundBoard::Resize(size_t groups) {
  util::MutexLock lock(&mu_);
  results_.resize(groups);
  handed_.assign(groups, true);
}

std::optional<uint64_t> RoundBoard::Begin(int jobs) {
  util::MutexLock lock(&mu_);
  if (stopping_) return std::nullopt;
  outstanding_ = jobs;
  return ++round_;
}

void RoundBoard::Skip(int jobs) {
  util::MutexLock lock(&mu_);
  outstanding_ -= jobs;
  if (outstanding_ <= 0) cv_.SignalAll();
}

void RoundBoard::Deliver(size_t g, uint64_t round, GroupResult result) {
  util::MutexLock lock(&mu_);
  result.round = round;
  results_[g] = std::move(result);
  handed_[g] = false;
}

void RoundBoard::FinishJob(uint64_t round) {
  util::MutexLock lock(&mu_);
  if (round != round_ || outstanding_ == 0) return;  // a late job of an earlier round
  if (--outstanding_ == 0) cv_.SignalAll();          // one wake-up per round, not per job
}

std::optional<std::vector<GroupResult>> RoundBoard::Await(uint64_t round, util::Clock* clock,
                                                          util::Clock::TimePoint deadline) {
  util::MutexLock lock(&mu_);
  WaitForJobs(round, clock, deadline);
  if (stopping_) return std::nullopt;
  std::vector<GroupResult> out(results_.size());
  for (size_t g = 0; g < results_.size(); ++g) {
    if (handed_[g] || results_[g].round > round) continue;
    out[g] = std::move(results_[g]);
    out[g].late = out[g].round != round;
    handed_[g] = true;
  }
  return out;
}

bool RoundBoard::AwaitJobs(uint64_t round, util::Clock* clock, util::Clock::TimePoint deadline) {
  util::MutexLock lock(&mu_);
  WaitForJobs(round, clock, deadline);
  return round == round_ && outstanding_ <= 0;
}

void RoundBoard::WaitForJobs(uint64_t round, util::Clock* clock, util::Clock::TimePoint deadline) {
  while (round == round_ && outstanding_ > 0 && !stopping_) {
    if (clock->WaitUntil(&cv_, &mu_, deadline)) break;
  }
}

void RoundBoard::Stop() {
  {
    util::MutexLock lock(&mu_);
    stopping_ = true;
  }
  cv_.SignalAll();
}

bool RoundBoard::stopping() const {
  util::MutexLock lock(&mu_);
  return stopping_;
}

void SlowCache::Resize(size_t entities) {
  util::MutexLock lock(&mu_);
  latest_.resize(entities);
}

void SlowCache::Put(size_t entity, size_t slot, std::vector<model::Sample> samples) {
  util::MutexLock lock(&mu_);
  if (latest_.size() <= entity) latest_.resize(entity + 1);  // Create's readers come first
  std::vector<std::vector<model::Sample>>& slots = latest_[entity];
  if (slots.size() <= slot) slots.resize(slot + 1);
  slots[slot] = std::move(samples);
}

void SlowCache::Truncate(size_t entity, size_t slots) {
  util::MutexLock lock(&mu_);
  if (latest_.size() <= entity) latest_.resize(entity + 1);
  if (latest_[entity].size() > slots) latest_[entity].resize(slots);
}

void SlowCache::AppendTo(size_t entity, std::vector<model::Sample>* samples) const {
  util::MutexLock lock(&mu_);
  for (const std::vector<model::Sample>& slot : latest_[entity]) {
    samples->insert(samples->end(), slot.begin(), slot.end());
  }
}

bool OnceLog::First(size_t entity, int key) {
  util::MutexLock lock(&mu_);
  return seen_.emplace(entity, key).second;
}

}  // namespace nvmlx::collect
