#include "options.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <sstream>

#include "util/go_duration.h"

namespace gpu_pulse {

std::string_view ModeName(Mode mode) {
  switch (mode) {
    case Mode::kFp32:
      return "fp32";
    case Mode::kFp64:
      return "fp64";
    case Mode::kTensor:
      return "tensor";
    case Mode::kMemory:
      return "memory";
  }
  return "?";
}

std::optional<Mode> ParseMode(std::string_view text) {
  for (Mode m : {Mode::kFp32, Mode::kFp64, Mode::kTensor, Mode::kMemory}) {
    if (text == ModeName(m)) return m;
  }
  return std::nullopt;
}

std::optional<std::chrono::nanoseconds> ParseDuration(std::string_view text) {
  // The daemon's parser; gpu-pulse has no use for negative durations.
  nvmlx::Result<std::chrono::nanoseconds> d = nvmlx::ParseGoDuration(text);
  if (!d.ok() || d->count() < 0) return std::nullopt;
  return *d;
}

std::optional<std::vector<int>> ParseGpuList(std::string_view text) {
  if (text == "all") return std::vector<int>{};
  std::vector<int> out;
  std::set<int> seen;
  while (true) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    int value = 0;
    auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size() || value < 0 ||
        !seen.insert(value).second) {
      return std::nullopt;
    }
    out.push_back(value);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

std::string UsageText() {
  return R"(Usage: gpu-pulse [options]

Loads GPUs in an on/off duty cycle so that utilisation, power and profiling metrics move.

  --on DURATION        length of each loaded phase (default 20s)
  --off DURATION       length of each idle phase (default 20s; 0 = always loaded)
  --duration DURATION  total run time (default 5m; 0 = until SIGINT/SIGTERM)
  --gpus LIST          CUDA device indices, e.g. 0,1, or "all" (default 0)
  --mode MODE          fp32 | fp64 | tensor | memory (default fp32)
  --kernel-ms N        target wall time of one kernel batch, 1..1000 ms (default 25)
  --memory-gib X       device memory streamed in memory mode, 0.01..64 GiB (default 3)
  -h, --help           show this help

Durations use Go syntax: 500ms, 20s, 5m, 1h30m.
Status line on stderr once per second; one summary line per GPU and phase on stdout:
  phase=on gpu=0 index=0 start=<unix s> end=<unix s> kernels=N tflops=X
Exit status: 0 done or signalled, 1 CUDA error, 2 usage error or no CUDA device,
3 result mismatch (the GPU computed a wrong answer).
)";
}

std::string FormatDuration(std::chrono::nanoseconds d) {
  using namespace std::chrono;
  if (d == nanoseconds(0)) return "0s";
  std::ostringstream out;
  if (d < seconds(1)) {
    if (d % milliseconds(1) == nanoseconds(0)) {
      out << duration_cast<milliseconds>(d).count() << "ms";
    } else {
      out << d.count() << "ns";
    }
    return out.str();
  }
  auto h = duration_cast<hours>(d);
  d -= h;
  auto m = duration_cast<minutes>(d);
  d -= m;
  if (h.count() > 0) out << h.count() << "h";
  if (h.count() > 0 || m.count() > 0) out << m.count() << "m";
  double s = duration<double>(d).count();
  out << s << "s";
  return out.str();
}

namespace {

// Matches "--name value" or "--name=value"; advances i past the value.
bool TakeValue(std::string_view arg, std::string_view name, int argc, const char* const* argv,
               int& i, std::string_view& value, std::string& error) {
  if (arg == name) {
    if (i + 1 >= argc) {
      error = std::string(name) + " needs a value";
      return true;
    }
    value = argv[++i];
    return true;
  }
  if (arg.size() > name.size() && arg.substr(0, name.size()) == name && arg[name.size()] == '=') {
    value = arg.substr(name.size() + 1);
    return true;
  }
  return false;
}

}  // namespace

ParseResult ParseOptions(int argc, const char* const* argv) {
  ParseResult r;
  Options& o = r.options;
  auto duration_flag = [&](std::string_view name, std::string_view value,
                           std::chrono::nanoseconds& out) {
    auto d = ParseDuration(value);
    if (!d) {
      r.error = "invalid duration for " + std::string(name) + ": '" + std::string(value) +
                "' (use e.g. 500ms, 20s, 5m, 1h)";
      return;
    }
    out = *d;
  };
  for (int i = 1; i < argc && r.error.empty(); ++i) {
    std::string_view arg = argv[i];
    std::string_view value;
    if (arg == "-h" || arg == "--help") {
      r.help = true;
      return r;
    } else if (TakeValue(arg, "--on", argc, argv, i, value, r.error)) {
      if (r.error.empty()) duration_flag("--on", value, o.on);
    } else if (TakeValue(arg, "--off", argc, argv, i, value, r.error)) {
      if (r.error.empty()) duration_flag("--off", value, o.off);
    } else if (TakeValue(arg, "--duration", argc, argv, i, value, r.error)) {
      if (r.error.empty()) duration_flag("--duration", value, o.duration);
    } else if (TakeValue(arg, "--gpus", argc, argv, i, value, r.error)) {
      if (!r.error.empty()) break;
      auto gpus = ParseGpuList(value);
      if (!gpus) {
        r.error = "invalid --gpus '" + std::string(value) +
                  "' (comma-separated distinct device indices, or all)";
      } else {
        o.gpus = *gpus;
      }
    } else if (TakeValue(arg, "--mode", argc, argv, i, value, r.error)) {
      if (!r.error.empty()) break;
      auto mode = ParseMode(value);
      if (!mode) {
        r.error = "invalid --mode '" + std::string(value) + "' (fp32, fp64, tensor or memory)";
      } else {
        o.mode = *mode;
      }
    } else if (TakeValue(arg, "--kernel-ms", argc, argv, i, value, r.error)) {
      if (!r.error.empty()) break;
      int ms = 0;
      auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), ms);
      if (ec != std::errc() || ptr != value.data() + value.size() || ms < 1 || ms > 1000) {
        r.error = "invalid --kernel-ms '" + std::string(value) + "' (1..1000)";
      } else {
        o.kernel_time = std::chrono::milliseconds(ms);
      }
    } else if (TakeValue(arg, "--memory-gib", argc, argv, i, value, r.error)) {
      if (!r.error.empty()) break;
      std::string s(value);
      char* end = nullptr;
      double gib = std::strtod(s.c_str(), &end);
      if (s.empty() || end != s.c_str() + s.size() || !(gib >= 0.01 && gib <= 64)) {
        r.error = "invalid --memory-gib '" + s + "' (0.01..64)";
      } else {
        o.memory_gib = gib;
      }
    } else {
      r.error = "unknown argument '" + std::string(arg) + "'";
    }
  }
  if (r.error.empty() && o.on <= std::chrono::nanoseconds(0)) {
    r.error = "--on must be greater than 0";
  }
  return r;
}

}  // namespace gpu_pulse
