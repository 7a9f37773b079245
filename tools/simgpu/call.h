// The common prologue of every simulated NVML entry point: the init check, handle validation,
// lost-GPU and fault rules, and the exception barrier (nothing may throw across the C ABI).
//
// Stateless helpers; a Ctx holds its own reference to the World, so a call stays valid even if
// another thread shuts NVML down meanwhile. Safe to use from any thread.
#ifndef NVML_EXPORTER_TOOLS_SIMGPU_CALL_H_
#define NVML_EXPORTER_TOOLS_SIMGPU_CALL_H_

#include <cstring>
#include <memory>
#include <string>

#include "nvml/nvml_api.h"
#include "world.h"

namespace nvmlx::simgpu {

// What a call knows once its prologue passed.
struct Ctx {
  std::shared_ptr<const World> world;
  const Device* dev = nullptr;  // null for calls that name no device
  double t = 0;                 // simulation time of this call

  const GpuSpec& spec() const { return *dev->spec; }
  double V(ValueKey k) const { return dev->spec->value(k).At(t); }
  unsigned U32(ValueKey k) const;
  unsigned long long U64(ValueKey k) const;
};

// How many times each per-device NVML function was entered, and each field id was filled by
// nvmlDeviceGetFieldValues ("field:<id>"), since the library was loaded: tests read it through
// nvmlxSimCallCount (sim_control.h CallCount) to check what a collector reads when.
void CountCall(const std::string& key);
long long CallCount(const std::string& key);

// Integer NVML outputs round down and saturate (SCENARIO.md: "integer calls round down").
unsigned ToU32(double v);
unsigned long long ToU64(double v);

// Sleeps for the rule's block_ms and returns its error (SUCCESS when none).
nvmlReturn_t Apply(const FaultAction& action);

// Prologue of a call that names no device: init check, then "*" fault rules.
nvmlReturn_t EnterSystem(const char* function, Ctx* ctx);
// Prologue of a per-device call: init check, handle check, lost GPU, then fault rules.
nvmlReturn_t EnterDevice(const char* function, nvmlDevice_t device, Ctx* ctx);
// As EnterDevice, for calls that take a GPU index (nvmlDeviceGetHandleByIndex_v2).
nvmlReturn_t EnterIndex(const char* function, unsigned index, Ctx* ctx);

// Copies `s` with its NUL into buf[length]; INSUFFICIENT_SIZE when it does not fit.
nvmlReturn_t CopyString(const std::string& s, char* buf, unsigned length);

// Runs `body(ctx)` after the per-device prologue, catching every exception.
template <typename Body>
nvmlReturn_t OnDevice(const char* function, nvmlDevice_t device, Body&& body) noexcept {
  try {
    Ctx ctx;
    if (nvmlReturn_t rc = EnterDevice(function, device, &ctx); rc != NVML_SUCCESS) return rc;
    return body(static_cast<const Ctx&>(ctx));
  } catch (...) {
    return NVML_ERROR_UNKNOWN;
  }
}

// Runs `body(ctx)` after the system prologue, catching every exception.
template <typename Body>
nvmlReturn_t OnSystem(const char* function, Body&& body) noexcept {
  try {
    Ctx ctx;
    if (nvmlReturn_t rc = EnterSystem(function, &ctx); rc != NVML_SUCCESS) return rc;
    return body(static_cast<const Ctx&>(ctx));
  } catch (...) {
    return NVML_ERROR_UNKNOWN;
  }
}

// Fills one nvmlFieldValue_t (fieldId and scopeId set by the caller) as the real driver would,
// including its per-element nvmlReturn and valueType. fields.cc.
void FillFieldValue(const Ctx& ctx, nvmlFieldValue_t* value);
// energy_mj_at_start + max(power_w) · World::EnergyCarryS() + ∫ power_w dt, in mJ: the energy
// counter of FI 83 and the dedicated call, monotonic across processes as the driver's is.
double EnergyMj(const Ctx& ctx);

// The GPU's NVLink links: the nvlink_links key, at most NVMLX_NVLINK_MAX_LINKS (0: no NVLink).
unsigned NvlinkLinks(const Ctx& ctx);
// Link k's share of an all-links counter spread evenly over `links` links:
// floor(total·(k+1)/links) − floor(total·k/links), so the shares add up to `total` and each stays
// monotonic while `total` grows. nvlink.cc.
unsigned long long LinkShare(unsigned long long total, unsigned k, unsigned links);

}  // namespace nvmlx::simgpu

#endif  // NVML_EXPORTER_TOOLS_SIMGPU_CALL_H_
