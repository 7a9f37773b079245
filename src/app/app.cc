#include "app/app.h"

#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "app/daemon.h"
#include "app/gpu_binding_watch.h"
#include "app/stop_deadline.h"
#include "app/version.h"
#include "config/exit_code.h"
#include "config/option_flags.h"
#include "config/options.h"
#include "nvml/call_site.h"
#include "serve/http_server.h"
#include "util/log.h"
#include "util/resident_pages.h"

namespace nvmlx::app {
namespace {

std::optional<std::string> GetEnv(std::string_view name) {
  const char* v = std::getenv(std::string(name).c_str());
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

// The simulated libnvidia-ml.so.1: next to the binary in a bundle or install, else in the build
// tree this binary came from.
std::string FindSimulator(const char* argv0) {
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) exe = argv0;
  const std::filesystem::path dir = exe.parent_path();
  for (const auto& candidate :
       {dir / "simgpu" / "libnvidia-ml.so.1", dir / ".." / "lib" / "simgpu" / "libnvidia-ml.so.1",
        std::filesystem::path(NVMLX_SIMGPU_BUILD_PATH)}) {
    if (std::filesystem::exists(candidate, ec)) return candidate.lexically_normal().string();
  }
  return NVMLX_SIMGPU_BUILD_PATH;
}

// The NVML library to load; with --fake-gpus the simulator, told its scenario through the
// environment (it reads NVMLX_SIMGPU_SCENARIO when it is loaded).
std::string NvmlLibrary(const config::Options& opts, const char* argv0) {
  if (!opts.fake_gpus) return opts.nvml_library;
  if (!opts.fake_gpus_scenario.empty()) {
    setenv("NVMLX_SIMGPU_SCENARIO", opts.fake_gpus_scenario.c_str(), 1);
  }
  return FindSimulator(argv0);
}

// The CUPTI library to load; with --fake-gpus the simulated one built beside the simulated NVML
// (tools/simgpu), unless --cupti-library names another.
std::string CuptiLibrary(const config::Options& opts, const std::string& nvml_library) {
  if (!opts.fake_gpus || opts.cupti_library != "libcupti.so.13") return opts.cupti_library;
  return (std::filesystem::path(nvml_library).parent_path() / "libcupti.so.13").string();
}

// Writes out what the log and stdio still buffer: before _exit and before execv, which both
// drop it.
void FlushOutputs() {
  spdlog::default_logger()->flush();
  std::fflush(stdout);
  std::fflush(stderr);
}

// Leaves the process now, without destructors or atexit handlers: threads stuck inside NVML
// still use the objects a normal exit would destroy, and the driver's own exit path may wait for
// them. Only taken when something is stuck (a clean stop returns from Run instead, so the
// sanitizers' leak check runs there).
[[noreturn]] void ExitLeavingStuckThreads(int code) {
  FlushOutputs();
  _exit(code);
}

const char* SignalName(int sig) {
  switch (sig) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    case SIGUSR1:
      return "SIGUSR1";
    case SIGUSR2:
      return "SIGUSR2";
    default:
      return "signal";
  }
}

// The start-up (collectors file, NVML, GPU enumeration, first collection, listen), on its own
// thread, so that the main thread answers SIGINT/SIGTERM from the first moment whatever it blocks
// on (a FIFO as the collectors file, a driver call that never returns). The main thread reads the
// results after join().
struct Startup {
  nvml::CallSite site;  // where in NVML the start-up thread is
  std::atomic<bool> done{false};
  // Written by the start-up thread before `done`; read by the main thread after join().
  std::unique_ptr<Daemon> daemon;
  int exit_code = 0;
  std::string once_body;
};

void RunStartup(const config::Options& opts, const Daemon::Environment& env, Startup* out) {
  nvml::TrackCallsOnThisThread(&out->site);
  Result<std::unique_ptr<Daemon>> daemon = Daemon::Create(opts, env);
  if (!daemon.ok()) {
    // The Daemon reports its own failures (stderr line, log entry); we only map them.
    out->exit_code = config::ToInt(config::ExitCodeFor(daemon.status()));
  } else if (opts.once) {
    out->once_body = (*daemon)->RenderOnce();
    out->daemon = std::move(*daemon);
  } else if (Status st = (*daemon)->Start(); !st.ok()) {
    out->exit_code = config::ToInt(config::ExitCodeFor(st));
  } else {
    out->daemon = std::move(*daemon);
  }
  nvml::TrackCallsOnThisThread(nullptr);
  out->done.store(true);
}

// How long a stop may wait for the parts (the server, reads in progress): Kubernetes gives 30 s,
// our promise is 2 s in all; a read still running after this is stuck, not about to finish.
constexpr std::chrono::milliseconds kStopBudget{1000};
// How long a stop signal during start-up waits for the start-up to finish on its own.
constexpr std::chrono::milliseconds kStartupGrace{500};

// Stops the daemon, waiting at most kStopBudget. False when NVML calls are still in progress
// after it: each is logged, and the caller must not destroy the daemon (its threads still use it).
bool StopDaemon(Daemon* daemon) {
  // The net under every part's own deadline: whatever follows (the stop, the daemon's
  // destruction, a re-execution) ends within kStopHardLimit, naming the step that did not. Never
  // cancelled: a process that ends first takes the timer with it.
  (void)StartStopDeadline(kStopHardLimit,
                          [](const char* step) { ExitForStuckStop(step, kStopHardLimit); });
  if (daemon->StopUntil(std::chrono::steady_clock::now() + kStopBudget)) return true;
  for (const std::string& s : daemon->StuckCalls()) {
    log::Error("exiting with an NVML call still in progress", {{"stuck", s}});
  }
  return false;
}

// The end of every run that stops: the exit code of a clean stop, for Run to return (the daemon
// is destroyed on the way out); when a call is stuck, the process ends here instead, leaving the
// stuck threads behind. Either way the exit code is 0: a stop was asked for and happened.
int StopAndExit(Daemon* daemon) {
  if (!StopDaemon(daemon)) ExitLeavingStuckThreads(config::ToInt(config::ExitCode::kOk));
  return config::ToInt(config::ExitCode::kOk);
}

// The GPU bind/unbind watch's reset: the stopped daemon is destroyed (NVML shut down) when it
// could be, then the process re-executes itself. Exits (code 1) when it cannot: under
// --web-systemd-socket (the socket systemd passed is closed by the stop, and LISTEN_PID would
// need the same socket again: exit so that systemd restarts the service), or when execv fails.
[[noreturn]] void ReExecuteDaemon(char** argv, const sigset_t& mask, const config::Options& opts,
                                  std::unique_ptr<Daemon>* daemon) {
  if (daemon != nullptr) daemon->reset();
  if (opts.web_systemd_socket) {
    log::Error(
        "GPUs bound or unbound under --web-systemd-socket: exiting for systemd to restart the "
        "service (its socket cannot be carried into a new process image)");
    ExitLeavingStuckThreads(config::ToInt(config::ExitCode::kUnavailable));
  }
  FlushOutputs();
  Status st = ReExecute(argv, mask);
  log::Error("cannot re-execute; exiting for the supervisor to restart", {{"err", st.ToString()}});
  ExitLeavingStuckThreads(config::ToInt(config::ExitCode::kUnavailable));
}

// At most two malloc arenas, before any thread starts. glibc gives each thread that contends its
// own arena (up to 8 per core), and each keeps the pages its thread freed: with a fast and a slow
// reader per GPU, the loops and the io threads that is ~0.6 MiB of RSS on 8 GPUs
// (docs/benchmarks.md, "Resident memory"). Our threads allocate little and mostly from their
// per-thread cache, so two shared arenas cost no measurable contention. MALLOC_ARENA_MAX in the
// environment still decides when set.
void LimitMallocArenas() {
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, 2);
}

void StartLogging(const config::Options& opts) {
  log::Init(opts.log_format == config::LogFormat::kJson ? log::Format::kJson : log::Format::kText,
            opts.debug);
  // dcgm-exporter options without effect here: said once, at start (config/options_compat.cc).
  for (const config::Options::StartupWarning& w : opts.startup_warnings) {
    log::Warn(w.message, {{"option", w.option}});
  }
}

// False, with a line on stderr, when -a/--address cannot be listened on whatever happens later
// (not checked with --once or a systemd socket, which listen on nothing of their own).
bool ListenAddressUsable(const config::Options& opts) {
  if (opts.once || opts.web_systemd_socket) return true;
  Result<serve::ListenAddress> a = serve::ParseListenAddress(opts.address);
  if (a.ok()) return true;
  std::fprintf(stderr, "nvml-exporter: -a/--address: %s\n", a.status().message().c_str());
  return false;
}

// The signals only the main thread handles, by waiting for them: SIGINT/SIGTERM stop, SIGHUP
// reloads (as with dcgm-exporter), SIGUSR1 pauses PM sampling so that the GPU's counters become
// free for Nsight and SIGUSR2 resumes it (docs/pm-sampling.md §5; like `dcgmi profile --pause /
// --resume`), and reexec() is our own wake-up for a re-execution. Constructing it blocks them all
// in the calling thread, so that every thread started later (the start-up thread, the Daemon's)
// inherits the mask and only Wait() sees them.
//
// Thread-safety: the main thread's alone.
class MainSignals {
 public:
  MainSignals() {
    sigemptyset(&set_);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, reexec_}) sigaddset(&set_, sig);
    pthread_sigmask(SIG_BLOCK, &set_, &original_mask_);
    exec_mask_ = original_mask_;
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2}) sigaddset(&exec_mask_, sig);
  }
  MainSignals(const MainSignals&) = delete;
  MainSignals& operator=(const MainSignals&) = delete;

  // Waits for one of them, at most `timeout`; 0 when none came.
  int Wait(std::chrono::milliseconds timeout) const {
    timespec ts{static_cast<time_t>(timeout.count() / 1000),
                static_cast<long>((timeout.count() % 1000) * 1000000)};
    const int sig = sigtimedwait(&set_, nullptr, &ts);
    return sig > 0 ? sig : 0;
  }

  // Raised by the GPU bind/unbind watch when the set of bound GPUs changed, or by a reload that
  // needs what only a start builds.
  int reexec() const { return reexec_; }
  // The mask a re-executed process image starts with: the one before construction (main.cc
  // blocks these signals at exec already) with these signals still blocked, so that one sent
  // while the new image loads waits for its main thread instead of ending it.
  const sigset_t& exec_mask() const { return exec_mask_; }

 private:
  const int reexec_ = SIGRTMIN + 1;
  sigset_t set_;
  sigset_t original_mask_;
  sigset_t exec_mask_;
};

// A stop signal came during start-up: waits kStartupGrace for the start-up to finish, then stops
// what it started. Returns the exit code; leaves the process when the start-up is stuck.
int StopDuringStartup(Startup* startup, std::thread* starter) {
  const auto grace = std::chrono::steady_clock::now() + kStartupGrace;
  while (!startup->done.load() && std::chrono::steady_clock::now() < grace) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!startup->done.load()) {
    const char* call = startup->site.current();
    log::Error("start-up is stuck; exiting without waiting for it",
               {{"call", call != nullptr ? call : "(not inside NVML)"}});
    ExitLeavingStuckThreads(config::ToInt(config::ExitCode::kOk));
  }
  starter->join();
  if (startup->daemon == nullptr) return startup->exit_code;
  return StopAndExit(startup->daemon.get());
}

// Waits for the start-up thread, answering signals meanwhile: a stop signal ends the start-up
// even while NVML or the collectors file blocks it. Returns the exit code when one did; nullopt
// once the start-up finished (the thread joined, its results in *startup).
// An NVML call that has not returned after `warn_after` is logged once, naming it (hardening
// round two, row 5: a call hung from start-up used to say nothing until SIGTERM).
std::optional<int> AwaitStartup(const MainSignals& signals, Startup* startup, std::thread* starter,
                                std::chrono::milliseconds warn_after) {
  const char* watched = nullptr;  // the call the start-up was in at the last look
  auto watched_since = std::chrono::steady_clock::now();
  bool warned = false;
  while (!startup->done.load()) {
    const int sig = signals.Wait(std::chrono::milliseconds(100));
    const char* call = startup->site.current();
    const auto now = std::chrono::steady_clock::now();
    if (call != watched) {
      watched = call;
      watched_since = now;
    } else if (call != nullptr && !warned && now - watched_since >= warn_after) {
      warned = true;
      log::Error(
          "start-up is waiting on an NVML call that has not returned; the port opens once it "
          "does (SIGTERM still stops the daemon)",
          {{"call", call},
           {"waiting_ms", std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                             now - watched_since)
                                             .count())}});
    }
    if (sig == 0) continue;
    if (sig == SIGHUP || sig == SIGUSR1 || sig == SIGUSR2) {
      log::Info("signal during start-up: ignored", {{"signal", SignalName(sig)}});
      continue;
    }
    log::Info("shutting down during start-up", {{"signal", SignalName(sig)}});
    return StopDuringStartup(startup, starter);
  }
  starter->join();
  return std::nullopt;
}

// --once: the page the start-up rendered, then the stop.
int PrintOnce(const std::string& page, Daemon* daemon) {
  std::fwrite(page.data(), 1, page.size(), stdout);
  // Flush before the teardown (the Xid watcher's thread may take up to its wait timeout to
  // stop): a reader such as `| grep -q` must get the whole page before it goes away.
  std::fflush(stdout);
  // A GPU whose read is stuck was printed as stale; its reader must not hold up the exit.
  return StopAndExit(daemon);
}

// --enable-gpu-bind-unbind-watch: a GPU bound or unbound calls `on_change` (a re-execution). Null
// when the flag is off or the driver's directory cannot be read (then logged).
std::unique_ptr<GpuBindingWatch> StartBindingWatch(const config::Options& opts,
                                                   std::function<void()> on_change) {
  if (!opts.enable_gpu_bind_unbind_watch) return nullptr;
  // NVMLX_GPU_BIND_DIR: the directory to watch instead of the kernel's (tests).
  const std::string dir = GetEnv("NVMLX_GPU_BIND_DIR").value_or(GpuBindingWatch::kDefaultDirectory);
  auto watch = std::make_unique<GpuBindingWatch>(dir, opts.gpu_bind_unbind_poll_interval,
                                                 std::move(on_change));
  if (Status st = watch->Start(); !st.ok()) {
    log::Warn("GPU bind/unbind watch off: the nvidia driver's directory cannot be read",
              {{"err", st.ToString()}});
    return nullptr;
  }
  return watch;
}

// When start-up is over: the first collections are published and PM sampling, where a GPU uses
// it, has configured each of its configurations once (the default dwell is 10 s).
// NVMLX_START_UP_OVER_MS sets it for tests (integration_resident_pages_test).
std::chrono::milliseconds StartUpOver() {
  const std::optional<std::string> ms = GetEnv("NVMLX_START_UP_OVER_MS");
  const std::optional<long long> v = ms ? config::flags::ParseDecimal(*ms) : std::nullopt;
  if (v && *v >= 0 && *v < 100000000) return std::chrono::milliseconds(*v);
  return std::chrono::seconds(30);
}

// Start-up's code and read-only data stop counting in the RSS (util/resident_pages.h): the
// pages stay in the page cache, and what the steady state runs is mapped back as it runs.
void ReleaseStartUpPages() {
  const util::ReleasedPages r = util::ReleaseReadOnlyImagePages();
  log::Debug("start-up's read-only pages released",
             {{"objects", std::to_string(r.objects)},
              {"segments", std::to_string(r.segments)},
              {"skipped", std::to_string(r.skipped)},
              {"mib", std::to_string(r.bytes >> 20)}});
}

// Answers signals until one stops the daemon (false) or asks for a re-execution (true).
bool ServeUntilStopOrReexec(const MainSignals& signals, Daemon* daemon) {
  using std::chrono::milliseconds;
  std::optional<std::chrono::steady_clock::time_point> release_at =
      std::chrono::steady_clock::now() + StartUpOver();
  for (;;) {
    // Nothing else to do here: a long wait, so that an idle daemon's main thread does not wake
    // every second for nothing; until start-up's pages are released, at most until then.
    milliseconds wait = std::chrono::hours(1);
    if (release_at) {
      wait = std::max(milliseconds(0), std::chrono::duration_cast<milliseconds>(
                                           *release_at - std::chrono::steady_clock::now()));
    }
    const int sig = signals.Wait(wait);
    if (release_at && std::chrono::steady_clock::now() >= *release_at) {
      ReleaseStartUpPages();
      release_at.reset();
    }
    if (sig == 0) continue;
    if (sig == signals.reexec()) {
      log::Warn("re-executing the daemon: its GPUs or fields changed beyond what a reload applies");
      return true;
    }
    if (sig == SIGHUP) {
      daemon->Reload("SIGHUP");
      continue;
    }
    if (sig == SIGUSR1 || sig == SIGUSR2) {
      daemon->SetProfilingPaused(sig == SIGUSR1);
      continue;
    }
    log::Info("shutting down", {{"signal", SignalName(sig)}});
    return false;
  }
}

// The started daemon until a stop signal (then Run returns the exit code) or a re-execution (then
// the process image is replaced, or the process exits when it cannot be).
int Serve(char** argv, const config::Options& opts, const MainSignals& signals,
          std::unique_ptr<Daemon>* daemon) {
  // A GPU bound or unbound makes the daemon re-execute itself, so that NVML enumerates the GPUs
  // afresh (dcgm-exporter re-initialises DCGM in-process; a new process image is the reset that
  // leaves nothing of the old NVML session behind). A reload that needs what only a start builds
  // (the Xid watcher) re-executes the same way.
  const auto request_reexec = [reexec = signals.reexec()] { kill(getpid(), reexec); };
  (*daemon)->SetRestartHandler(request_reexec);
  std::unique_ptr<GpuBindingWatch> watch = StartBindingWatch(opts, request_reexec);
  const bool reexecute = ServeUntilStopOrReexec(signals, daemon->get());
  watch.reset();
  if (!reexecute) return StopAndExit(daemon->get());
  const bool stopped = StopDaemon(daemon->get());
  ReExecuteDaemon(argv, signals.exec_mask(), opts, stopped ? daemon : nullptr);
}

}  // namespace

int Run(int argc, char** argv) {
  // Before the first thread starts (every thread inherits the mask) and before anything that can
  // take time (the config file, logging): a signal sent now waits for the main thread.
  const MainSignals signals;
  LimitMallocArenas();
  Result<config::Options> parsed = config::ParseOptions(argc, argv, GetEnv);
  if (!parsed.ok()) {
    std::fprintf(stderr, "nvml-exporter: %s\n", parsed.status().message().c_str());
    return config::ToInt(config::ExitCodeFor(parsed.status()));
  }
  const config::Options& opts = *parsed;
  if (opts.help_or_version_requested) {
    std::fputs(opts.help_text.c_str(), stdout);
    return config::ToInt(opts.exit_code_hint);
  }
  StartLogging(opts);
  // A listen address that can never work fails now, as a bad flag (exit 2), not after NVML is
  // loaded and the first collection ran.
  if (!ListenAddressUsable(opts)) return config::ToInt(config::ExitCode::kUsage);

  const std::string nvml_library = NvmlLibrary(opts, argv[0]);
  const Daemon::Environment env{nvml_library, CuptiLibrary(opts, nvml_library), GetEnv};
  Startup startup;
  std::thread starter([&opts, &env, &startup] { RunStartup(opts, env, &startup); });
  // Logged within the collector's read deadline (half the interval, 1 to 5 s).
  const auto warn_after =
      std::clamp<std::chrono::milliseconds>(std::chrono::milliseconds(opts.collect_interval_ms / 2),
                                            std::chrono::seconds(1), std::chrono::seconds(5));
  if (std::optional<int> code = AwaitStartup(signals, &startup, &starter, warn_after)) {
    return *code;
  }
  if (startup.daemon == nullptr) return startup.exit_code;
  if (opts.once) return PrintOnce(startup.once_body, startup.daemon.get());
  return Serve(argv, opts, signals, &startup.daemon);
}

}  // namespace nvmlx::app
