#include "faults.h"

#include <algorithm>
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
}

}  // namespace

FaultSet::FaultSet(std::vector<Fault> faults) : faults_(std::move(faults)) {}

FaultAction FaultSet::ForCall(std::string_view call, std::optional<unsigned> gpu, double t) const {
  FaultAction out;
  for (const Fault& f : faults_) {
    if (f.lost_after_s || f.field_id || f.call != call) continue;
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
