#include "collect/xid_watcher.h"

#include <algorithm>
#include <string>
#include <utility>

#include "util/log.h"
#include "util/thread_name.h"

namespace nvmlx::collect {

XidWatcher::XidWatcher(const nvml::Library& lib, std::vector<Gpu> gpus,
                       std::chrono::milliseconds window, util::Clock* clock)
    : lib_(lib),
      gpus_(std::move(gpus)),
      window_(window),
      clock_(clock),
      watched_(gpus_.size(), false) {
  state_.resize(gpus_.size());
}

XidWatcher::~XidWatcher() { Stop(); }

std::unique_ptr<XidWatcher> XidWatcher::Create(const nvml::Library& lib, std::vector<Gpu> gpus,
                                               std::chrono::milliseconds window,
                                               util::Clock* clock) {
  std::unique_ptr<XidWatcher> w(new XidWatcher(lib, std::move(gpus), window, clock));
  Result<nvml::EventSet> set = lib.EventSetCreate();
  if (!set.ok()) {
    log::Warn("cannot create an NVML event set; XID fields omitted on every GPU",
              {{"err", set.status().ToString()}});
    return w;
  }
  w->set_ = std::move(set).value();
  for (size_t i = 0; i < w->gpus_.size(); ++i) {
    Status st = lib.RegisterEvents(w->gpus_[i].handle, nvmlEventTypeXidCriticalError, w->set_);
    if (!st.ok()) {
      log::Warn("cannot register for Xid events; XID fields omitted for this GPU",
                {{"gpu", std::to_string(w->gpus_[i].index)}, {"err", st.ToString()}});
      continue;
    }
    w->watched_[i] = true;
  }
  return w;
}

void XidWatcher::Start() {
  if (thread_.joinable() || !set_) return;
  if (std::find(watched_.begin(), watched_.end(), true) == watched_.end()) return;
  {
    util::MutexLock lock(&mu_);
    stopping_.store(false);
    ended_ = false;
  }
  thread_ = std::thread([this] { Loop(); });
}

void XidWatcher::Stop() { StopUntil(std::chrono::steady_clock::time_point::max()); }

bool XidWatcher::StopUntil(std::chrono::steady_clock::time_point deadline) {
  if (!thread_.joinable()) return true;
  {
    util::MutexLock lock(&mu_);
    stopping_.store(true);
    stop_cv_.SignalAll();
    while (!ended_) {
      if (stop_cv_.WaitUntil(&mu_, deadline)) break;
    }
    if (!ended_) return false;  // stuck in nvmlEventSetWait_v2
  }
  thread_.join();
  return true;
}

const char* XidWatcher::StuckCall() const { return site_.current(); }

void XidWatcher::Loop() {
  util::NameThisThread("xid watcher");
  nvml::TrackCallsOnThisThread(&site_);
  Run();
  nvml::TrackCallsOnThisThread(nullptr);
  util::MutexLock lock(&mu_);
  ended_ = true;
  stop_cv_.SignalAll();
}

void XidWatcher::Run() {
  bool logged_failure = false;
  while (!stopping_.load()) {
    Result<std::optional<nvml::Event>> ev =
        lib_.WaitEvent(set_, static_cast<unsigned>(kWaitTimeout.count()));
    if (!ev.ok()) {
      // A failing wait (e.g. a GPU of the set fell off the bus) usually returns at once:
      // back off for one timeout instead of spinning, and say so once.
      if (!logged_failure) {
        log::Warn("waiting for Xid events failed; retrying", {{"err", ev.status().ToString()}});
        logged_failure = true;
      }
      const auto until = std::chrono::steady_clock::now() + kWaitTimeout;
      util::MutexLock lock(&mu_);
      while (!stopping_.load() && !stop_cv_.WaitUntil(&mu_, until)) {
      }
      continue;
    }
    if (!ev->has_value()) continue;  // timeout: nothing happened
    const nvml::Event& e = **ev;
    if ((e.type & nvmlEventTypeXidCriticalError) == 0) continue;
    Record(e.device, static_cast<int64_t>(e.data));
  }
}

void XidWatcher::Record(nvml::Device device, int64_t xid) {
  // The event names the GPU by handle: map it back to our device position.
  for (size_t i = 0; i < gpus_.size(); ++i) {
    if (gpus_[i].handle != device || !watched_[i]) continue;
    log::Warn("Xid error", {{"gpu", std::to_string(gpus_[i].index)}, {"xid", std::to_string(xid)}});
    const util::Clock::TimePoint now = clock_->Now();
    util::MutexLock lock(&mu_);
    State& s = state_[i];
    s.last = xid;
    if (xid == kFallenOffTheBusXid) s.fell_off_bus = true;
    s.recent.push_back({now, xid});
    if (xid != 0) ++s.totals[xid];
    while (!s.recent.empty() && s.recent.front().at < now - window_) s.recent.pop_front();
    return;
  }
}

bool XidWatcher::Read(size_t device, int64_t* last, std::vector<model::XidCount>* counts) const {
  if (!Watched(device)) return false;
  const util::Clock::TimePoint cutoff = clock_->Now() - window_;
  std::map<int64_t, int64_t> by_xid;
  {
    util::MutexLock lock(&mu_);
    State& s = state_[device];
    while (!s.recent.empty() && s.recent.front().at < cutoff) s.recent.pop_front();
    *last = s.last;
    for (const Seen& seen : s.recent) ++by_xid[seen.xid];
  }
  counts->clear();
  for (const auto& [xid, n] : by_xid) counts->push_back({xid, n});
  return true;
}

bool XidWatcher::ReadTotals(size_t device, std::vector<model::XidCount>* totals) const {
  if (!Watched(device)) return false;
  totals->clear();
  util::MutexLock lock(&mu_);
  for (const auto& [xid, n] : state_[device].totals) totals->push_back({xid, n});
  return true;
}

bool XidWatcher::FellOffBus(size_t device) const {
  if (!Watched(device)) return false;
  util::MutexLock lock(&mu_);
  return state_[device].fell_off_bus;
}

}  // namespace nvmlx::collect
