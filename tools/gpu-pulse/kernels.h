// Host interface of the CUDA load kernels. Plain C++ (no CUDA headers) so main.cc is compiled by
// the host compiler with our usual warning flags.
#pragma once

#include <memory>
#include <string>

#include "options.h"

namespace gpu_pulse {

// Number of visible CUDA devices; 0 with *error set when there is none (or no driver).
int CudaDeviceCount(std::string* error);

enum class BatchStatus { kOk, kCudaError, kMismatch };

struct BatchResult {
  BatchStatus status = BatchStatus::kOk;
  double work = 0;      // Floating-point operations (fp32/fp64/tensor) or bytes moved (memory).
  double seconds = 0;   // Wall time of the batch, launch to completion.
  int kernels = 0;      // Kernel launches in the batch.
  std::string message;  // What failed, when status != kOk.
};

// The load for one device. Every call must come from the same host thread (it owns the
// device's current context for that thread).
class DeviceLoad {
 public:
  virtual ~DeviceLoad() = default;
  // Launches kernels for about the target time, waits for them, verifies their results.
  virtual BatchResult RunBatch() = 0;
  virtual std::string Description() const = 0;  // Device name and launch configuration.
};

// Selects `device` on the calling thread and allocates what `mode` needs; nullptr with *error
// set on failure. Memory is freed by the destructor.
std::unique_ptr<DeviceLoad> CreateDeviceLoad(int device, Mode mode, double target_seconds,
                                             double memory_gib, std::string* error);

}  // namespace gpu_pulse
