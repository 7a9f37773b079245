#include "render/pod_families.h"

#include <algorithm>
#include <charconv>
#include <tuple>

#include "fields/field_ids.h"
#include "render/text_format.h"

namespace nvmlx::render {
namespace {

constexpr int kGpuUtilField = fields::ids::kGpuUtil;
constexpr int kFbUsedField = fields::ids::kFbUsed;
constexpr uint64_t kMiB = uint64_t{1024} * 1024;

// What one pod container does on one GPU.
struct PodUsage {
  std::string owner_uid;  // as the cgroup names it (a static pod's kubelet uid); the join key
  std::string uid, namespace_name, pod, container, vgpu;
  const model::PodMeta* meta = nullptr;  // null: the API server does not know the uid (yet)
  uint64_t memory_bytes = 0;
  uint64_t memory_mib = 0;  // sum of each process's whole MiB, as dcgm-exporter sums them
  uint64_t sm_percent = 0;
  unsigned processes = 0;
};

struct DeviceUsage {
  std::vector<PodUsage> pods;  // sorted by namespace, pod, container, uid
  unsigned processes = 0;
  unsigned unattributed = 0;
  uint64_t memory_bytes = 0;
  uint64_t sm_percent = 0;
};

DeviceUsage Aggregate(const model::DeviceSnapshot& dev, const model::Attribution& a) {
  DeviceUsage u;
  auto find = [&u](const std::string& uid, const std::string& container) -> PodUsage* {
    for (PodUsage& p : u.pods) {
      if (p.owner_uid == uid && p.container == container) return &p;
    }
    return nullptr;
  };
  for (const model::ProcessSample& p : dev.processes) {
    const unsigned sm = p.has_utilization ? p.sm_util_percent : 0;
    ++u.processes;
    u.memory_bytes += p.used_memory_bytes;
    u.sm_percent += sm;
    const model::ProcessOwner* owner = nullptr;
    if (a.processes != nullptr) {
      if (auto it = a.processes->by_pid.find(p.pid); it != a.processes->by_pid.end()) {
        owner = &it->second;
      }
    }
    if (owner == nullptr) {
      ++u.unattributed;
      continue;
    }
    const model::PodMeta* meta = nullptr;
    std::string container;
    if (a.metadata != nullptr) {
      if (auto it = a.metadata->by_uid.find(owner->pod_uid); it != a.metadata->by_uid.end()) {
        meta = &it->second;
        if (auto c = meta->container_names.find(owner->container_id);
            c != meta->container_names.end()) {
          container = c->second;
        }
      }
    }
    PodUsage* pu = find(owner->pod_uid, container);
    if (pu == nullptr) {
      PodUsage fresh;
      fresh.owner_uid = owner->pod_uid;
      fresh.uid = owner->pod_uid;
      fresh.container = container;
      fresh.meta = meta;
      if (meta != nullptr) {
        fresh.namespace_name = meta->namespace_name;
        fresh.pod = meta->pod;
        fresh.uid = meta->uid;  // a static pod's kubelet uid becomes its API uid
      }
      u.pods.push_back(std::move(fresh));
      pu = &u.pods.back();
    }
    pu->memory_bytes += p.used_memory_bytes;
    pu->memory_mib += p.used_memory_bytes / kMiB;
    pu->sm_percent += sm;
    ++pu->processes;
  }
  // The kubelet's view: containers holding this device without a process on it read 0.
  if (a.devices != nullptr && dev.identity != nullptr) {
    auto it = a.devices->pods_by_device.find(dev.identity->DeviceKey());
    if (it != a.devices->pods_by_device.end()) {
      for (const model::PodRef& ref : it->second) {
        std::string uid;
        const model::PodMeta* meta = nullptr;
        if (a.metadata != nullptr) {
          auto n = a.metadata->uid_by_name.find(ref.namespace_name + "/" + ref.pod);
          if (n != a.metadata->uid_by_name.end()) {
            uid = n->second;
            if (auto m = a.metadata->by_uid.find(uid); m != a.metadata->by_uid.end()) {
              meta = &m->second;
            }
          }
        }
        PodUsage* pu = nullptr;
        for (PodUsage& p : u.pods) {
          if (p.namespace_name == ref.namespace_name && p.pod == ref.pod &&
              p.container == ref.container) {
            pu = &p;
          }
        }
        if (pu == nullptr) {
          PodUsage idle;
          idle.uid = uid;
          idle.namespace_name = ref.namespace_name;
          idle.pod = ref.pod;
          idle.container = ref.container;
          idle.meta = meta;
          u.pods.push_back(std::move(idle));
          pu = &u.pods.back();
        }
        if (pu->vgpu.empty()) pu->vgpu = ref.vgpu;
      }
    }
  }
  std::sort(u.pods.begin(), u.pods.end(), [](const PodUsage& x, const PodUsage& y) {
    return std::tie(x.namespace_name, x.pod, x.container, x.uid) <
           std::tie(y.namespace_name, y.pod, y.container, y.uid);
  });
  return u;
}

void AppendLabel(std::string_view name, std::string_view value, std::string* out) {
  out->push_back(',');
  out->append(name);
  out->append("=\"");
  AppendEscapedLabelValue(value, out);
  out->push_back('"');
}

void AppendUint(uint64_t v, std::string* out) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, end);
}

// The device prefix "{…} " without its closing "} ".
std::string_view OpenPrefix(const std::string& prefix) {
  return std::string_view(prefix).substr(0, prefix.size() - 2);
}

// Names a pod label must not take: ours (attributes win, as in dcgm-exporter) and reserved ones.
bool ReservedLabel(std::string_view name) {
  static constexpr std::string_view kOurs[] = {
      "gpu",           "UUID",          "uuid",      "pci_bus_id",
      "device",        "modelName",     "Hostname",  "hostname",
      "namespace",     "pod",           "container", "pod_uid",
      "vgpu",          "pod_namespace", "pod_name",  "container_name",
      "GPU_I_PROFILE", "GPU_I_ID"};
  if (name.substr(0, 2) == "__" || name.substr(0, 8) == "DCGM_FI_") return true;
  return std::find(std::begin(kOurs), std::end(kOurs), name) != std::end(kOurs);
}

// Our families' device labels, as nvml_exporter_gpu_up has them: gpu and UUID (uuid with -o).
// dcgm-exporter's camelCase modelName stays on the DCGM families only, so ours are lint-clean.
std::string OwnPrefix(const model::DeviceSnapshot& dev, const PodFamiliesOptions& o) {
  std::string p = "{gpu=\"";
  AppendUint(dev.identity != nullptr ? dev.identity->index : 0, &p);
  p.push_back('"');
  AppendLabel(o.use_old_namespace ? "uuid" : "UUID",
              dev.identity != nullptr ? dev.identity->uuid : "", &p);
  return p;
}

// Our families' pod labels, after the device prefix.
void AppendPodLabels(const PodUsage& p, const PodFamiliesOptions& o, std::string* out) {
  AppendLabel(o.use_old_namespace ? "pod_namespace" : "namespace", p.namespace_name, out);
  AppendLabel(o.use_old_namespace ? "pod_name" : "pod", p.pod, out);
  AppendLabel(o.use_old_namespace ? "container_name" : "container", p.container, out);
  // Without metadata the uid is the only name the series has.
  if (o.pod_uid_label || p.meta == nullptr) AppendLabel("pod_uid", p.uid, out);
  if (!p.vgpu.empty()) AppendLabel("vgpu", p.vgpu, out);
  if (p.meta != nullptr) {
    for (const auto& [name, value] : p.meta->labels) {
      if (!ReservedLabel(name)) AppendLabel(name, value, out);
    }
  }
}

}  // namespace

bool PerPodSeriesField(int field_id, const PodFamiliesOptions& options) {
  return options.enabled && options.dcgm_per_pod_series &&
         (field_id == kGpuUtilField || field_id == kFbUsedField);
}

void AppendDcgmPerPodSeries(int field_id, std::string_view family, const DeviceSeriesPrefix& dev,
                            const model::Snapshot& snapshot, const PodFamiliesOptions& options,
                            std::string* out) {
  if (!PerPodSeriesField(field_id, options)) return;
  const DeviceUsage u = Aggregate(*dev.dev, snapshot.attribution);
  for (const PodUsage& p : u.pods) {
    out->append(family);
    out->append(OpenPrefix(dev.prefix));
    // dcgm-exporter's attributes, in the sorted order its template prints them.
    if (options.use_old_namespace) {
      AppendLabel("container_name", p.container, out);
      AppendLabel("pod_name", p.pod, out);
      AppendLabel("pod_namespace", p.namespace_name, out);
    } else {
      AppendLabel("container", p.container, out);
      AppendLabel("namespace", p.namespace_name, out);
      AppendLabel("pod", p.pod, out);
    }
    AppendLabel("pod_uid", p.uid, out);
    if (!p.vgpu.empty()) AppendLabel("vgpu", p.vgpu, out);
    out->append("} ");
    AppendUint(field_id == kGpuUtilField ? p.sm_percent : p.memory_mib, out);
    out->push_back('\n');
  }
}

void AppendPodFamilies(const model::Snapshot& snapshot,
                       const std::vector<DeviceSeriesPrefix>& devices,
                       const PodFamiliesOptions& options, std::string* out) {
  if (options.enabled) {
    std::vector<DeviceUsage> usage;
    std::vector<std::string> prefix;  // "{gpu=…,UUID=…" without the closing brace
    usage.reserve(devices.size());
    for (const DeviceSeriesPrefix& d : devices) {
      usage.push_back(Aggregate(*d.dev, snapshot.attribution));
      prefix.push_back(OwnPrefix(*d.dev, options));
    }
    enum class Measure { kSm, kMemory, kProcesses };
    struct Family {
      std::string_view name, help;
      Measure measure;
    };
    static constexpr Family kPodFamilies[] = {
        {"nvml_exporter_pod_gpu_sm_utilization_ratio",
         "Share of time (0-1) the GPU's SMs ran kernels of this pod container's processes since "
         "the previous collection: NVML per-process utilization summed over its processes on "
         "this GPU.",
         Measure::kSm},
        {"nvml_exporter_pod_gpu_memory_used_bytes",
         "GPU memory used by this pod container's processes on this GPU, in bytes.",
         Measure::kMemory},
        {"nvml_exporter_pod_gpu_processes",
         "Compute processes of this pod container with a context on this GPU.",
         Measure::kProcesses},
    };
    for (const Family& f : kPodFamilies) {
      AppendHelpType(f.name, f.help, "gauge", out);
      for (size_t i = 0; i < devices.size(); ++i) {
        for (const PodUsage& p : usage[i].pods) {
          out->append(f.name);
          out->append(prefix[i]);
          AppendPodLabels(p, options, out);
          out->append("} ");
          if (f.measure == Measure::kSm) {
            AppendGoFixed(static_cast<double>(p.sm_percent) / 100.0, out);
          } else {
            AppendUint(f.measure == Measure::kMemory ? p.memory_bytes : p.processes, out);
          }
          out->push_back('\n');
        }
      }
    }
    static constexpr Family kGpuFamilies[] = {
        {"nvml_exporter_gpu_processes",
         "Compute processes with a context on this GPU, in a pod or not.", Measure::kProcesses},
        {"nvml_exporter_gpu_process_memory_used_bytes",
         "GPU memory used by all compute processes on this GPU, in bytes.", Measure::kMemory},
        {"nvml_exporter_gpu_process_sm_utilization_ratio",
         "NVML per-process SM utilization (0-1) since the previous collection, summed over all "
         "processes on this GPU.",
         Measure::kSm},
    };
    for (const Family& f : kGpuFamilies) {
      AppendHelpType(f.name, f.help, "gauge", out);
      for (size_t i = 0; i < devices.size(); ++i) {
        out->append(f.name);
        out->append(prefix[i]);
        out->append("} ");
        if (f.measure == Measure::kSm) {
          AppendGoFixed(static_cast<double>(usage[i].sm_percent) / 100.0, out);
        } else {
          AppendUint(f.measure == Measure::kMemory ? usage[i].memory_bytes : usage[i].processes,
                     out);
        }
        out->push_back('\n');
      }
    }
    AppendHelpType("nvml_exporter_gpu_unattributed_processes",
                   "Compute processes on this GPU that belong to no pod (host processes, or "
                   "processes whose cgroup could not be read).",
                   "gauge", out);
    for (size_t i = 0; i < devices.size(); ++i) {
      out->append("nvml_exporter_gpu_unattributed_processes");
      out->append(prefix[i]);
      out->append("} ");
      AppendUint(usage[i].unattributed, out);
      out->push_back('\n');
    }
  }
}

}  // namespace nvmlx::render
