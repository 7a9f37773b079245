#include "util/periodic_worker.h"

#include <algorithm>
#include <string>
#include <utility>

#include "util/log.h"
#include "util/thread_name.h"

namespace nvmlx::util {

PeriodicWorker::PeriodicWorker(Options options, std::function<void()> run)
    : name_(std::move(options.name)),
      period_(std::max(options.period, Clock::Duration(1))),  // a zero period would spin
      schedule_(options.schedule),
      clock_(options.clock != nullptr ? options.clock : Clock::Real()),
      run_(std::move(run)) {}

PeriodicWorker::~PeriodicWorker() { Stop(); }

void PeriodicWorker::Start() {
  if (thread_.joinable()) return;
  {
    MutexLock lock(&mu_);
    stopping_ = false;
  }
  const Clock::TimePoint first = AddSaturating(clock_->Now(), period_);
  thread_ = std::thread([this, first] { Loop(first); });
}

void PeriodicWorker::Stop() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  cv_.SignalAll();
  if (thread_.joinable()) thread_.join();
}

void PeriodicWorker::RunSoon() {
  {
    MutexLock lock(&mu_);
    soon_ = true;
  }
  cv_.SignalAll();
}

void PeriodicWorker::Loop(Clock::TimePoint next) {
  NameThisThread(name_);
  for (;;) {
    bool soon = false;
    {
      MutexLock lock(&mu_);
      while (!stopping_ && !soon_) {
        if (clock_->WaitUntil(&cv_, &mu_, next)) break;
      }
      if (stopping_) return;
      soon = soon_;
      soon_ = false;
    }
    run_();
    const Clock::TimePoint now = clock_->Now();
    if (schedule_ == Schedule::kAfterRun) {
      next = AddSaturating(now, period_);
      continue;
    }
    // kFixedRate: a RunSoon run between two ticks keeps the ticks where they were.
    if (soon && now < next) continue;
    next = AddSaturating(next, period_);
    if (next < now) {
      const auto behind = (now - next) / period_ + 1;
      log::Debug("periodic work overran its period; skipping ticks",
                 {{"worker", name_}, {"skipped", std::to_string(behind)}});
      next += behind * period_;
    }
  }
}

}  // namespace nvmlx::util
