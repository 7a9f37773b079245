// Test-side control of the simulated libnvidia-ml.so.1: steps its frozen clock through the
// simulator's exported non-NVML functions (SCENARIO.md "nvmlxSimSetFrozenTime", "Faults"). The
// library must already be loaded (by nvml::Library::Load of the same path): RTLD_NOLOAD finds that
// very handle, so the clock moved is the one the code under test reads.
//
// Thread-safety: may be called from any thread; the simulator serialises it.
#ifndef NVML_EXPORTER_TOOLS_SIMGPU_SIM_CONTROL_H_
#define NVML_EXPORTER_TOOLS_SIMGPU_SIM_CONTROL_H_

#include <dlfcn.h>

#include <string>

namespace nvmlx::simgpu {

// Moves the simulation clock (frozen by NVMLX_SIMGPU_FROZEN_TIME_S) to `seconds`. Returns "" on
// success, else what went wrong, for the test's failure message.
inline std::string SetFrozenTime(const char* library_path, double seconds) {
  void* handle = dlopen(library_path, RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return std::string("not loaded: ") + library_path;
  using SetFn = int (*)(double);
  auto set = reinterpret_cast<SetFn>(dlsym(handle, "nvmlxSimSetFrozenTime"));
  std::string error;
  if (set == nullptr) {
    error = "nvmlxSimSetFrozenTime not exported";
  } else if (int rc = set(seconds); rc != 0) {
    error = "nvmlxSimSetFrozenTime returned " + std::to_string(rc);
  }
  dlclose(handle);  // drops only the reference RTLD_NOLOAD added
  return error;
}

// Ends every `hang: true` call of the loaded simulator and disarms hang rules until its next
// init (SCENARIO.md "Faults"). Returns "" on success, else what went wrong.
inline std::string ReleaseHangs(const char* library_path) {
  void* handle = dlopen(library_path, RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return std::string("not loaded: ") + library_path;
  using ReleaseFn = int (*)();
  auto release = reinterpret_cast<ReleaseFn>(dlsym(handle, "nvmlxSimReleaseHangs"));
  std::string error = release == nullptr ? "nvmlxSimReleaseHangs not exported" : "";
  if (release != nullptr) release();
  dlclose(handle);
  return error;
}

// How many `hang: true` calls of the loaded simulator are blocked now; -1 when it cannot say.
inline int HungCalls(const char* library_path) {
  void* handle = dlopen(library_path, RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return -1;
  using CountFn = int (*)();
  auto count = reinterpret_cast<CountFn>(dlsym(handle, "nvmlxSimHungCalls"));
  const int n = count != nullptr ? count() : -1;
  dlclose(handle);
  return n;
}

// How many times the loaded simulator was asked `key`: a per-device NVML function's name
// ("nvmlDeviceGetTemperature") or "field:<id>" for a field of nvmlDeviceGetFieldValues; -1 when
// it cannot say.
inline long long CallCount(const char* library_path, const char* key) {
  void* handle = dlopen(library_path, RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return -1;
  using CountFn = long long (*)(const char*);
  auto count = reinterpret_cast<CountFn>(dlsym(handle, "nvmlxSimCallCount"));
  const long long n = count != nullptr ? count(key) : -1;
  dlclose(handle);
  return n;
}

// Restarts the loaded simulated CUPTI's clock (libcupti.so.13 from cupti_sim.cc, SCENARIO.md
// "PM sampling"): `busy_until_s` and the value functions count from now again. Returns "" on
// success, else what went wrong.
inline std::string RestartCuptiClock(const char* library_path) {
  void* handle = dlopen(library_path, RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return std::string("not loaded: ") + library_path;
  using RestartFn = int (*)();
  auto restart = reinterpret_cast<RestartFn>(dlsym(handle, "nvmlxSimCuptiRestartClock"));
  std::string error;
  if (restart == nullptr) {
    error = "nvmlxSimCuptiRestartClock not exported";
  } else if (int rc = restart(); rc != 0) {
    error = "nvmlxSimCuptiRestartClock returned " + std::to_string(rc);
  }
  dlclose(handle);
  return error;
}

// How many host objects the loaded simulated CUPTI created since load; -1 when it cannot say.
inline long long CuptiHostObjects(const char* library_path) {
  void* handle = dlopen(library_path, RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return -1;
  using CountFn = long long (*)();
  auto count = reinterpret_cast<CountFn>(dlsym(handle, "nvmlxSimCuptiHostObjects"));
  const long long n = count != nullptr ? count() : -1;
  dlclose(handle);
  return n;
}

}  // namespace nvmlx::simgpu

#endif  // NVML_EXPORTER_TOOLS_SIMGPU_SIM_CONTROL_H_
