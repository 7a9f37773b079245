// Command-line options of gpu-pulse. Host-only (no CUDA) so that parsing is unit-tested in CI
// on machines without nvcc or a GPU.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpu_pulse {

enum class Mode { kFp32, kFp64, kTensor, kMemory };

std::string_view ModeName(Mode mode);
std::optional<Mode> ParseMode(std::string_view text);

struct Options {
  std::chrono::nanoseconds on = std::chrono::seconds(20);
  std::chrono::nanoseconds off = std::chrono::seconds(20);
  // Zero: run until SIGINT/SIGTERM.
  std::chrono::nanoseconds duration = std::chrono::minutes(5);
  // Empty: every visible device ("--gpus all").
  std::vector<int> gpus = {0};
  Mode mode = Mode::kFp32;
  // Wall time one batch of kernels should take; short enough to stop promptly, long enough that
  // launch overhead does not leave the GPU idle between batches.
  std::chrono::milliseconds kernel_time = std::chrono::milliseconds(25);
  // Device memory the memory mode streams through (three arrays together).
  double memory_gib = 3.0;
};

struct ParseResult {
  Options options;
  bool help = false;
  std::string error;  // Non-empty: usage error, exit status 2.
};

// Go time.ParseDuration syntax: "300ms", "1.5h", "2h45m", "0". Units ns, us (µs), ms, s, m, h.
// Negative durations are rejected (they mean nothing for a schedule).
std::optional<std::chrono::nanoseconds> ParseDuration(std::string_view text);

// "0,1,3" (no duplicates) or "all" (empty vector).
std::optional<std::vector<int>> ParseGpuList(std::string_view text);

// argv[0] is skipped. Accepts "--flag value" and "--flag=value".
ParseResult ParseOptions(int argc, const char* const* argv);

std::string UsageText();

// Go-style rendering ("20s", "1m30s", "500ms") for messages.
std::string FormatDuration(std::chrono::nanoseconds d);

}  // namespace gpu_pulse
