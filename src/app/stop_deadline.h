// The stop's upper bound (hardening round three, row 1): once a stop signal is taken, the process
// ends within kStopHardLimit whatever happens, with a log line naming the part of the daemon it
// was stopping, instead of a pod that only SIGKILL ends (a deadlock in any part used to make
// SIGTERM wait for ever). Each part has its own deadline (the server's drain, the collector's
// read budget, the EMF drain): this is the net under them for the bug nobody has found yet.
//
// The step being stopped is process-wide (NoteStopStep, a string literal): the deadline's timer
// must outlive whatever object it watches, so it reads nothing but that and its own state.
//
// Thread-safety: every function may be called from any thread.
#ifndef NVML_EXPORTER_APP_STOP_DEADLINE_H_
#define NVML_EXPORTER_APP_STOP_DEADLINE_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>

namespace nvmlx::app {

// Normal stops take 1-2 s (server drain 0.8 s, collector 1 s, EMF drain at least 0.3 s, in that
// order; docs/faults.md); Kubernetes sends SIGKILL after 30 s. 10 s leaves room for a slow
// (sanitized, loaded) stop and still ends well before the kubelet gives up.
inline constexpr std::chrono::seconds kStopHardLimit{10};

// Names the step of a stop in progress (Daemon::StopUntil: "HTTP server", "collector", ...).
// `step` must be a string literal (it is read after any object is gone).
void NoteStopStep(const char* step);
// The last step noted; "" before any.
const char* CurrentStopStep();

// Starts a detached timer: unless the returned flag is set first, `on_expire` runs on the timer's
// thread `limit` from now with the step then in progress. The timer holds what it reads, so the
// caller may let the flag go; a process that ends first takes the timer with it.
std::shared_ptr<std::atomic<bool>> StartStopDeadline(
    std::chrono::milliseconds limit, std::function<void(const char* step)> on_expire);

// What app::Run's deadline does when it expires: an error naming the step, written to stderr
// directly and to the log (the logger may be what is stuck: SIGALRM ends the process 2 s later
// if the log never returns), then _exit(1): not 0, the stop did not happen as it should.
[[noreturn]] void ExitForStuckStop(const char* step, std::chrono::milliseconds limit);

}  // namespace nvmlx::app

#endif  // NVML_EXPORTER_APP_STOP_DEADLINE_H_
