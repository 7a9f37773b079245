// GpuBindingWatch: --enable-gpu-bind-unbind-watch. Polls the PCI driver directory of the NVIDIA
// driver (/sys/bus/pci/drivers/nvidia: one entry per bound GPU, named by its PCI address) and
// calls `on_change` once the set of bound GPUs differs from the set at Start() and has held
// still for one more poll (a GPU bound or unbound; several at once make one change), or once
// the directory is back after it vanished (the nvidia module reloaded: NVML must start again
// even when the same GPUs return).
//
// Why sysfs and not NVML: NVML enumerates GPUs in nvmlInit only. A GPU bound after it stays
// invisible to that session and an unbound one answers GPU_IS_LOST; dcgm-exporter's watch
// reads DCGM's bind/unbind event, which DCGM derives from the driver's own view. The directory
// is what the kernel changes on bind and unbind (nvidia-smi drain, a driver re-bind for VFIO
// passthrough). What to do about a change is the owner's: app::Run re-executes the daemon,
// which enumerates afresh (docs/faults.md).
//
// Thread-safety: Start/Stop from one controlling thread; `on_change` runs on the watch's
// thread; Changes() from any thread.
#ifndef NVML_EXPORTER_APP_GPU_BINDING_WATCH_H_
#define NVML_EXPORTER_APP_GPU_BINDING_WATCH_H_

#include <signal.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "util/mutex.h"
#include "util/periodic_worker.h"
#include "util/status.h"

namespace nvmlx::app {

class GpuBindingWatch {
 public:
  // The kernel's directory for the nvidia PCI driver.
  static constexpr char kDefaultDirectory[] = "/sys/bus/pci/drivers/nvidia";
  // The entries of `dir` that are PCI addresses (DDDD:BB:DD.F, lower-case hex; DDDD may be
  // longer), sorted. NOT_FOUND when the directory does not exist, NO_PERMISSION, else
  // UNAVAILABLE (out of descriptors).
  static Result<std::set<std::string>> BoundDevices(const std::string& dir);

  struct Change {
    std::set<std::string> added, removed;
    bool driver_reloaded = false;  // the directory was gone (the nvidia module unloaded)
  };
  // `clock`: the polls' time (null: the real clock; a test passes a FakeClock).
  GpuBindingWatch(std::string dir, std::chrono::milliseconds period,
                  std::function<void()> on_change, util::Clock* clock = nullptr);
  ~GpuBindingWatch();  // Stop()
  GpuBindingWatch(const GpuBindingWatch&) = delete;
  GpuBindingWatch& operator=(const GpuBindingWatch&) = delete;

  // Reads the directory (the baseline) and starts polling. An unreadable directory is an error
  // and nothing polls (the caller logs it: the watch is then off).
  Status Start() NVMLX_EXCLUDES(mu_);
  void Stop();
  // What differed from the baseline when on_change was called (empty sets before).
  Change Changes() const NVMLX_EXCLUDES(mu_);
  const std::string& directory() const { return dir_; }

 private:
  void Poll() NVMLX_EXCLUDES(mu_);

  const std::string dir_;
  const std::chrono::milliseconds period_;
  const std::function<void()> on_change_;
  util::Clock* const clock_;
  mutable util::Mutex mu_;
  std::set<std::string> baseline_ NVMLX_GUARDED_BY(mu_);
  // A differing set seen once, waiting for the next poll to confirm it.
  std::optional<std::set<std::string>> pending_ NVMLX_GUARDED_BY(mu_);
  bool fired_ NVMLX_GUARDED_BY(mu_) = false;        // on_change called (once per watch)
  bool read_failed_ NVMLX_GUARDED_BY(mu_) = false;  // logged once per streak
  bool driver_gone_ NVMLX_GUARDED_BY(mu_) = false;  // the directory vanished since Start
  Change change_ NVMLX_GUARDED_BY(mu_);
  std::unique_ptr<util::PeriodicWorker> worker_;
};

// Replaces the process image with a fresh run of the same binary and arguments
// (/proc/self/exe, `argv`), same pid, same environment: how the daemon enumerates the GPUs again
// after a bind or unbind. Every descriptor from 3 up is closed on the way (close_range's
// CLOSE_RANGE_CLOEXEC, else each of /proc/self/fd), so nothing of the old process (a socket, a
// device file of a library never shut down) reaches the new one; `mask` becomes the signal mask
// again (a stop signal pending since then ends the process, as it should). Returns only when
// execv failed, with why.
Status ReExecute(char** argv, const sigset_t& mask);

}  // namespace nvmlx::app

#endif  // NVML_EXPORTER_APP_GPU_BINDING_WATCH_H_
