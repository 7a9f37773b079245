#include "faults.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <utility>

namespace nvmlx::simgpu {
namespace {

bool Active(const Fault& f, double t) { return t >= f.after_s && (!f.until_s || t < *f.until_s); }

// A rule for every GPU ("*") matches calls without a GPU too (nvmlSystemGetDriverVersion, ...);
// a rule for GPU n matches only calls on GPU n.
bool GpuMatches(const Fault& f, std::optional<unsigned> gpu) {
  return !f.gpu || (gpu && *f.gpu == *gpu);
}

void Merge(const Fault& f, FaultAction* out) {
  if (!out->error && f.error) out->error = f.error;
  out->block_ms = std::max(out->block_ms, f.block_ms);
  out->hang = out->hang || f.hang;
}

bool ReleaseFileExists() {
  const char* path = std::getenv("NVMLX_SIMGPU_RELEASE_FILE");
  std::error_code ec;
  return path != nullptr && *path != '\0' && std::filesystem::exists(path, ec);
}

}  // namespace

HangGate& HangGate::Get() {
  static HangGate* gate = new HangGate();  // never destroyed: a hung thread may outlive main
  return *gate;
}

void HangGate::Wait() {
  std::unique_lock<std::mutex> lock(mu_);
  ++waiting_;
  while (!released_) {
    // The release file is polled: a test process outside this one cannot signal the condvar.
    if (ReleaseFileExists()) {
      released_ = true;
      cv_.notify_all();
      break;
    }
    cv_.wait_for(lock, std::chrono::milliseconds(50));
  }
  --waiting_;
}

void HangGate::Release() {
  std::lock_guard<std::mutex> lock(mu_);
  released_ = true;
  cv_.notify_all();
}

void HangGate::Reset() {
  std::lock_guard<std::mutex> lock(mu_);
  released_ = false;
}

int HangGate::waiting() {
  std::lock_guard<std::mutex> lock(mu_);
  return waiting_;
}

bool HangGate::released() {
  std::lock_guard<std::mutex> lock(mu_);
  return released_;
}

FaultSet::FaultSet(std::vector<Fault> faults) : faults_(std::move(faults)) {}

FaultAction FaultSet::ForCall(std::string_view call, std::optional<unsigned> gpu, double t) const {
  FaultAction out;
  for (const Fault& f : faults_) {
    // "*": every call that names a GPU (not the system calls), as a driver gone bad answers.
    const bool any_device_call = f.call == "*" && gpu.has_value();
    if (f.lost_after_s || f.field_id || (f.call != call && !any_device_call)) continue;
    if (GpuMatches(f, gpu) && Active(f, t)) Merge(f, &out);
  }
  return out;
}

FaultAction FaultSet::ForField(unsigned gpu, unsigned field_id, double t) const {
  FaultAction out;
  for (const Fault& f : faults_) {
    if (!f.field_id || *f.field_id != field_id) continue;
    if (GpuMatches(f, gpu) && Active(f, t)) Merge(f, &out);
  }
  return out;
}

bool FaultSet::IsLost(unsigned gpu, double t) const {
  return std::any_of(faults_.begin(), faults_.end(), [&](const Fault& f) {
    return f.lost_after_s && GpuMatches(f, gpu) && t >= *f.lost_after_s;
  });
}

}  // namespace nvmlx::simgpu
