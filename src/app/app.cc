#include "app/app.h"

#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "app/daemon.h"
#include "app/version.h"
#include "config/exit_code.h"
#include "config/options.h"
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

}  // namespace

int Run(int argc, char** argv) {
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

  // Only our sigwait() below sees SIGINT/SIGTERM: every thread started later (the Daemon's, from
  // Create on) inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  // The Daemon reports its own failures (stderr line, log entry); we only map them.
  Result<std::unique_ptr<Daemon>> daemon =
      Daemon::Create(opts, {NvmlLibrary(opts, argv[0]), GetEnv});
  if (!daemon.ok()) return config::ToInt(config::ExitCodeFor(daemon.status()));

  if (opts.once) {
    const std::string body = (*daemon)->RenderOnce();
    std::fwrite(body.data(), 1, body.size(), stdout);
    // Flush before the teardown (the Xid watcher's thread may take up to its wait timeout to
    // stop): a reader such as `| grep -q` must get the whole page before it goes away.
    std::fflush(stdout);
    return config::ToInt(config::ExitCode::kOk);
  }

  if (Status st = (*daemon)->Start(); !st.ok()) return config::ToInt(config::ExitCodeFor(st));
  int sig = 0;
  sigwait(&signals, &sig);
  log::Info("shutting down", {{"signal", sig == SIGINT ? "SIGINT" : "SIGTERM"}});
  (*daemon)->Stop();
  return config::ToInt(config::ExitCode::kOk);
}

}  // namespace nvmlx::app
