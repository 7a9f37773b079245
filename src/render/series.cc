#include "render/series.h"

#include <algorithm>
#include <chrono>
#include <span>
#include <string_view>
#include <variant>

#include "fields/catalog.h"
#include "fields/clock_event_names.h"
#include "fields/field_roles.h"
#include "fields/xid_text.h"
#include "plan/field_plan.h"

namespace nvmlx::render {
namespace {

using fields::Role;

bool ByName(const LabelView& a, const LabelView& b) { return a.first < b.first; }

// The attribute sets of one device: the cross product of the pods holding it (with vgpu when
// shared, with the dra_* claim labels when held through DRA) and its HPC jobs, in attribution
// order, or one empty set; each followed by one copy per engine container using the device
// (--container-labels: container="<name>", always that spelling, as dcgm-exporter's
// containerMapper appends a labelled copy after each series). Names as dcgm-exporter spells them
// (-o: container_name, pod_name, pod_namespace), sorted byte-wise as its template prints
// attributes. Appends the sets, each as [begin, end) of *attrs with its pod, to *ranges.
struct AttributeSet {
  size_t begin = 0, end = 0;
  const model::PodRef* pod = nullptr;  // null: no pod in this set
};
void AttributeSets(const model::DeviceIdentity& id, const model::Attribution& attribution,
                   bool old_names, bool pod_uid, std::vector<LabelView>* attrs,
                   std::vector<AttributeSet>* ranges) {
  static const std::vector<model::PodRef> kNoPods;
  static const std::vector<std::string> kNoJobs;
  const std::vector<model::PodRef>* pods = &kNoPods;
  const std::vector<std::string>* jobs = &kNoJobs;
  const std::vector<std::string>* containers = &kNoJobs;
  if (attribution.devices != nullptr || attribution.hpc != nullptr ||
      attribution.containers != nullptr) {
    const std::string& key = id.DeviceKey();
    if (attribution.containers != nullptr) {
      const auto& by_device = attribution.containers->names_by_device;
      if (auto it = by_device.find(key); it != by_device.end()) containers = &it->second;
    }
    if (attribution.devices != nullptr) {
      const auto& by_device = attribution.devices->pods_by_device;
      if (auto it = by_device.find(key); it != by_device.end()) pods = &it->second;
    }
    if (attribution.hpc != nullptr) {
      const auto& by_device = attribution.hpc->jobs_by_device;
      if (auto it = by_device.find(key); it != by_device.end()) jobs = &it->second;
    }
  }
  const size_t npods = std::max<size_t>(pods->size(), 1);
  const size_t njobs = std::max<size_t>(jobs->size(), 1);
  // A pod's set has its own container label (and the engine's are off under -k anyway).
  const size_t ncontainers = pods->empty() ? containers->size() : 0;
  for (size_t p = 0; p < npods; ++p) {
    for (size_t k = 0; k < njobs * (ncontainers + 1); ++k) {
      const size_t j = k / (ncontainers + 1);  // the HPC job
      const size_t c = k % (ncontainers + 1);  // 0: no engine container, else container c - 1
      const size_t begin = attrs->size();
      const model::PodRef* set_pod = p < pods->size() ? &(*pods)[p] : nullptr;
      if (set_pod != nullptr) {
        const model::PodRef& pod = *set_pod;
        const LabelNames names = LabelNamesFor(old_names);
        attrs->emplace_back(names.container, pod.container);
        attrs->emplace_back(names.ns, pod.namespace_name);
        attrs->emplace_back(names.pod, pod.pod);
        if (pod.dra) {
          // dcgm-exporter's DRA copy: pod, namespace, container and the claim (MIG: with the
          // profile and MIG UUID); no vgpu. pod_uid and the pod labels as on a device-plugin
          // holder (4.8.4 fixed the missing pod_uid, upstream #718: docs/dcgm-compat.md §6).
          const model::DraAllocation& d = *pod.dra;
          attrs->emplace_back("dra_claim_name", d.claim_name);
          attrs->emplace_back("dra_claim_namespace", d.claim_namespace);
          attrs->emplace_back("dra_driver_name", d.driver);
          attrs->emplace_back("dra_pool_name", d.pool);
          attrs->emplace_back("dra_device_name", d.device);
          if (!d.mig_device_uuid.empty()) {
            attrs->emplace_back("dra_mig_profile", d.mig_profile);
            attrs->emplace_back("dra_mig_device_uuid", d.mig_device_uuid);
          }
        } else if (!pod.vgpu.empty()) {
          attrs->emplace_back("vgpu", pod.vgpu);
        }
        if (const std::string* uid = pod_uid ? model::FindPodUid(attribution, pod) : nullptr) {
          attrs->emplace_back("pod_uid", *uid);
        }
      }
      if (j < jobs->size()) attrs->emplace_back("hpc_job", (*jobs)[j]);
      if (c > 0) attrs->emplace_back("container", (*containers)[c - 1]);
      std::stable_sort(attrs->begin() + static_cast<std::ptrdiff_t>(begin), attrs->end(), ByName);
      ranges->push_back({begin, attrs->size(), set_pod});
    }
  }
}

// Where each device stands in its GPU's MIG layout: the position of a MIG instance's GPU in
// snapshot.devices (a GPU's instances follow it), and whether a GPU has instances there.
struct MigLayout {
  static constexpr size_t kNoParent = SIZE_MAX;
  std::vector<size_t> parent;       // kNoParent for a GPU
  std::vector<bool> has_instances;  // for a GPU
};
MigLayout LayoutOf(const model::Snapshot& snapshot) {
  MigLayout m;
  const size_t n = snapshot.devices.size();
  m.parent.assign(n, MigLayout::kNoParent);
  m.has_instances.assign(n, false);
  size_t gpu = MigLayout::kNoParent;
  for (size_t i = 0; i < n; ++i) {
    const model::DeviceIdentity* id = snapshot.devices[i].identity;
    if (id == nullptr) continue;
    if (!id->mig) {
      gpu = i;
    } else if (gpu != MigLayout::kNoParent && snapshot.devices[gpu].identity->index == id->index) {
      m.parent[i] = gpu;
      m.has_instances[gpu] = true;
    }
  }
  return m;
}

// A MIG instance as dcgm-exporter shows it (its FE_GPU_I entity): its own samples plus its GPU's
// GPU-wide ones (on a MIG-enabled GPU the collector reads only GPU-wide fields on the GPU and
// only per-instance fields on the instances; should both have a field, the instance's wins),
// and the GPU's Xids and clock events (not its health and P2P status). Into *out.
//
// Built from a copy of the whole instance, then the members that are the GPU's replaced: a
// member added to DeviceSnapshot later is carried to the instance's series as it is, never lost
// by a copy that forgot it (issue 39). A new GPU-wide member must be added to the replacements.
void WithGpuFields(const model::DeviceSnapshot& instance, const model::DeviceSnapshot& gpu,
                   model::DeviceSnapshot* out) {
  *out = instance;
  out->up = instance.up && gpu.up;
  // The instance's samples, then the GPU's that the instance has not (stable: the instance's
  // first among equal ids, so unique keeps it).
  out->samples.insert(out->samples.end(), gpu.samples.begin(), gpu.samples.end());
  std::stable_sort(
      out->samples.begin(), out->samples.end(),
      [](const model::Sample& a, const model::Sample& b) { return a.field_id < b.field_id; });
  out->samples.erase(std::unique(out->samples.begin(), out->samples.end(),
                                 [](const model::Sample& a, const model::Sample& b) {
                                   return a.field_id == b.field_id;
                                 }),
                     out->samples.end());
  // GPU-wide: Xid and clock events are the GPU's (the collector watches them per GPU).
  out->xid_watched = gpu.xid_watched;
  out->xid_counts = gpu.xid_counts;
  out->clock_events_watched = gpu.clock_events_watched;
  out->clock_events_sampled = gpu.clock_events_sampled;
  out->clock_event_counts = gpu.clock_event_counts;
  out->xid_totals = gpu.xid_totals;
  out->clock_event_totals = gpu.clock_event_totals;
  // Health and P2P status stay on the GPU: upstream's collectors for them iterate GPUs only.
  out->health.clear();
  out->p2p.clear();
}

// The pod labels (--kubernetes-enable-pod-labels) of an attribute set's pod, from the API
// server's metadata: empty when the set has no pod or the metadata does not know it (yet).
std::span<const std::pair<std::string, std::string>> PodLabelsOf(
    const model::Attribution& attribution, const model::PodRef* pod) {
  // DRA copies too: dcgm-exporter copies the holder's labels onto them (since 4.8.3).
  if (pod == nullptr || attribution.metadata == nullptr) return {};
  const std::string* uid = model::FindPodUid(attribution, *pod);
  if (uid == nullptr) return {};
  auto it = attribution.metadata->by_uid.find(*uid);
  if (it == attribution.metadata->by_uid.end()) return {};
  return it->second.labels;
}

// Builds label sets of one device from its parts: fixed labels (gpu .. Hostname), the CSV's
// label fields and the set's pod labels (sorted together, as dcgm-exporter's template prints
// its Labels map), and an attribute set (sorted). Reuses scratch vectors.
class DeviceLabels {
 public:
  explicit DeviceLabels(SeriesModel* model) : model_(model) {}

  std::vector<LabelView>& base() { return base_; }  // fixed labels then CSV labels
  void set_fixed_size(size_t n) { fixed_size_ = n; }

  // The pod labels of the attribute set `attrs` that follow until the next call: merged into
  // the CSV labels, except a name that a fixed label, a CSV label or an attribute already has
  // (dcgm-exporter drops pod labels that collide with attributes; a duplicate name would make
  // the line invalid).
  void UsePodLabels(std::span<const std::pair<std::string, std::string>> pod_labels,
                    std::span<const LabelView> attrs) {
    with_pod_.clear();
    if (pod_labels.empty()) return;
    with_pod_.assign(base_.begin(), base_.end());
    auto taken = [&](std::string_view name) {
      for (const LabelView& l : base_) {
        if (l.first == name) return true;
      }
      for (const LabelView& l : attrs) {
        if (l.first == name) return true;
      }
      return false;
    };
    for (const auto& [name, value] : pod_labels) {
      if (!taken(name)) with_pod_.emplace_back(name, value);
    }
    std::stable_sort(with_pod_.begin() + static_cast<std::ptrdiff_t>(fixed_size_), with_pod_.end(),
                     ByName);
  }

  // base + attrs.
  uint32_t Plain(std::span<const LabelView> attrs) {
    const std::vector<LabelView>& base = current();
    scratch_.assign(base.begin(), base.end());
    scratch_.insert(scratch_.end(), attrs.begin(), attrs.end());
    return model_->AddLabelSet(scratch_);
  }
  // fixed + (CSV labels, pod labels and `labels`, sorted) + attrs.
  uint32_t WithLabels(std::span<const LabelView> labels, std::span<const LabelView> attrs) {
    const std::vector<LabelView>& base = current();
    scratch_.assign(base.begin(), base.end());
    scratch_.insert(scratch_.end(), labels.begin(), labels.end());
    std::stable_sort(scratch_.begin() + static_cast<std::ptrdiff_t>(fixed_size_), scratch_.end(),
                     ByName);
    scratch_.insert(scratch_.end(), attrs.begin(), attrs.end());
    return model_->AddLabelSet(scratch_);
  }
  // base + (attrs and `more`, sorted).
  uint32_t WithAttributes(std::span<const LabelView> attrs, std::span<const LabelView> more) {
    const std::vector<LabelView>& base = current();
    scratch_.assign(base.begin(), base.end());
    const size_t at = scratch_.size();
    scratch_.insert(scratch_.end(), attrs.begin(), attrs.end());
    scratch_.insert(scratch_.end(), more.begin(), more.end());
    std::stable_sort(scratch_.begin() + static_cast<std::ptrdiff_t>(at), scratch_.end(), ByName);
    return model_->AddLabelSet(scratch_);
  }

 private:
  const std::vector<LabelView>& current() const { return with_pod_.empty() ? base_ : with_pod_; }

  SeriesModel* model_;
  std::vector<LabelView> base_;
  std::vector<LabelView> with_pod_;  // base_ and the current set's pod labels; empty: none
  size_t fixed_size_ = 0;
  std::vector<LabelView> scratch_;
};

// The labels of a GPU's own series: gpu, and UUID when it could be read (never UUID="").
std::vector<LabelView> GpuLabels(SeriesModel* model, const model::DeviceIdentity& id,
                                 std::string_view uuid_label) {
  std::vector<LabelView> set = {{"gpu", model->InternInt(id.index)}};
  if (!id.uuid.empty()) set.emplace_back(uuid_label, id.uuid);
  return set;
}

// Reads that finished after the read deadline (docs/faults.md): only while some GPU's reads are
// slow, so that pages of healthy GPUs are unchanged.
void AddSlowReads(const model::Snapshot& snapshot, std::string_view uuid_label,
                  SeriesModel* model) {
  bool any_late = false;
  for (const model::DeviceSnapshot& dev : snapshot.devices) any_late |= dev.late;
  if (!any_late) return;
  SeriesFamily& late = AddOwnFamily(model, OwnFamily("nvml_exporter_gpu_slow_reads"));
  for (const model::DeviceSnapshot& dev : snapshot.devices) {
    if (dev.identity == nullptr || dev.identity->mig) continue;
    late.points.push_back(
        SeriesPoint::Int(model->AddLabelSet(GpuLabels(model, *dev.identity, uuid_label)),
                         dev.late ? 1 : 0, kToPrometheus));
  }
}

// PM sampling's alternation (docs/pm-sampling.md §3): per GPU the configurations it cycles
// through, and per served field the fraction of the last window it was measured in.
void AddPmCoverage(const model::Snapshot& snapshot, std::string_view uuid_label,
                   SeriesModel* model) {
  SeriesFamily& configs =
      AddOwnFamily(model, OwnFamily("nvml_exporter_pm_sampling_configurations"));
  for (const model::DeviceSnapshot& dev : snapshot.devices) {
    if (dev.identity == nullptr || !dev.pm_sampling) continue;
    configs.points.push_back(
        SeriesPoint::Int(model->AddLabelSet(GpuLabels(model, *dev.identity, uuid_label)),
                         static_cast<int64_t>(dev.pm_sampling->configurations), kToPrometheus));
  }
  SeriesFamily& coverage =
      AddOwnFamily(model, OwnFamily("nvml_exporter_pm_sampling_coverage_ratio"));
  for (const model::DeviceSnapshot& dev : snapshot.devices) {
    if (dev.identity == nullptr || !dev.pm_sampling) continue;
    for (const model::FieldCoverage& c : dev.pm_sampling->coverage) {
      const fields::FieldDef* f = fields::FindById(c.field_id);
      if (f == nullptr) continue;
      std::vector<LabelView> set = GpuLabels(model, *dev.identity, uuid_label);
      set.emplace_back("field", f->name);
      coverage.points.push_back(
          SeriesPoint::Double(model->AddLabelSet(set), c.ratio, kToPrometheus));
    }
  }
}

// The exporter's own families, after every other: collection time, GPU health, build, and the
// attribution sources' failures. Each through the one builder, from the registry
// (render/own_metrics.h).
void AddSelfFamilies(const model::Snapshot& snapshot, const SeriesOptions& options,
                     SeriesModel* model) {
  const uint32_t no_labels = model->AddLabelSet({});
  AddOwnFamily(model, OwnFamily("nvml_exporter_collect_duration_seconds"))
      .points.push_back(SeriesPoint::Double(no_labels, snapshot.collect_seconds, kToPrometheus));
  AddOwnFamily(model, OwnFamily("nvml_exporter_last_collect_timestamp_seconds"))
      .points.push_back(SeriesPoint::Millis(
          no_labels,
          std::chrono::duration_cast<std::chrono::milliseconds>(snapshot.time.time_since_epoch())
              .count()));

  SeriesFamily& up = AddOwnFamily(model, OwnFamily("nvml_exporter_gpu_up"));
  const std::string_view uuid_label = LabelNamesFor(options.use_old_namespace).uuid;
  for (const model::DeviceSnapshot& dev : snapshot.devices) {
    // One per physical GPU: a MIG instance is up exactly when its GPU is.
    if (dev.identity == nullptr || dev.identity->mig) continue;
    up.points.push_back(
        SeriesPoint::Int(model->AddLabelSet(GpuLabels(model, *dev.identity, uuid_label)),
                         dev.up ? 1 : 0, kToPrometheus));
  }
  // A read stuck in the driver (docs/faults.md): the GPU's series of those reads are left out.
  SeriesFamily& stale = AddOwnFamily(model, OwnFamily("nvml_exporter_gpu_stale"));
  for (const model::DeviceSnapshot& dev : snapshot.devices) {
    if (dev.identity == nullptr || dev.identity->mig) continue;
    for (const bool slow : {false, true}) {
      std::vector<LabelView> set = GpuLabels(model, *dev.identity, uuid_label);
      set.emplace_back("reads", slow ? "slow" : "fast");
      const bool is_stale = slow ? dev.slow_stale : dev.stale;
      stale.points.push_back(
          SeriesPoint::Int(model->AddLabelSet(set), is_stale ? 1 : 0, kToPrometheus));
    }
  }

  AddSlowReads(snapshot, uuid_label, model);

  // PM sampling's state (docs/pm-sampling.md §5), only where it serves a GPU: pages of GPUs
  // served by GPM alone are unchanged.
  bool any_pm = false;
  for (const model::DeviceSnapshot& dev : snapshot.devices) any_pm |= dev.pm_sampling.has_value();
  if (any_pm) {
    // One family at a time: AddFamily may move the families added before it.
    for (const bool losses : {false, true}) {
      SeriesFamily& f =
          AddOwnFamily(model, losses ? OwnFamily("nvml_exporter_pm_sampling_losses_total")
                                     : OwnFamily("nvml_exporter_pm_sampling_active"));
      for (const model::DeviceSnapshot& dev : snapshot.devices) {
        if (dev.identity == nullptr || !dev.pm_sampling) continue;
        const int64_t v = losses ? static_cast<int64_t>(dev.pm_sampling->losses)
                                 : (dev.pm_sampling->active ? 1 : 0);
        f.points.push_back(SeriesPoint::Int(
            model->AddLabelSet(GpuLabels(model, *dev.identity, uuid_label)), v, kToPrometheus));
      }
    }
    AddPmCoverage(snapshot, uuid_label, model);
  }

  const LabelView build[] = {{"version", options.build.version},
                             {"revision", options.build.revision},
                             {"nvml_library", options.build.nvml_library},
                             {"driver_version", options.build.driver_version}};
  AddOwnFamily(model, OwnFamily("nvml_exporter_build_info"))
      .points.push_back(SeriesPoint::Int(model->AddLabelSet(build), 1, kToPrometheus));

  // --container-labels: the containers left out by the per-GPU cap, while the engine answers.
  if (const auto& containers = snapshot.attribution.containers; containers != nullptr) {
    AddOwnFamily(model, OwnFamily("nvml_exporter_container_labels_dropped"))
        .points.push_back(SeriesPoint::Uint(no_labels, containers->dropped));
  }
  // --collectors-unknown-fields=skip: the rows of the plan in use that name no field we know.
  if (snapshot.plan != nullptr && !snapshot.plan->unknown_names().empty()) {
    SeriesFamily& skipped = AddOwnFamily(model, OwnFamily("nvml_exporter_collectors_skipped"));
    for (const std::string& name : snapshot.plan->unknown_names()) {
      const LabelView labels[] = {{"name", model->Intern(name)}};
      skipped.points.push_back(SeriesPoint::Int(model->AddLabelSet(labels), 1, kToPrometheus));
    }
  }
  if (options.attribution_errors) {
    const auto counts = options.attribution_errors->Counts();
    if (!counts.empty()) {
      SeriesFamily& errors =
          AddOwnFamily(model, OwnFamily("nvml_exporter_attribution_errors_total"));
      for (const auto& [source, count] : counts) {
        const LabelView labels[] = {{"source", model->Intern(source)}};
        errors.points.push_back(SeriesPoint::Uint(model->AddLabelSet(labels), count));
      }
    }
  }
}

// DCGM_EXP_P2P_STATUS's link_status label: dcgm-exporter's names of nvmlGpuP2PStatus_t
// (collector/p2p_status_collector.go p2pStatusToString); anything else is "Unknown".
std::string_view P2pStatusName(int status) {
  switch (status) {
    case 0:
      return "OK";
    case 1:
      return "ChipsetNotSupported";
    case 2:
      return "GPUNotSupported";
    case 3:
      return "TopologyNotSupported";
    case 4:
      return "DisabledByRegKey";
    case 5:
      return "NotSupported";
    default:
      return "Unknown";
  }
}

// Builds one SeriesModel from one snapshot: the DCGM families of its plan, device by device and
// attribute set by attribute set, then the per-pod and self families. One per BuildSeries call.
class SeriesBuilder {
 public:
  SeriesBuilder(const model::Snapshot& snapshot, const SeriesOptions& options, SeriesModel* out)
      : snap_(snapshot), options_(options), out_(out), labels_(out) {}

  void Build() {
    out_->Clear();
    if (snap_.plan != nullptr) families_ = &snap_.plan->families();
    for (const plan::Family& f : *families_) {
      SeriesFamily& family = out_->AddFamily();
      family.name = f.row->name;
      family.help = f.row->help;
      family.type = config::MetricTypeName(f.row->type);
      family.entry = f.row;
      family.points.reserve(snap_.devices.size());
    }
    // Reserved: pod_devices_ keeps pointers into usage_ and instance_views_.
    usage_.reserve(snap_.devices.size());
    instance_views_.reserve(snap_.devices.size());
    pod_devices_.reserve(snap_.devices.size());
    xid_window_ = out_->InternInt(snap_.xid_window_ms);
    clock_events_window_ = out_->InternInt(snap_.clock_events_window_ms);
    const MigLayout mig = LayoutOf(snap_);
    for (size_t di = 0; di < snap_.devices.size(); ++di) AddDevice(di, mig);
    // Families with no series are omitted altogether, as dcgm-exporter does. (A family's
    // EMF-only points come only with Prometheus ones, so each family left has a Prometheus line.)
    std::erase_if(out_->families, [](const SeriesFamily& f) { return f.points.empty(); });
    AddPodFamilies(pod_devices_, options_.pods, out_);
    AddSelfFamilies(snap_, options_, out_);
  }

 private:
  // What the series of one attribute set of the current device share.
  struct SetContext {
    std::span<const LabelView> attrs;  // the set's attributes
    uint32_t plain = 0;                // the label set of its plain fields
    size_t index = 0;                  // which set of the device (0: the first)
    bool only_set_is_bare = false;     // the device's one set has no attributes
  };

  // The series of device di (in dcgm-exporter's MIG shape unless mig_gpu_fields_on_parent).
  void AddDevice(size_t di, const MigLayout& mig) {
    const model::DeviceSnapshot* devp = &snap_.devices[di];
    // A MIG-enabled GPU's own series, or a lost GPU's: health and P2P only.
    gpu_status_only_ = false;
    if (!options_.mig_gpu_fields_on_parent) {
      // dcgm-exporter's shape: a MIG-enabled GPU's fields are on each of its instances, except
      // health and P2P status, which its collectors give per GPU only.
      gpu_status_only_ = mig.has_instances[di];
      if (mig.parent[di] != MigLayout::kNoParent) {
        // A view of its own per instance (reserved: stable): pod_devices_ keeps pointing to it
        // until AddPodFamilies, after every device.
        model::DeviceSnapshot& view = instance_views_.emplace_back();
        WithGpuFields(*devp, snap_.devices[mig.parent[di]], &view);
        devp = &view;
      }
    }
    const model::DeviceSnapshot& dev = *devp;
    if (dev.identity == nullptr) return;
    // A lost GPU keeps its health series (DCGM fails its ALL watch: fallen off the bus), nothing
    // else; any other device that is not up has no series.
    if (!dev.up) {
      if (dev.health.empty()) return;
      gpu_status_only_ = true;
    }
    SetBaseLabels(*dev.identity);
    attrs_.clear();
    sets_.clear();
    AttributeSets(*dev.identity, snap_.attribution, options_.use_old_namespace,
                  options_.device_pod_uid, &attrs_, &sets_);
    pods_ = nullptr;
    if (options_.pods.enabled && dev.up) {
      pods_ = &usage_.emplace_back(AggregatePodUsage(dev, snap_.attribution));
      pod_devices_.push_back({&dev, pods_});
    }
    bare_ = kNone;
    pod_sets_.clear();
    pod_sets_made_ = false;
    // One copy of the device's series per (pod, HPC job) attribute set.
    for (size_t s = 0; s < sets_.size(); ++s) {
      SetContext set;
      set.attrs = {attrs_.data() + sets_[s].begin, sets_[s].end - sets_[s].begin};
      labels_.UsePodLabels(options_.pod_labels
                               ? PodLabelsOf(snap_.attribution, sets_[s].pod)
                               : std::span<const std::pair<std::string, std::string>>(),
                           set.attrs);
      set.plain = labels_.Plain(set.attrs);
      set.index = s;
      set.only_set_is_bare = sets_.size() == 1 && set.attrs.empty();
      for (size_t f = 0; f < families_->size(); ++f) AddFamilySeries(f, dev, set);
    }
  }

  // gpu .. Hostname, then the CSV's label fields (sorted by name, as the plan's label rows are).
  void SetBaseLabels(const model::DeviceIdentity& id) {
    std::vector<LabelView>& base = labels_.base();
    base.clear();
    const std::string_view index = out_->InternInt(id.index);
    base.emplace_back("gpu", index);
    // A UUID that could not be read at start (logged then) leaves the label out rather than
    // rendering `UUID=""` (docs/faults.md).
    if (!id.uuid.empty())
      base.emplace_back(LabelNamesFor(options_.use_old_namespace).uuid, id.uuid);
    base.emplace_back("pci_bus_id", id.pci_bus_id);
    base.emplace_back("device", out_->Intern("nvidia" + std::string(index)));
    base.emplace_back("modelName", id.model_name);
    if (id.mig) {
      // A MIG instance (DCGM's FE_GPU_I): the parent's labels above, then its profile and GI id.
      base.emplace_back("GPU_I_PROFILE", id.mig->profile);
      base.emplace_back("GPU_I_ID", out_->InternInt(id.mig->gpu_instance_id));
    }
    if (!options_.hostname.empty()) base.emplace_back(options_.hostname_label, options_.hostname);
    labels_.set_fixed_size(base.size());
    if (snap_.plan == nullptr) return;
    for (const config::CollectorEntry* row : snap_.plan->label_rows()) {
      for (const auto& [field_id, value] : id.label_values) {
        if (field_id == row->field->id) {
          base.emplace_back(row->name, value);
          break;
        }
      }
    }
  }

  // Family f's series of one attribute set of `dev`, as its role makes them.
  void AddFamilySeries(size_t f, const model::DeviceSnapshot& dev, const SetContext& set) {
    const plan::Family& family = (*families_)[f];
    if (gpu_status_only_ && !fields::IsGpuStatus(family.role)) return;
    std::vector<SeriesPoint>& points = out_->families[f].points;
    switch (family.role) {
      case Role::kXidCounts:
        return AddXidCounts(dev, set, &points);
      case Role::kHealthStatus:
        // One series per health watch: health_error_code, health_watch (byte-wise order).
        for (const model::HealthResult& h : dev.health) {
          const LabelView extra[] = {{"health_error_code", h.error_code},
                                     {"health_watch", h.watch}};
          points.push_back(SeriesPoint::Int(labels_.WithLabels(extra, set.attrs), h.value));
        }
        return;
      case Role::kP2pStatus:
        // One series per peer GPU: link_status, peer_gpu (byte-wise order).
        for (const model::P2pStatus& p : dev.p2p) {
          const LabelView extra[] = {{"link_status", P2pStatusName(p.value)},
                                     {"peer_gpu", out_->InternInt(p.peer_index)}};
          points.push_back(SeriesPoint::Int(labels_.WithLabels(extra, set.attrs), p.value));
        }
        return;
      case Role::kClockEventCounts:
        return AddClockEventCounts(dev, set, &points);
      case Role::kXidTotals:
        // dcgm-exporter 4.8.3's counter: one series per Xid seen since start (xid only; none
        // before the first Xid).
        for (const model::XidCount& x : dev.xid_totals) {
          const LabelView extra[] = {{"xid", out_->InternInt(x.xid)}};
          points.push_back(SeriesPoint::Int(labels_.WithLabels(extra, set.attrs), x.count));
        }
        return;
      case Role::kClockEventTotals:
        // Its clock-event counter: one series per reason that turned active (clock_event only).
        for (const model::ClockEventCount& c : dev.clock_event_totals) {
          const LabelView extra[] = {{"clock_event", fields::ClockEventName(c.reason)}};
          points.push_back(SeriesPoint::Int(labels_.WithLabels(extra, set.attrs), c.count));
        }
        return;
      case Role::kSample:
      case Role::kLastXid:
        return AddSample(family, dev, set, &points);
    }
  }

  // DCGM_EXP_XID_ERRORS_COUNT: window_size_in_ms and xid, one series per Xid in the window (one
  // valued 0 without xid when there is none).
  void AddXidCounts(const model::DeviceSnapshot& dev, const SetContext& set,
                    std::vector<SeriesPoint>* points) {
    if (!dev.xid_watched) return;
    auto count = [&](const model::XidCount* c) {
      LabelView extra[] = {{"window_size_in_ms", xid_window_}, {"xid", {}}};
      size_t n = 1;
      if (c != nullptr) extra[n++].second = out_->InternInt(c->xid);
      points->push_back(
          SeriesPoint::Int(labels_.WithLabels({extra, n}, set.attrs), c != nullptr ? c->count : 0));
    };
    if (dev.xid_counts.empty()) count(nullptr);
    for (const model::XidCount& c : dev.xid_counts) count(&c);
  }

  // DCGM_EXP_CLOCK_EVENTS_COUNT: clock_event and window_size_in_ms, one series per reason seen
  // (one valued 0 without clock_event when no read succeeded).
  void AddClockEventCounts(const model::DeviceSnapshot& dev, const SetContext& set,
                           std::vector<SeriesPoint>* points) {
    if (!dev.clock_events_watched) return;
    auto event = [&](std::string_view name, int64_t count) {
      LabelView extra[] = {{"clock_event", name}, {"window_size_in_ms", clock_events_window_}};
      const std::span<const LabelView> both(extra, 2);
      points->push_back(SeriesPoint::Int(
          labels_.WithLabels(name.empty() ? both.subspan(1) : both, set.attrs), count));
    };
    if (!dev.clock_events_sampled) {
      event("", 0);
      return;
    }
    for (const model::ClockEventCount& c : dev.clock_event_counts) {
      event(fields::ClockEventName(c.reason), c.count);
    }
  }

  // A field's sample: one series on the set's plain labels (the last Xid with err_code and
  // err_msg; GPU_UTIL and FB_USED of a shared GPU in dcgm-exporter's per-pod shape).
  void AddSample(const plan::Family& family, const model::DeviceSnapshot& dev,
                 const SetContext& set, std::vector<SeriesPoint>* points) {
    const model::Sample* sample = model::FindSample(dev.samples, family.field_id());
    if (sample == nullptr) return;
    SeriesPoint point;
    if (const auto* i = std::get_if<int64_t>(&sample->value)) {
      point = SeriesPoint::Int(set.plain, *i);
    } else if (const auto* d = std::get_if<double>(&sample->value)) {
      point = SeriesPoint::Double(set.plain, *d);
    } else {
      return;  // a string in a numeric family
    }
    if (pods_ != nullptr && PerPodSeriesField(family.pod_share, options_.pods)) {
      return AddPerPodSample(family, point, set, points);
    }
    if (family.role == Role::kLastXid) {
      // dcgm-exporter's attributes err_code and err_msg, sorted with the pod attributes.
      const int64_t xid = point.kind == SeriesPoint::Kind::kInt
                              ? point.int_value
                              : static_cast<int64_t>(point.double_value);
      const LabelView err[] = {{"err_code", out_->InternInt(xid)},
                               {"err_msg", fields::XidDescription(xid)}};
      point.label_set = labels_.WithAttributes(set.attrs, err);
    }
    points->push_back(point);
  }

  // dcgm-exporter 4.8's shape for shared GPUs with per-process data: the device series without
  // pod attributes, then one per pod with that pod's own share (not the device's value copied
  // to every sharing pod). EMF keeps the per-attribute-set copies.
  void AddPerPodSample(const plan::Family& family, SeriesPoint point, const SetContext& set,
                       std::vector<SeriesPoint>* points) {
    if (!set.only_set_is_bare) {
      point.writers = kToEmf;
      points->push_back(point);
    }
    if (set.index != 0) return;
    // The per-pod fields' device series carries no attributes: with one empty attribute set
    // that is the plain label set, else a set of its own.
    if (bare_ == kNone) bare_ = set.only_set_is_bare ? set.plain : labels_.Plain({});
    point.label_set = bare_;
    point.writers = set.only_set_is_bare ? kToBoth : kToPrometheus;
    points->push_back(point);
    if (!pod_sets_made_) {
      AddDcgmPerPodLabelSets(labels_.base(), *pods_, options_.pods, out_, &pod_sets_);
      pod_sets_made_ = true;
    }
    for (size_t k = 0; k < pod_sets_.size(); ++k) {
      points->push_back(
          SeriesPoint::Uint(pod_sets_[k], DcgmPerPodValue(family.pod_share, pods_->pods[k])));
    }
  }

  static constexpr uint32_t kNone = UINT32_MAX;
  static inline const std::vector<plan::Family> kNoFamilies{};

  const model::Snapshot& snap_;
  const SeriesOptions& options_;
  SeriesModel* out_;
  const std::vector<plan::Family>* families_ = &kNoFamilies;
  DeviceLabels labels_;
  std::string_view xid_window_, clock_events_window_;  // the same on every device
  std::vector<model::DeviceSnapshot> instance_views_;  // MIG instances with their GPU's fields
  std::vector<DeviceUsage> usage_;                     // per live device, with options.pods.enabled
  std::vector<PodFamilyDevice> pod_devices_;           // the same devices, pointing into usage_
  // The current device's.
  bool gpu_status_only_ = false;
  std::vector<LabelView> attrs_;
  std::vector<AttributeSet> sets_;  // attribute sets: ranges of attrs_
  const DeviceUsage* pods_ = nullptr;
  uint32_t bare_ = kNone;
  std::vector<uint32_t> pod_sets_;  // the device's per-pod series' label sets
  bool pod_sets_made_ = false;
};

}  // namespace

void BuildSeries(const model::Snapshot& snapshot, const SeriesOptions& options, SeriesModel* out) {
  SeriesBuilder(snapshot, options, out).Build();
}

SeriesFamily& AddOwnFamily(SeriesModel* model, const OwnFamilyDef& def) {
  SeriesFamily& f = model->AddFamily();
  f.name = def.name;
  f.type = def.type;
  f.help = def.help;
  f.emf_unit = def.emf_unit;
  return f;
}

SeriesFamily& AddOwnFamily(SeriesModel* model, std::string_view name, std::string_view type,
                           std::string_view help) {
  return AddOwnFamily(model, OwnFamilyDef{name, type, help});
}

namespace {

// `labels` copied into the model: the label set of one of our own points.
uint32_t OwnLabelSet(SeriesModel* model, std::span<const LabelView> labels) {
  std::vector<LabelView> owned;
  owned.reserve(labels.size());
  for (const LabelView& l : labels) owned.emplace_back(l.first, model->Intern(l.second));
  return model->AddLabelSet(owned);
}

}  // namespace

void AddOwnPoint(SeriesModel* model, SeriesFamily* family, std::span<const LabelView> labels,
                 int64_t value) {
  family->points.push_back(SeriesPoint::Int(OwnLabelSet(model, labels), value, kToPrometheus));
}

void AddOwnDoublePoint(SeriesModel* model, SeriesFamily* family, std::span<const LabelView> labels,
                       double value, uint8_t writers) {
  family->points.push_back(SeriesPoint::Double(OwnLabelSet(model, labels), value, writers));
}

void AddOwnSecondsPoint(SeriesModel* model, SeriesFamily* family, std::span<const LabelView> labels,
                        int64_t milliseconds) {
  family->points.push_back(
      SeriesPoint::Millis(OwnLabelSet(model, labels), milliseconds, kToPrometheus));
}

}  // namespace nvmlx::render
