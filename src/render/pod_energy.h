// PodEnergyLedger: the energy each pod container used on each GPU, as a counter that only grows
// (nvml_exporter_pod_gpu_energy_joules_total; docs/attribution.md "Energy per pod").
//
// Each collection, each GPU's energy counter (DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION, which must be
// collected) has grown by some joules since the previous one; they are split among who held the
// GPU in that window, so that the shares always sum to the GPU's growth:
//  - a GPU the kubelet gives one pod container exclusively: all of it to that container;
//  - a shared GPU (time-slicing or MPS replicas, several holders, or no kubelet but process
//    attribution, --kubernetes-process-metrics): each pod container gets its processes' share of
//    the SM time in the window (NVML per-process utilization; when the shares add to over 100 %
//    they are scaled to 100 %), and the rest, idle time and host processes, goes to the
//    unattributed series (namespace, pod and container empty);
//  - a MIG-enabled GPU: each MIG instance gets the share of the GPU's compute slices it has
//    among the instances that exist (its profile's "<n>g"), then splits it as above among its
//    own holders. An estimate: the instances do not meter their own energy;
//  - a GPU nobody holds: all of it unattributed.
// A counter that went down (a GPU reset, a driver reload) or a missing reading skips that window.
// A series lives as long as the daemon and keeps its value when its pod goes and comes back (a
// restart of the pod's container under the same name); one not grown for an hour is dropped
// (a pod gone for good), and starts again from 0 should it come back, which Prometheus' rate()
// and increase() read as a counter reset. Across a restart of the daemon the series go on when
// the ledger was saved (Serialize, Restore: --state-dir); without one they start from 0, which
// Prometheus reads as a reset likewise.
//
// Thread-safety: not thread-safe; the daemon's publish step (the collector's thread) owns it.
#ifndef NVML_EXPORTER_RENDER_POD_ENERGY_H_
#define NVML_EXPORTER_RENDER_POD_ENERGY_H_

#include <chrono>
#include <map>
#include <string>
#include <tuple>

#include "model/snapshot.h"
#include "render/pod_families.h"
#include "render/series_model.h"
#include "util/status.h"

namespace nvmlx::render {

class PodEnergyLedger {
 public:
  // The window a series may go without growing before it is dropped.
  static constexpr std::chrono::hours kIdleForget{1};

  // One collection.
  void Observe(const model::Snapshot& snap);
  // The family, one point per (GPU, MIG instance, pod container), and one unattributed per GPU
  // or instance that had energy to give; labels gpu, UUID (none when NVML gave no UUID),
  // GPU_I_PROFILE and GPU_I_ID (MIG), namespace, pod, container, named as `options` names them
  // on our other per-pod families (PodFamiliesOptions::label_names: -o gives uuid,
  // pod_namespace, pod_name, container_name).
  void AddFamily(const PodFamiliesOptions& options, SeriesModel* model) const;

  // The ledger as text (JSON), to be read back by Restore after a restart of the daemon
  // (--state-dir), so that the counters go on instead of starting from 0. Never throws (a label
  // that is not UTF-8 is written with U+FFFD in its place).
  std::string Serialize(std::chrono::system_clock::time_point now) const;

  // The GPUs this daemon collects: index -> UUID (empty when NVML gave none).
  using KnownGpus = std::map<unsigned, std::string>;
  // What Restore took over.
  struct Restored {
    size_t series = 0;
    // Series of a GPU this daemon does not have (a GPU gone from the node, another --devices
    // selection, a renumbering: its index or UUID differs): left out, not an error of the file,
    // which the caller reports in one warning. Their GPU's reading is left out too.
    size_t dropped = 0;
  };
  // What Serialize wrote, at `now`: the series and each GPU's last reading, for the GPUs of
  // `gpus` only. When it was saved more than kRestoreGap ago, the readings are left out (the
  // energy used in between cannot be told whose: the first window after the restart starts
  // afresh). Every member is checked for its type and range (below); INVALID_ARGUMENT names the
  // first that is not as expected, by its path within the JSON ("series[3].joules: expected
  // ..."), and the ledger is then left as it was. Never throws, whatever the text.
  Result<Restored> Restore(const std::string& text, std::chrono::system_clock::time_point now,
                           const KnownGpus& gpus);
  static constexpr std::chrono::minutes kRestoreGap{10};
  // The bounds a saved value must keep. Joules: an H100 at 700 W for a century is 2.2e12 J;
  // 1e15 J is 450 times that and still adds a millijoule in a double (53 bits: 0.125 J steps
  // only from 1e15 on). A GPU's reading: the same in mJ. Times: Unix seconds up to the year 2200
  // (system_clock counts nanoseconds in 64 bits: past 2262 the conversion overflows, which
  // UBSan caught with the year 3000 as the bound).
  // Labels: Kubernetes names are at most 253 bytes; a UUID or profile far less.
  static constexpr double kMaxJoules = 1e15;
  static constexpr int64_t kMaxUnixSeconds = 7258118400;  // 2200-01-01
  static constexpr size_t kMaxLabelBytes = 512;

  // The joules of one series (tests): namespace, pod and container empty for the unattributed.
  double Joules(unsigned gpu, const std::string& gpu_instance, const std::string& ns,
                const std::string& pod, const std::string& container) const;

 private:
  struct Key {
    unsigned gpu = 0;
    std::string uuid, profile, gpu_instance, ns, pod, container;
    bool operator<(const Key& o) const {
      return std::tie(gpu, uuid, gpu_instance, profile, ns, pod, container) <
             std::tie(o.gpu, o.uuid, o.gpu_instance, o.profile, o.ns, o.pod, o.container);
    }
  };
  struct Account {
    double joules = 0;
    std::chrono::system_clock::time_point grown;
  };
  // Splits `joules` of entity `dev` among its holders.
  void Split(const model::Snapshot& snap, const model::DeviceSnapshot& dev, double joules);
  void Credit(Key key, double joules, std::chrono::system_clock::time_point at);

  std::map<Key, Account> accounts_;
  std::map<std::string, int64_t> last_mj_;  // per GPU UUID (or index): the last reading
};

}  // namespace nvmlx::render

#endif  // NVML_EXPORTER_RENDER_POD_ENERGY_H_
