#include "call.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

namespace nvmlx::simgpu {

unsigned ToU32(double v) {
  if (!(v > 0)) return 0;  // also NaN
  if (v >= 4294967295.0) return 0xFFFFFFFFu;
  return static_cast<unsigned>(std::floor(v));
}

unsigned long long ToU64(double v) {
  if (!(v > 0)) return 0;
  if (v >= 18446744073709549568.0) return ~0ULL;
  return static_cast<unsigned long long>(std::floor(v));
}

unsigned Ctx::U32(ValueKey k) const { return ToU32(V(k)); }
unsigned long long Ctx::U64(ValueKey k) const { return ToU64(V(k)); }

nvmlReturn_t Apply(const FaultAction& action) {
  if (action.hang) HangGate::Get().Wait();  // no lock held: see below
  if (action.block_ms > 0) {
    // No lock is held here, so a blocked call stalls only its own thread, as a slow driver
    // call would.
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(action.block_ms));
  }
  return action.error.value_or(NVML_SUCCESS);
}

nvmlReturn_t EnterSystem(const char* function, Ctx* ctx) {
  ctx->world = Simulator::Get().world();
  if (!ctx->world) return NVML_ERROR_UNINITIALIZED;
  ctx->t = ctx->world->Now();
  return Apply(ctx->world->faults().ForCall(function, std::nullopt, ctx->t));
}

namespace {

// The call counts: any thread enters calls; a plain mutex (the simulator is a test tool, and a
// count is a few nanoseconds beside a call).
struct CallCounts {
  std::mutex mu;
  std::unordered_map<std::string, long long> counts;
};

CallCounts& Counts() {
  static CallCounts* counts = new CallCounts();  // never destroyed: calls may outlive statics
  return *counts;
}

}  // namespace

void CountCall(const std::string& key) {
  CallCounts& c = Counts();
  std::lock_guard<std::mutex> lock(c.mu);
  ++c.counts[key];
}

// NVMLX_SIMGPU_CALL_LOG=FILE: every count, "key count" a line in key order, written when the
// library is unloaded or the process exits. bench/nvml_calls.sh compares what the daemon calls
// per collection with what bench/nvml_floor calls per sweep of the same collectors file.
__attribute__((destructor)) static void WriteCallLog() {
  const char* path = std::getenv("NVMLX_SIMGPU_CALL_LOG");
  if (path == nullptr || *path == '\0') return;
  CallCounts& c = Counts();
  std::map<std::string, long long> sorted;
  {
    std::lock_guard<std::mutex> lock(c.mu);
    sorted.insert(c.counts.begin(), c.counts.end());
  }
  FILE* f = std::fopen(path, "w");
  if (f == nullptr) return;
  for (const auto& [key, n] : sorted) std::fprintf(f, "%s %lld\n", key.c_str(), n);
  std::fclose(f);
}

long long CallCount(const std::string& key) {
  CallCounts& c = Counts();
  std::lock_guard<std::mutex> lock(c.mu);
  auto it = c.counts.find(key);
  return it == c.counts.end() ? 0 : it->second;
}

nvmlReturn_t EnterDevice(const char* function, nvmlDevice_t device, Ctx* ctx) {
  CountCall(function);
  ctx->world = Simulator::Get().world();
  if (!ctx->world) return NVML_ERROR_UNINITIALIZED;
  ctx->dev = ctx->world->Find(device);
  if (ctx->dev == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  ctx->t = ctx->world->Now();
  if (ctx->world->faults().IsLost(ctx->dev->index, ctx->t)) return NVML_ERROR_GPU_IS_LOST;
  return Apply(ctx->world->faults().ForCall(function, ctx->dev->index, ctx->t));
}

nvmlReturn_t EnterIndex(const char* function, unsigned index, Ctx* ctx) {
  ctx->world = Simulator::Get().world();
  if (!ctx->world) return NVML_ERROR_UNINITIALIZED;
  if (index >= ctx->world->device_count()) return NVML_ERROR_INVALID_ARGUMENT;
  return EnterDevice(function, ctx->world->handle(index), ctx);
}

nvmlReturn_t CopyString(const std::string& s, char* buf, unsigned length) {
  if (buf == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (s.size() + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(buf, s.c_str(), s.size() + 1);
  return NVML_SUCCESS;
}

}  // namespace nvmlx::simgpu
