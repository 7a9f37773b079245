// MIG: discovering the MIG instances of a GPU, naming their profiles as DCGM does, and deciding
// which entity each field is emitted for (docs/nvml.md §5).
//
// Entities. A GPU without MIG is one entity with every field. On a GPU with MIG enabled, DCGM's
// GPU-instance entity (FE_GPU_I; one per MIG device here) carries what NVML measures per
// instance, and the GPU itself carries what stays GPU-wide:
//   - per instance (fields::MigScope::kInstance, fields/field_roles.h): framebuffer (DCGM_FI_DEV_FB_*, from the MIG handle's
//     memory info), BAR1, and the DCGM_FI_PROF_* ratios (GPM, sampled per GPU instance with
//     nvmlGpmMigSampleGet);
//   - per GPU (fields::MigScope::kGpu): everything else: temperatures, power, energy, clocks, ECC,
//     retired pages / remapped rows, PCIe and NVLink (also their PROF byte rates, which NVIDIA
//     does not give per instance: NVIDIA/DCGM#88), utilization (NVML answers NOT_SUPPORTED on a
//     MIG-enabled GPU; logged once), Xids and clock events. These are emitted once, on the GPU,
//     without GPU_I_* labels, instead of being repeated on every instance as dcgm-exporter does.
// The device selector picks the entities: `g` the GPUs with all their fields (as MIG were off);
// `f` every GPU, split as above where MIG is on; `i` / `i:<ids>` the listed instances, plus the
// GPU-wide fields of their GPUs.
//
// Thread-safety: pure functions, and Discover() only reads through a thread-safe Library.
#ifndef NVML_EXPORTER_COLLECT_MIG_H_
#define NVML_EXPORTER_COLLECT_MIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "fields/catalog.h"
#include "model/snapshot.h"
#include "nvml/nvml.h"

namespace nvmlx::collect {

// DCGM's GPU_I_PROFILE: "<slices>g.<ceil(memory MiB / 1024)>gb", e.g. (3, 71424) -> "3g.70gb".
std::string MigProfileName(unsigned slice_count, uint64_t memory_mb);

// The memory figure DCGM names a profile by. DCGM takes it from the GPU-instance profile
// (nvmlDeviceGetGpuInstanceProfileInfo) of the instance; finding an instance's profile id needs
// the GPU-instance APIs, which are root-only. So we start from nvmlDeviceGetAttributes_v2 on the
// MIG handle (root-free: slice count and memory) and pick, among the GPU's profiles with that
// slice count, the one whose memory is closest to the instance's (this tells 1g.18gb from
// 1g.35gb on an H200; "+me" variants have the same memory and, as in DCGM, the same name). With
// no matching profile the instance's own memory figure is used.
uint64_t ProfileMemoryMb(unsigned slice_count, uint64_t instance_memory_mb,
                         const std::vector<nvmlGpuInstanceProfileInfo_t>& profiles);

struct MigInstance {
  nvml::Device handle = nullptr;  // the MIG device (one compute instance)
  model::DeviceIdentity::Mig mig;
};

// The MIG instances of `parent`, in slot order (nvmlDeviceGetMigDeviceHandleByIndex over
// [0, max count), skipping empty slots). An instance whose ids or UUID cannot be read is left out
// with one warning; a failing profile read leaves the profile empty (warned). `gpu` is the NVML
// index, for log lines.
std::vector<MigInstance> DiscoverMig(const nvml::Library& lib, nvml::Device parent, unsigned gpu);

}  // namespace nvmlx::collect

#endif  // NVML_EXPORTER_COLLECT_MIG_H_
