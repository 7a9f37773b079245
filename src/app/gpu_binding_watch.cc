#include "app/gpu_binding_watch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <iterator>
#include <utility>

#include "util/log.h"

namespace nvmlx::app {
namespace {

bool IsHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

// DDDD:BB:DD.F with at least four domain digits (sysfs writes four; a 32-bit domain has more).
bool IsPciAddress(std::string_view s) {
  const size_t colon = s.find(':');
  if (colon == std::string_view::npos || colon < 4) return false;
  if (s.size() != colon + 8) return false;  // ":BB:DD.F"
  for (size_t i = 0; i < colon; ++i) {
    if (!IsHex(s[i])) return false;
  }
  const std::string_view rest = s.substr(colon);
  return rest[0] == ':' && IsHex(rest[1]) && IsHex(rest[2]) && rest[3] == ':' && IsHex(rest[4]) &&
         IsHex(rest[5]) && rest[6] == '.' && rest[7] >= '0' && rest[7] <= '7';
}

std::string Join(const std::set<std::string>& s) {
  std::string out;
  for (const std::string& x : s) out += (out.empty() ? "" : ",") + x;
  return out.empty() ? "-" : out;
}

}  // namespace

Result<std::set<std::string>> GpuBindingWatch::BoundDevices(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) {
    const int err = errno;
    std::string why = dir + ": " + strerror(err);
    if (err == EACCES || err == EPERM) return Status(StatusCode::kNoPermission, std::move(why));
    if (err == ENOENT || err == ENOTDIR) return NotFound(std::move(why));
    return Unavailable(std::move(why));  // EMFILE and the like: says nothing about the GPUs
  }
  std::set<std::string> out;
  while (dirent* e = readdir(d)) {
    if (IsPciAddress(e->d_name)) out.insert(e->d_name);
  }
  closedir(d);
  return out;
}

GpuBindingWatch::GpuBindingWatch(std::string dir, std::chrono::milliseconds period,
                                 std::function<void()> on_change, util::Clock* clock)
    : dir_(std::move(dir)), period_(period), on_change_(std::move(on_change)), clock_(clock) {}

GpuBindingWatch::~GpuBindingWatch() { Stop(); }

Status GpuBindingWatch::Start() {
  Result<std::set<std::string>> now = BoundDevices(dir_);
  if (!now.ok()) return now.status();
  {
    util::MutexLock lock(&mu_);
    baseline_ = std::move(now).value();
    log::Info("GPU bind/unbind watch on", {{"directory", dir_},
                                           {"bound", Join(baseline_)},
                                           {"poll_ms", std::to_string(period_.count())}});
  }
  util::PeriodicWorker::Options o;
  o.name = "GPU bind/unbind watch";
  o.period = period_;
  o.clock = clock_;
  worker_ = std::make_unique<util::PeriodicWorker>(o, [this] { Poll(); });
  worker_->Start();
  return Status::Ok();
}

void GpuBindingWatch::Stop() {
  if (worker_ != nullptr) worker_->Stop();
}

GpuBindingWatch::Change GpuBindingWatch::Changes() const {
  util::MutexLock lock(&mu_);
  return change_;
}

void GpuBindingWatch::Poll() {
  Result<std::set<std::string>> now = BoundDevices(dir_);
  bool fire = false;
  {
    util::MutexLock lock(&mu_);
    if (fired_) return;
    if (!now.ok()) {
      // The driver's directory vanishes while the nvidia module is unloaded (a driver upgrade
      // or reload): the NVML session of this process is then dead whatever GPUs come back,
      // so its return is a change even with the same set. Any other failure (out of
      // descriptors under a connection flood) says nothing about the GPUs: retried.
      if (!read_failed_) {
        log::Warn("GPU bind/unbind watch cannot read the driver's directory; retrying",
                  {{"err", now.status().ToString()}});
      }
      read_failed_ = true;
      if (now.status().code() == StatusCode::kNotFound) driver_gone_ = true;
      return;
    }
    read_failed_ = false;
    if (*now == baseline_ && !driver_gone_) {
      pending_.reset();
      return;
    }
    if (pending_ != *now) {  // first sight, or still moving: one more poll
      pending_ = *now;
      return;
    }
    std::set_difference(now->begin(), now->end(), baseline_.begin(), baseline_.end(),
                        std::inserter(change_.added, change_.added.end()));
    std::set_difference(baseline_.begin(), baseline_.end(), now->begin(), now->end(),
                        std::inserter(change_.removed, change_.removed.end()));
    change_.driver_reloaded = driver_gone_;
    fired_ = true;
    fire = true;
    log::Warn("GPU set changed", {{"bound", Join(*now)},
                                  {"added", Join(change_.added)},
                                  {"removed", Join(change_.removed)},
                                  {"driver_reloaded", driver_gone_ ? "true" : "false"}});
  }
  if (fire) on_change_();
}

Status ReExecute(char** argv, const sigset_t& mask) {
  if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
    // Kernels before 5.11: mark each open descriptor. The directory's own descriptor is
    // marked too, harmlessly.
    if (DIR* d = opendir("/proc/self/fd")) {
      while (dirent* e = readdir(d)) {
        const int fd = atoi(e->d_name);
        if (fd >= 3) fcntl(fd, F_SETFD, FD_CLOEXEC);
      }
      closedir(d);
    }
  }
  pthread_sigmask(SIG_SETMASK, &mask, nullptr);
  execv("/proc/self/exe", argv);
  const int err = errno;
  return Unavailable(std::string("execv /proc/self/exe: ") + strerror(err));
}

}  // namespace nvmlx::app
