#include "collect/device_worker.h"

#include <utility>

#include "util/thread_name.h"

namespace nvmlx::collect {

DeviceWorker::DeviceWorker(std::string name, util::Clock* clock)
    : name_(std::move(name)), clock_(clock) {
  thread_ = std::thread([this] { Loop(); });
}

DeviceWorker::~DeviceWorker() {
  StopUntil(std::chrono::steady_clock::time_point::max());
  if (thread_.joinable()) thread_.join();
}

bool DeviceWorker::Post(std::function<void()> job, std::function<void()> done) {
  {
    util::MutexLock lock(&mu_);
    if (stopping_ || busy_since_) return false;
    job_ = std::move(job);
    done_ = std::move(done);
    busy_since_ = clock_->Now();
  }
  cv_.SignalAll();
  return true;
}

std::optional<util::Clock::TimePoint> DeviceWorker::BusySince() const {
  util::MutexLock lock(&mu_);
  return busy_since_;
}

bool DeviceWorker::StopUntil(std::chrono::steady_clock::time_point deadline) {
  {
    util::MutexLock lock(&mu_);
    stopping_ = true;
    cv_.SignalAll();
    while (!ended_) {
      // An idle worker is not stuck: it ends at once, however late the deadline is.
      if (!busy_since_ && !job_) {
        cv_.Wait(&mu_);
        continue;
      }
      if (cv_.WaitUntil(&mu_, deadline)) break;
    }
    if (!ended_) return false;
  }
  if (thread_.joinable()) thread_.join();  // it has left Loop: returns at once
  return true;
}

void DeviceWorker::Loop() {
  util::NameThisThread(name_);
  nvml::TrackCallsOnThisThread(&site_);
  for (;;) {
    std::function<void()> job;
    std::function<void()> done;
    {
      util::MutexLock lock(&mu_);
      while (!stopping_ && !job_) cv_.Wait(&mu_);
      if (!job_) {  // stopping, nothing left to run
        ended_ = true;
        cv_.SignalAll();
        break;
      }
      job = std::move(job_);
      done = std::move(done_);
      job_ = nullptr;
      done_ = nullptr;
    }
    job();
    {
      util::MutexLock lock(&mu_);
      busy_since_.reset();
    }
    if (done) done();
  }
  nvml::TrackCallsOnThisThread(nullptr);
}

}  // namespace nvmlx::collect
