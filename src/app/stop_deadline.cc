#include "app/stop_deadline.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <string>
#include <thread>

#include "config/exit_code.h"
#include "util/log.h"

namespace nvmlx::app {
namespace {

std::atomic<const char*> g_step{""};

}  // namespace

void NoteStopStep(const char* step) { g_step.store(step, std::memory_order_relaxed); }

const char* CurrentStopStep() { return g_step.load(std::memory_order_relaxed); }

std::shared_ptr<std::atomic<bool>> StartStopDeadline(
    std::chrono::milliseconds limit, std::function<void(const char* step)> on_expire) {
  auto cancelled = std::make_shared<std::atomic<bool>>(false);
  const auto deadline = std::chrono::steady_clock::now() + limit;
  // Detached: joining it would make the stop wait for the very timer that bounds it. It sleeps in
  // short steps so that a cancelled timer ends soon, not `limit` later.
  std::thread([cancelled, deadline, on_expire = std::move(on_expire)] {
    while (std::chrono::steady_clock::now() < deadline) {
      if (cancelled->load()) return;
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
          std::chrono::milliseconds(50), deadline - std::chrono::steady_clock::now()));
    }
    if (!cancelled->load()) on_expire(CurrentStopStep());
  }).detach();
  return cancelled;
}

void ExitForStuckStop(const char* step, std::chrono::milliseconds limit) {
  // The backstop first: SIGALRM's default action ends the process should the lines below hang
  // (app::Run blocks only the signals it waits for, not SIGALRM).
  signal(SIGALRM, SIG_DFL);
  alarm(2);
  char line[256];
  const int n = std::snprintf(line, sizeof(line),
                              "nvml-exporter: the stop did not finish within %lld ms; exiting "
                              "anyway (stuck in: %s)\n",
                              static_cast<long long>(limit.count()), *step ? step : "unknown");
  if (n > 0) (void)!::write(STDERR_FILENO, line, static_cast<size_t>(n));
  log::Error("the stop did not finish within its limit; exiting anyway",
             {{"stuck_in", *step ? step : "unknown"}, {"limit_ms", std::to_string(limit.count())}});
  spdlog::default_logger()->flush();
  _exit(config::ToInt(config::ExitCode::kUnavailable));
}

}  // namespace nvmlx::app
