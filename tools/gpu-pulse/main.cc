// gpu-pulse: loads GPUs in an on/off duty cycle so that exporter metrics visibly move.
// Arguments are parsed before CUDA is touched, so --help and usage errors work without a GPU.

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kernels.h"
#include "options.h"
#include "schedule.h"

namespace gpu_pulse {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::nanoseconds;

constexpr int kExitCudaError = 1;
constexpr int kExitUsage = 2;
constexpr int kExitMismatch = 3;

// Lock-free, so setting it from a signal handler is safe.
std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void OnSignal(int) { g_stop.store(true); }

double UnixSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Serialises everything written to stdout/stderr so summaries and the status line don't
// interleave mid-line.
class Output {
 public:
  Output() : stderr_tty_(isatty(STDERR_FILENO) == 1), stdout_tty_(isatty(STDOUT_FILENO) == 1) {}

  void Summary(const std::string& line) {
    std::lock_guard lock(mu_);
    ClearStatus();
    std::fprintf(stdout, "%s\n", line.c_str());
    std::fflush(stdout);
  }

  // Errors go to stderr; when stdout is captured by a script they are repeated there so the
  // script sees them next to the phase lines.
  void Error(const std::string& line) {
    std::lock_guard lock(mu_);
    ClearStatus();
    std::fprintf(stderr, "%s\n", line.c_str());
    std::fflush(stderr);
    if (!stdout_tty_) {
      std::fprintf(stdout, "%s\n", line.c_str());
      std::fflush(stdout);
    }
  }

  // On a terminal the status line is redrawn in place; in a log it is one line per second.
  void Status(const std::string& line) {
    std::lock_guard lock(mu_);
    if (stderr_tty_) {
      std::fprintf(stderr, "\r\033[K%s", line.c_str());
      status_shown_ = true;
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
    std::fflush(stderr);
  }

  void Finish() {
    std::lock_guard lock(mu_);
    ClearStatus();
  }

 private:
  void ClearStatus() {
    if (status_shown_) {
      std::fprintf(stderr, "\r\033[K");
      std::fflush(stderr);
      status_shown_ = false;
    }
  }

  std::mutex mu_;
  bool stderr_tty_;
  bool stdout_tty_;
  bool status_shown_ = false;
};

// What a GPU thread shares with the status line.
struct GpuState {
  int device = 0;
  std::mutex mu;
  double work = 0;  // Cumulative flops or bytes.
  bool ready = false;
  bool failed = false;
  bool finished = false;
};

struct Run {
  Options options;
  Schedule schedule{std::chrono::seconds(1), nanoseconds(0), nanoseconds(0)};
  Output out;
  std::atomic<int> exit_code{0};
  std::atomic<bool> go{false};
  Clock::time_point t0;  // Written before `go` is set, read after.
  std::vector<std::unique_ptr<GpuState>> gpus;

  bool ShouldStop() const { return g_stop.load(); }
  void Fail(int code) {
    int prev = exit_code.load();
    while (prev < code && !exit_code.compare_exchange_weak(prev, code)) {
    }
    g_stop.store(true);  // One broken GPU ends the run for all: the result is already a failure.
  }
};

bool IsMemory(Mode m) { return m == Mode::kMemory; }

std::string RateText(Mode mode, double work, double seconds) {
  char buf[64];
  const double rate = seconds > 0 ? work / seconds : 0;
  if (IsMemory(mode)) {
    std::snprintf(buf, sizeof(buf), "%.1f GB/s", rate / 1e9);
  } else {
    std::snprintf(buf, sizeof(buf), "%.2f TFLOP/s", rate / 1e12);
  }
  return buf;
}

void PrintSummary(Run& run, int device, const Phase& phase, double start, double end,
                  long long kernels, double work, bool stopped) {
  char buf[320];
  const double secs = end - start;
  const double rate = secs > 0 ? work / secs : 0;
  const bool memory = IsMemory(run.options.mode);
  std::snprintf(
      buf, sizeof(buf),
      "phase=%s gpu=%d index=%lld mode=%s start=%.3f end=%.3f seconds=%.3f kernels=%lld "
      "%s=%.3f%s",
      std::string(PhaseName(phase.kind)).c_str(), device, static_cast<long long>(phase.index),
      std::string(ModeName(run.options.mode)).c_str(), start, end, secs, kernels,
      memory ? "gbps" : "tflops", memory ? rate / 1e9 : rate / 1e12, stopped ? " stopped=1" : "");
  run.out.Summary(buf);
}

void GpuThread(Run& run, GpuState& state) {
  const int device = state.device;
  std::string error;
  std::unique_ptr<DeviceLoad> load = CreateDeviceLoad(
      device, run.options.mode, std::chrono::duration<double>(run.options.kernel_time).count(),
      run.options.memory_gib, &error);
  {
    std::lock_guard lock(state.mu);
    state.ready = true;
    state.failed = load == nullptr;
  }
  if (load == nullptr) {
    run.out.Error("gpu=" + std::to_string(device) + " ERROR: CUDA setup: " + error);
    run.Fail(kExitCudaError);
    return;
  }
  run.out.Error("gpu=" + std::to_string(device) + " ready: " + load->Description());
  while (!run.go.load() && !run.ShouldStop()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }

  bool have_phase = false;
  Phase phase;
  double phase_start = 0;
  long long kernels = 0;
  double work = 0;
  auto end_phase = [&](bool stopped) {
    if (have_phase) {
      PrintSummary(run, device, phase, phase_start, UnixSeconds(), kernels, work, stopped);
    }
    have_phase = false;
  };

  while (!run.ShouldStop()) {
    const nanoseconds elapsed = Clock::now() - run.t0;
    if (run.schedule.Done(elapsed)) break;
    const Phase now = run.schedule.At(elapsed);
    if (!have_phase || !(now == phase)) {
      end_phase(false);
      phase = now;
      have_phase = true;
      phase_start = UnixSeconds();
      kernels = 0;
      work = 0;
    }
    if (phase.kind == PhaseKind::kOff) {
      // Sleep in short slices so a signal ends the run promptly.
      const auto until = run.t0 + phase.end;
      std::this_thread::sleep_until(std::min(until, Clock::now() + std::chrono::milliseconds(50)));
      continue;
    }
    BatchResult r = load->RunBatch();
    if (r.status != BatchStatus::kOk) {
      const bool mismatch = r.status == BatchStatus::kMismatch;
      run.out.Error("gpu=" + std::to_string(device) +
                    " ERROR: " + (mismatch ? "result mismatch: " : "CUDA: ") + r.message);
      end_phase(true);
      run.Fail(mismatch ? kExitMismatch : kExitCudaError);
      return;
    }
    kernels += r.kernels;
    work += r.work;
    std::lock_guard lock(state.mu);
    state.work += r.work;
  }
  end_phase(run.ShouldStop());
  load.reset();  // Frees device memory before the thread reports itself finished.
  std::lock_guard lock(state.mu);
  state.finished = true;
}

std::string Clock2(nanoseconds d) {
  const long long s = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%02lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
  return buf;
}

int Main(int argc, char** argv) {
  ParseResult parsed = ParseOptions(argc, argv);
  if (parsed.help) {
    std::fputs(UsageText().c_str(), stdout);
    return 0;
  }
  if (!parsed.error.empty()) {
    std::fprintf(stderr, "gpu-pulse: %s\nTry 'gpu-pulse --help'.\n", parsed.error.c_str());
    return kExitUsage;
  }
  Run run;
  run.options = parsed.options;
  const Options& o = run.options;
  run.schedule = Schedule(o.on, o.off, o.duration);

  std::string error;
  const int count = CudaDeviceCount(&error);
  if (count <= 0) {
    std::fprintf(stderr, "gpu-pulse: no CUDA device (%s)\n", error.c_str());
    return kExitUsage;
  }
  std::vector<int> devices = o.gpus;
  if (devices.empty()) {
    for (int i = 0; i < count; ++i) devices.push_back(i);
  }
  for (int d : devices) {
    if (d >= count) {
      std::fprintf(stderr, "gpu-pulse: no CUDA device %d (%d visible)\n", d, count);
      return kExitUsage;
    }
  }

  struct sigaction sa = {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  std::vector<std::thread> threads;
  for (int d : devices) {
    run.gpus.push_back(std::make_unique<GpuState>());
    run.gpus.back()->device = d;
  }
  for (auto& g : run.gpus) threads.emplace_back(GpuThread, std::ref(run), std::ref(*g));

  // Every GPU allocates and initialises first, so they all start their first "on" phase at the
  // same moment and the phase boundaries line up across GPUs.
  while (!run.ShouldStop()) {
    bool all = true;
    for (auto& g : run.gpus) {
      std::lock_guard lock(g->mu);
      all = all && g->ready;
    }
    if (all) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  run.t0 = Clock::now();
  run.go.store(true);
  {
    char buf[256];
    std::snprintf(buf, sizeof(buf), "gpu-pulse: mode=%s on=%s off=%s duration=%s gpus=%zu",
                  std::string(ModeName(o.mode)).c_str(), FormatDuration(o.on).c_str(),
                  FormatDuration(o.off).c_str(),
                  o.duration.count() == 0 ? "until-signal" : FormatDuration(o.duration).c_str(),
                  devices.size());
    run.out.Error(buf);
  }

  std::vector<double> last_work(run.gpus.size(), 0);
  auto last_tick = Clock::now();
  auto next_tick = last_tick + std::chrono::seconds(1);
  while (true) {
    bool all_done = true;
    for (auto& g : run.gpus) {
      std::lock_guard lock(g->mu);
      all_done = all_done && (g->finished || g->failed);
    }
    if (all_done || run.exit_code.load() != 0) break;
    const auto now = Clock::now();
    const nanoseconds elapsed = now - run.t0;
    if (run.schedule.Done(elapsed) || run.ShouldStop()) {
      // Threads notice on their own; keep polling until they finish their current batch.
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    if (now >= next_tick) {
      const double dt = std::chrono::duration<double>(now - last_tick).count();
      // The rates cover the last second, so label them with the phase in the middle of it.
      const Phase p = run.schedule.At(elapsed - (now - last_tick) / 2);
      std::string line = "[" + std::string(PhaseName(p.kind)) + " #" + std::to_string(p.index) +
                         "] " + Clock2(elapsed) +
                         (o.duration.count() ? "/" + Clock2(o.duration) : std::string()) + " " +
                         std::string(ModeName(o.mode));
      for (size_t i = 0; i < run.gpus.size(); ++i) {
        double w;
        {
          std::lock_guard lock(run.gpus[i]->mu);
          w = run.gpus[i]->work;
        }
        line += "  gpu" + std::to_string(run.gpus[i]->device) + " " +
                RateText(o.mode, w - last_work[i], dt);
        last_work[i] = w;
      }
      run.out.Status(line);
      last_tick = now;
      next_tick += std::chrono::seconds(1);
      if (next_tick < now) next_tick = now + std::chrono::seconds(1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (auto& t : threads) t.join();
  run.out.Finish();
  return run.exit_code.load();
}

}  // namespace
}  // namespace gpu_pulse

int main(int argc, char** argv) { return gpu_pulse::Main(argc, argv); }
