#include "app/app.h"

#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "app/daemon.h"
#include "app/gpu_binding_watch.h"
#include "app/version.h"
#include "config/exit_code.h"
#include "config/options.h"
#include "nvml/call_site.h"
#include "serve/http_server.h"
#include "util/log.h"

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

// Leaves the process now, without destructors or atexit handlers: threads stuck inside NVML
// still use the objects a normal exit would destroy, and the driver's own exit path may wait for
// them. Only taken when something is stuck (a clean stop returns from Run instead, so the
// sanitizers' leak check runs there).
// Writes out what the log and stdio still buffer: before _exit and before execv, which both
// drop it.
void FlushOutputs() {
  spdlog::default_logger()->flush();
  std::fflush(stdout);
  std::fflush(stderr);
}

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

}  // namespace

int Run(int argc, char** argv) {
  // At most two malloc arenas, before any thread starts. glibc gives each thread that contends
  // its own arena (up to 8 per core), and each keeps the pages its thread freed: with a fast and
  // a slow reader per GPU, the loops and the io threads that is ~0.6 MiB of RSS on 8 GPUs
  // (docs/benchmarks.md, "Resident memory"). Our threads allocate little and mostly from their
  // per-thread cache, so two shared arenas cost no measurable contention. MALLOC_ARENA_MAX in
  // the environment still decides when set.
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, 2);
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
  log::Init(opts.log_format == config::LogFormat::kJson ? log::Format::kJson : log::Format::kText,
            opts.debug);
  // dcgm-exporter options without effect here: said once, at start (config/options_compat.cc).
  for (const config::Options::StartupWarning& w : opts.startup_warnings) {
    log::Warn(w.message, {{"option", w.option}});
  }

  // A listen address that can never work fails now, as a bad flag (exit 2), not after NVML is
  // loaded and the first collection ran.
  if (!opts.once && !opts.web_systemd_socket) {
    if (Result<serve::ListenAddress> a = serve::ParseListenAddress(opts.address); !a.ok()) {
      std::fprintf(stderr, "nvml-exporter: -a/--address: %s\n", a.status().message().c_str());
      return config::ToInt(config::ExitCode::kUsage);
    }
  }

  // Only our sigtimedwait() below sees SIGINT/SIGTERM/SIGHUP: every thread started later (the
  // start-up thread, the Daemon's) inherits the mask. SIGHUP reloads, as with dcgm-exporter.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);
  // SIGUSR1 pauses PM sampling (the GPU's counters become free for Nsight), SIGUSR2 resumes it
  // (docs/pm-sampling.md §5); like `dcgmi profile --pause / --resume`.
  sigaddset(&signals, SIGUSR1);
  sigaddset(&signals, SIGUSR2);
  // Our own wake-up for a re-execution: the GPU bind/unbind watch saw the set of bound GPUs
  // change, or a reload needs what only a start builds.
  const int reexec_requested = SIGRTMIN + 1;
  sigaddset(&signals, reexec_requested);
  sigset_t original_mask;
  pthread_sigmask(SIG_BLOCK, &signals, &original_mask);

  const std::string nvml_library = NvmlLibrary(opts, argv[0]);
  const Daemon::Environment env{nvml_library, CuptiLibrary(opts, nvml_library), GetEnv};
  Startup startup;
  std::thread starter([&opts, &env, &startup] { RunStartup(opts, env, &startup); });
  // Waits for a signal, at most `timeout`; 0 when none came.
  auto wait_signal = [&signals](std::chrono::milliseconds timeout) {
    timespec ts{static_cast<time_t>(timeout.count() / 1000),
                static_cast<long>((timeout.count() % 1000) * 1000000)};
    const int sig = sigtimedwait(&signals, nullptr, &ts);
    return sig > 0 ? sig : 0;
  };

  // Start-up: a stop signal ends it even while NVML or the collectors file blocks it.
  while (!startup.done.load()) {
    const int sig = wait_signal(std::chrono::milliseconds(100));
    if (sig == 0) continue;
    if (sig == SIGHUP || sig == SIGUSR1 || sig == SIGUSR2) {
      log::Info("signal during start-up: ignored", {{"signal", SignalName(sig)}});
      continue;
    }
    log::Info("shutting down during start-up", {{"signal", SignalName(sig)}});
    const auto grace = std::chrono::steady_clock::now() + kStartupGrace;
    while (!startup.done.load() && std::chrono::steady_clock::now() < grace) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!startup.done.load()) {
      const char* call = startup.site.current();
      log::Error("start-up is stuck; exiting without waiting for it",
                 {{"call", call != nullptr ? call : "(not inside NVML)"}});
      ExitLeavingStuckThreads(config::ToInt(config::ExitCode::kOk));
    }
    starter.join();
    if (startup.daemon == nullptr) return startup.exit_code;
    if (!startup.daemon->StopUntil(std::chrono::steady_clock::now() + kStopBudget)) {
      for (const std::string& s : startup.daemon->StuckCalls()) {
        log::Error("exiting with an NVML call still in progress", {{"stuck", s}});
      }
      ExitLeavingStuckThreads(config::ToInt(config::ExitCode::kOk));
    }
    return config::ToInt(config::ExitCode::kOk);
  }
  starter.join();
  if (startup.daemon == nullptr) return startup.exit_code;
  std::unique_ptr<Daemon>& daemon = startup.daemon;

  if (opts.once) {
    std::fwrite(startup.once_body.data(), 1, startup.once_body.size(), stdout);
    // Flush before the teardown (the Xid watcher's thread may take up to its wait timeout to
    // stop): a reader such as `| grep -q` must get the whole page before it goes away.
    std::fflush(stdout);
    // A GPU whose read is stuck was printed as stale; its reader must not hold up the exit.
    if (!daemon->StopUntil(std::chrono::steady_clock::now() + kStopBudget)) {
      for (const std::string& s : daemon->StuckCalls()) {
        log::Error("exiting with an NVML call still in progress", {{"stuck", s}});
      }
      ExitLeavingStuckThreads(config::ToInt(config::ExitCode::kOk));
    }
    return config::ToInt(config::ExitCode::kOk);
  }

  // --enable-gpu-bind-unbind-watch: a GPU bound or unbound makes the daemon re-execute itself,
  // so that NVML enumerates the GPUs afresh (dcgm-exporter re-initialises DCGM in-process; a new
  // process image is the reset that leaves nothing of the old NVML session behind).
  // A reload that needs what only a start builds (the Xid watcher) re-executes the same way.
  const auto request_reexec = [reexec_requested] { kill(getpid(), reexec_requested); };
  daemon->SetRestartHandler(request_reexec);
  std::unique_ptr<GpuBindingWatch> watch;
  if (opts.enable_gpu_bind_unbind_watch) {
    // NVMLX_GPU_BIND_DIR: the directory to watch instead of the kernel's (tests).
    const std::string dir =
        GetEnv("NVMLX_GPU_BIND_DIR").value_or(GpuBindingWatch::kDefaultDirectory);
    watch =
        std::make_unique<GpuBindingWatch>(dir, opts.gpu_bind_unbind_poll_interval, request_reexec);
    if (Status st = watch->Start(); !st.ok()) {
      log::Warn("GPU bind/unbind watch off: the nvidia driver's directory cannot be read",
                {{"err", st.ToString()}});
      watch.reset();
    }
  }
  bool reexecute = false;
  for (;;) {
    // Nothing else to do here: a long wait, so that an idle daemon's main thread does not wake
    // every second for nothing.
    const int sig = wait_signal(std::chrono::hours(1));
    if (sig == 0) continue;
    if (sig == reexec_requested) {
      log::Warn("re-executing the daemon: its GPUs or fields changed beyond what a reload applies");
      reexecute = true;
      break;
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
    break;
  }
  watch.reset();
  const bool stopped = daemon->StopUntil(std::chrono::steady_clock::now() + kStopBudget);
  if (!stopped) {
    for (const std::string& s : daemon->StuckCalls()) {
      log::Error("exiting with an NVML call still in progress", {{"stuck", s}});
    }
    if (!reexecute) ExitLeavingStuckThreads(config::ToInt(config::ExitCode::kOk));
  }
  if (reexecute) ReExecuteDaemon(argv, original_mask, opts, stopped ? &daemon : nullptr);
  return config::ToInt(config::ExitCode::kOk);
}

}  // namespace nvmlx::app
