#include "world.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "events.h"

namespace nvmlx::simgpu {
namespace {

// 2023-11-14T22:13:20Z: the epoch origin of a frozen clock.
constexpr long long kFrozenOriginEpochUs = 1700000000LL * 1000000LL;

}  // namespace

std::shared_ptr<const World> World::Build(std::string* error) {
  std::shared_ptr<World> w(new World());
  if (const char* frozen = std::getenv("NVMLX_SIMGPU_FROZEN_TIME_S");
      frozen != nullptr && *frozen != '\0') {
    char* end = nullptr;
    errno = 0;
    double t = std::strtod(frozen, &end);
    if (*end != '\0' || errno != 0 || !std::isfinite(t) || t < 0) {
      *error =
          std::string("NVMLX_SIMGPU_FROZEN_TIME_S: expected seconds >= 0, got '") + frozen + "'";
      return nullptr;
    }
    w->frozen_ = true;
    w->frozen_s_.store(t);
  }
  const char* path = std::getenv("NVMLX_SIMGPU_SCENARIO");
  ParseResult parsed =
      (path != nullptr && *path != '\0') ? LoadScenarioFile(path) : DefaultScenario();
  if (auto* msg = std::get_if<std::string>(&parsed)) {
    *error = *msg;
    return nullptr;
  }
  w->scenario_ = std::move(std::get<Scenario>(parsed));
  w->faults_ = FaultSet(w->scenario_.faults);
  for (unsigned i = 0; i < w->scenario_.gpus.size(); ++i) {
    w->devices_.push_back(std::make_unique<Device>(Device{i, &w->scenario_.gpus[i], nullptr}));
  }
  for (const MigDeviceSpec& m : w->scenario_.mig_devices) {
    w->mig_devices_.push_back(std::make_unique<Device>(Device{m.gpu, &m.spec, &m}));
  }
  w->origin_ = std::chrono::steady_clock::now();
  // libstdc++'s steady_clock is CLOCK_MONOTONIC, whose epoch is the boot: the same instant for
  // every process, unlike origin_ itself.
  w->carry_s_ =
      w->frozen_ ? 0 : std::chrono::duration<double>(w->origin_.time_since_epoch()).count();
  w->origin_epoch_us_ = w->frozen_ ? kFrozenOriginEpochUs
                                   : std::chrono::duration_cast<std::chrono::microseconds>(
                                         std::chrono::system_clock::now().time_since_epoch())
                                         .count();
  return w;
}

nvmlDevice_t World::handle(unsigned index) const {
  return reinterpret_cast<nvmlDevice_t>(devices_.at(index).get());
}

const Device* World::Find(nvmlDevice_t handle) const {
  // Compare addresses only: a stale or bogus handle is never dereferenced.
  for (const auto& d : devices_) {
    if (reinterpret_cast<nvmlDevice_t>(d.get()) == handle) return d.get();
  }
  for (const auto& d : mig_devices_) {
    if (reinterpret_cast<nvmlDevice_t>(d.get()) == handle) return d.get();
  }
  return nullptr;
}

const Device* World::MigBySlot(unsigned gpu, unsigned slot) const {
  for (const auto& d : mig_devices_) {
    if (d->index == gpu && d->mig->slot == slot) return d.get();
  }
  return nullptr;
}

const Device* World::MigByGpuInstance(unsigned gpu, unsigned gpu_instance_id) const {
  for (const auto& d : mig_devices_) {
    if (d->index == gpu && d->mig->gpu_instance_id == gpu_instance_id) return d.get();
  }
  return nullptr;
}

double World::Now() const {
  if (frozen_) return frozen_s_.load();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - origin_).count();
}

std::chrono::steady_clock::time_point World::SteadyAt(double t) const {
  return origin_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                       std::chrono::duration<double>(t));
}

long long World::EpochMicros(double t) const {
  return origin_epoch_us_ + static_cast<long long>(std::llround(t * 1e6));
}

Simulator& Simulator::Get() {
  // Leaked on purpose: an event thread may still be inside a call while the process exits, and
  // must not find a destroyed mutex.
  static Simulator* sim = new Simulator();
  return *sim;
}

nvmlReturn_t Simulator::Init() {
  std::lock_guard<std::mutex> lock(mu_);
  if (refcount_ == 0) {
    // NVMLX_SIMGPU_INIT_FAILURES=N: the process's first N inits answer DRIVER_NOT_LOADED, as
    // while the driver container of the GPU Operator is still coming up (SCENARIO.md).
    if (const char* n = std::getenv("NVMLX_SIMGPU_INIT_FAILURES"); n != nullptr) {
      if (init_failures_ < std::strtol(n, nullptr, 10)) {
        ++init_failures_;
        return NVML_ERROR_DRIVER_NOT_LOADED;
      }
    }
    HangGate::Get().Reset();
    std::string error;
    std::shared_ptr<const World> w = World::Build(&error);
    if (!w) {
      std::fprintf(stderr, "simgpu: %s\n", error.c_str());
      return NVML_ERROR_UNKNOWN;
    }
    world_ = std::move(w);
  }
  ++refcount_;
  return NVML_SUCCESS;
}

nvmlReturn_t Simulator::Shutdown() {
  std::lock_guard<std::mutex> lock(mu_);
  if (refcount_ == 0) return NVML_ERROR_UNINITIALIZED;  // as measured on R580
  if (--refcount_ == 0) {
    world_.reset();
    for (auto& [handle, set] : sets_) set->Close();
    sets_.clear();
  }
  return NVML_SUCCESS;
}

std::shared_ptr<const World> Simulator::world() const {
  std::lock_guard<std::mutex> lock(mu_);
  return world_;
}

nvmlReturn_t Simulator::CreateEventSet(nvmlEventSet_t* out) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!world_) return NVML_ERROR_UNINITIALIZED;
  if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  auto set = std::make_shared<EventSet>(world_);
  nvmlEventSet_t handle = reinterpret_cast<nvmlEventSet_t>(set.get());
  sets_.emplace(handle, std::move(set));
  *out = handle;
  return NVML_SUCCESS;
}

std::shared_ptr<EventSet> Simulator::FindEventSet(nvmlEventSet_t set) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sets_.find(set);
  return it == sets_.end() ? nullptr : it->second;
}

nvmlReturn_t Simulator::FreeEventSet(nvmlEventSet_t set) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!world_) return NVML_ERROR_UNINITIALIZED;
  auto it = sets_.find(set);
  if (it == sets_.end()) return NVML_ERROR_INVALID_ARGUMENT;
  it->second->Close();
  sets_.erase(it);
  return NVML_SUCCESS;
}

nvmlReturn_t Simulator::SetFrozenTime(double t) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!world_) return NVML_ERROR_UNINITIALIZED;
  if (!world_->frozen()) return NVML_ERROR_NOT_SUPPORTED;
  if (!(t >= 0)) return NVML_ERROR_INVALID_ARGUMENT;
  world_->SetFrozenTime(t);
  for (auto& [handle, set] : sets_) set->Wake();
  return NVML_SUCCESS;
}

}  // namespace nvmlx::simgpu
