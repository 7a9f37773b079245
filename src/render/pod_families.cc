#include "render/pod_families.h"

#include <algorithm>
#include <tuple>

#include "render/series.h"

namespace nvmlx::render {
namespace {

constexpr uint64_t kMiB = uint64_t{1024} * 1024;

}  // namespace

DeviceUsage AggregatePodUsage(const model::DeviceSnapshot& dev, const model::Attribution& a) {
  DeviceUsage u;
  auto find = [&u](std::string_view uid, std::string_view container) -> PodUsage* {
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
    std::string_view container;
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
        std::string_view uid;
        const model::PodMeta* meta = nullptr;
        if (a.metadata != nullptr) {
          auto n = a.metadata->uid_by_name.find(ref.namespace_name + "/" + ref.pod);
          if (n != a.metadata->uid_by_name.end()) {
            uid = n->second;
            if (auto m = a.metadata->by_uid.find(n->second); m != a.metadata->by_uid.end()) {
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

namespace {

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

// Our families' pod labels, after the device's gpu and UUID.
void AddPodLabels(const PodUsage& p, const PodFamiliesOptions& o, std::vector<LabelView>* out) {
  const LabelNames names = o.label_names();
  out->emplace_back(names.ns, p.namespace_name);
  out->emplace_back(names.pod, p.pod);
  out->emplace_back(names.container, p.container);
  // Without metadata the uid is the only name the series has.
  if (o.pod_uid_label || p.meta == nullptr) out->emplace_back("pod_uid", p.uid);
  if (!p.vgpu.empty()) out->emplace_back("vgpu", p.vgpu);
  if (p.meta != nullptr) {
    for (const auto& [name, value] : p.meta->labels) {
      if (!ReservedLabel(name)) out->emplace_back(name, value);
    }
  }
}

struct Family {
  const OwnFamilyDef& def;  // in the registry (render/own_metrics.h)
  enum class Measure { kSm, kMemory, kProcesses } measure;
};

SeriesPoint Measured(uint32_t set, Family::Measure m, uint64_t sm_percent, uint64_t memory_bytes,
                     unsigned processes) {
  switch (m) {
    case Family::Measure::kSm:
      return SeriesPoint::Double(set, static_cast<double>(sm_percent) / 100.0, kToPrometheus);
    case Family::Measure::kMemory:
      return SeriesPoint::Uint(set, memory_bytes);
    case Family::Measure::kProcesses:
      break;
  }
  return SeriesPoint::Uint(set, processes);
}

}  // namespace

bool PerPodSeriesField(fields::PodShare share, const PodFamiliesOptions& options) {
  return options.enabled && options.dcgm_per_pod_series && share != fields::PodShare::kNone;
}

void AddDcgmPerPodLabelSets(std::span<const LabelView> device_labels, const DeviceUsage& usage,
                            const PodFamiliesOptions& options, SeriesModel* model,
                            std::vector<uint32_t>* sets) {
  std::vector<LabelView> labels;
  labels.reserve(device_labels.size() + 5);
  for (const PodUsage& p : usage.pods) {
    labels.assign(device_labels.begin(), device_labels.end());
    // dcgm-exporter's attributes, in the sorted order its template prints them (container,
    // namespace, pod; with -o container_name, pod_name, pod_namespace).
    const LabelNames names = options.label_names();
    if (options.use_old_namespace) {
      labels.emplace_back(names.container, p.container);
      labels.emplace_back(names.pod, p.pod);
      labels.emplace_back(names.ns, p.namespace_name);
    } else {
      labels.emplace_back(names.container, p.container);
      labels.emplace_back(names.ns, p.namespace_name);
      labels.emplace_back(names.pod, p.pod);
    }
    labels.emplace_back("pod_uid", p.uid);
    if (!p.vgpu.empty()) labels.emplace_back("vgpu", p.vgpu);
    sets->push_back(model->AddLabelSet(labels));
  }
}

uint64_t DcgmPerPodValue(fields::PodShare share, const PodUsage& pod) {
  return share == fields::PodShare::kSmPercent ? pod.sm_percent : pod.memory_mib;
}

void AddPodFamilies(const std::vector<PodFamilyDevice>& devices, const PodFamiliesOptions& options,
                    SeriesModel* model) {
  if (!options.enabled || !options.families) return;
  // Our families' device labels, as nvml_exporter_gpu_up has them: gpu and UUID (uuid with -o).
  // dcgm-exporter's camelCase modelName stays on the DCGM families only, so ours are lint-clean.
  std::vector<uint32_t> gpu_sets;               // per device
  std::vector<std::vector<uint32_t>> pod_sets;  // per device, per usage->pods
  gpu_sets.reserve(devices.size());
  pod_sets.resize(devices.size());
  std::vector<LabelView> labels;
  for (size_t i = 0; i < devices.size(); ++i) {
    const model::DeviceIdentity* id = devices[i].dev->identity;
    labels.clear();
    labels.emplace_back("gpu", model->InternInt(id != nullptr ? id->index : 0));
    // A UUID that could not be read is left out, never UUID="" (as on nvml_exporter_gpu_up).
    if (id != nullptr && !id->uuid.empty()) {
      labels.emplace_back(options.label_names().uuid, id->uuid);
    }
    const size_t device_labels = labels.size();
    gpu_sets.push_back(model->AddLabelSet(labels));
    for (const PodUsage& p : devices[i].usage->pods) {
      labels.resize(device_labels);
      AddPodLabels(p, options, &labels);
      pod_sets[i].push_back(model->AddLabelSet(labels));
    }
  }
  static constexpr Family kPodFamilies[] = {
      {OwnFamily("nvml_exporter_pod_gpu_sm_utilization_ratio"), Family::Measure::kSm},
      {OwnFamily("nvml_exporter_pod_gpu_memory_used_bytes"), Family::Measure::kMemory},
      {OwnFamily("nvml_exporter_pod_gpu_processes"), Family::Measure::kProcesses},
  };
  for (const Family& f : kPodFamilies) {
    SeriesFamily& family = AddOwnFamily(model, f.def);
    for (size_t i = 0; i < devices.size(); ++i) {
      const std::vector<PodUsage>& pods = devices[i].usage->pods;
      for (size_t k = 0; k < pods.size(); ++k) {
        const PodUsage& p = pods[k];
        family.points.push_back(
            Measured(pod_sets[i][k], f.measure, p.sm_percent, p.memory_bytes, p.processes));
      }
    }
  }
  static constexpr Family kGpuFamilies[] = {
      {OwnFamily("nvml_exporter_gpu_processes"), Family::Measure::kProcesses},
      {OwnFamily("nvml_exporter_gpu_process_memory_used_bytes"), Family::Measure::kMemory},
      {OwnFamily("nvml_exporter_gpu_process_sm_utilization_ratio"), Family::Measure::kSm},
  };
  for (const Family& f : kGpuFamilies) {
    SeriesFamily& family = AddOwnFamily(model, f.def);
    for (size_t i = 0; i < devices.size(); ++i) {
      const DeviceUsage& u = *devices[i].usage;
      family.points.push_back(
          Measured(gpu_sets[i], f.measure, u.sm_percent, u.memory_bytes, u.processes));
    }
  }
  SeriesFamily& unattributed =
      AddOwnFamily(model, OwnFamily("nvml_exporter_gpu_unattributed_processes"));
  for (size_t i = 0; i < devices.size(); ++i) {
    unattributed.points.push_back(SeriesPoint::Uint(gpu_sets[i], devices[i].usage->unattributed));
  }
}

}  // namespace nvmlx::render
