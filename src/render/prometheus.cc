#include "render/prometheus.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string_view>
#include <system_error>
#include <utility>
#include <variant>

#include "fields/clock_event_names.h"
#include "fields/field_ids.h"
#include "fields/xid_text.h"
#include "render/series.h"
#include "render/text_format.h"

namespace nvmlx::render {
namespace {

using config::CollectorEntry;
using config::MetricType;

void AppendInt(int64_t v, std::string* out) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, end);
}

void AppendUnsigned(uint64_t v, std::string* out) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, end);
}

void AppendLabel(std::string_view name, std::string_view value, bool first, std::string* out) {
  if (!first) out->push_back(',');
  out->append(name);
  out->append("=\"");
  AppendEscapedLabelValue(value, out);
  out->push_back('"');
}

// The per-device label set, from '{' through the last label (no closing brace), built once per
// render and shared by every series of the device: the label part is ~80% of each line.
std::string BuildDeviceLabels(const model::DeviceIdentity& id, const PrometheusOptions& options,
                              const std::vector<const CollectorEntry*>& label_rows) {
  std::string p;
  p.reserve(192);
  p.push_back('{');
  p.append("gpu=\"");
  AppendUnsigned(id.index, &p);
  p.push_back('"');
  AppendLabel(options.use_old_namespace ? "uuid" : "UUID", id.uuid, false, &p);
  AppendLabel("pci_bus_id", id.pci_bus_id, false, &p);
  p.append(",device=\"nvidia");
  AppendUnsigned(id.index, &p);
  p.push_back('"');
  AppendLabel("modelName", id.model_name, false, &p);
  if (id.mig) {
    // A MIG instance (DCGM's FE_GPU_I): the parent's labels above, then its profile and GI id.
    AppendLabel("GPU_I_PROFILE", id.mig->profile, false, &p);
    p.append(",GPU_I_ID=\"");
    AppendUnsigned(id.mig->gpu_instance_id, &p);
    p.push_back('"');
  }
  if (!options.hostname.empty()) AppendLabel(options.hostname_label, options.hostname, false, &p);
  // label_rows is sorted by name and free of duplicate names.
  for (const CollectorEntry* row : label_rows) {
    for (const auto& [field_id, value] : id.label_values) {
      if (field_id == row->field->id) {
        AppendLabel(row->name, value, false, &p);
        break;
      }
    }
  }
  return p;
}

constexpr int kXidErrorsField = fields::ids::kXidErrors;
constexpr int kXidCountField = fields::ids::kXidErrorsCount;
constexpr int kClockEventsCountField = fields::ids::kClockEventsCount;
// One set of attributes of a device's series: a (pod, HPC job) pair, either possibly absent.
// `tail` is the attributes rendered, from ',' through the closing "} ".
struct AttributeSet {
  std::vector<std::pair<std::string_view, std::string>> attrs;  // sorted by name
  std::string tail;
};

// The attribute sets of one device: the cross product of the pods holding it and its HPC jobs,
// or one empty set. Attributes sort byte-wise by name, as dcgm-exporter's template does.
std::vector<AttributeSet> BuildAttributeSets(const model::DeviceIdentity& id,
                                             const model::Attribution& attribution, bool old_names,
                                             bool pod_uid) {
  static const std::vector<model::PodRef> kNoPods;
  static const std::vector<std::string> kNoJobs;
  const std::string& key = id.DeviceKey();
  const std::vector<model::PodRef>* pods = &kNoPods;
  const std::vector<std::string>* jobs = &kNoJobs;
  if (attribution.devices) {
    auto it = attribution.devices->pods_by_device.find(key);
    if (it != attribution.devices->pods_by_device.end()) pods = &it->second;
  }
  if (attribution.hpc) {
    auto it = attribution.hpc->jobs_by_device.find(key);
    if (it != attribution.hpc->jobs_by_device.end()) jobs = &it->second;
  }
  std::vector<AttributeSet> sets;
  const size_t npods = std::max<size_t>(pods->size(), 1);
  const size_t njobs = std::max<size_t>(jobs->size(), 1);
  sets.reserve(npods * njobs);
  for (size_t p = 0; p < npods; ++p) {
    for (size_t j = 0; j < njobs; ++j) {
      AttributeSet set;
      if (p < pods->size()) {
        const model::PodRef& pod = (*pods)[p];
        set.attrs.emplace_back(old_names ? "container_name" : "container", pod.container);
        set.attrs.emplace_back(old_names ? "pod_namespace" : "namespace", pod.namespace_name);
        set.attrs.emplace_back(old_names ? "pod_name" : "pod", pod.pod);
        if (!pod.vgpu.empty()) set.attrs.emplace_back("vgpu", pod.vgpu);
        if (const std::string* uid = pod_uid ? model::FindPodUid(attribution, pod) : nullptr) {
          set.attrs.emplace_back("pod_uid", *uid);
        }
      }
      if (j < jobs->size()) set.attrs.emplace_back("hpc_job", (*jobs)[j]);
      std::sort(set.attrs.begin(), set.attrs.end());
      for (const auto& [name, value] : set.attrs) AppendLabel(name, value, false, &set.tail);
      set.tail.append("} ");
      sets.push_back(std::move(set));
    }
  }
  return sets;
}

// DCGM_FI_DEV_XID_ERRORS carries dcgm-exporter's attributes err_code and err_msg; attributes
// come after all labels, so after the CSV label fields, sorted with the pod attributes.
void AppendXidLastPrefix(const std::string& labels, const AttributeSet& set, const model::Value& v,
                         std::string* out) {
  int64_t xid = 0;
  if (const auto* i = std::get_if<int64_t>(&v)) {
    xid = *i;
  } else if (const auto* d = std::get_if<double>(&v)) {
    xid = static_cast<int64_t>(*d);
  }
  std::vector<std::pair<std::string_view, std::string>> attrs = set.attrs;
  attrs.emplace_back("err_code", std::to_string(xid));
  attrs.emplace_back("err_msg", fields::XidDescription(xid));
  std::sort(attrs.begin(), attrs.end());
  out->append(labels);
  for (const auto& [name, value] : attrs) AppendLabel(name, value, false, out);
  out->append("} ");
}

// DCGM_EXP_XID_ERRORS_COUNT: one series per Xid seen in the window, labels window_size_in_ms
// then xid (sorted with the CSV label fields, byte-wise: upper-case DCGM_FI_* names first).
// With no Xid in the window, one series valued 0 without an xid label, as dcgm-exporter does.
void AppendXidCounts(const model::DeviceSnapshot& dev, std::string_view name,
                     const std::string& labels, const std::string& tail, int64_t window_ms,
                     std::string* out) {
  if (!dev.xid_watched) return;
  auto series = [&](const model::XidCount* c) {
    out->append(name);
    out->append(labels);
    out->append(",window_size_in_ms=\"");
    AppendInt(window_ms, out);
    out->push_back('"');
    if (c != nullptr) {
      out->append(",xid=\"");
      AppendInt(c->xid, out);
      out->push_back('"');
    }
    out->append(tail);
    AppendInt(c != nullptr ? c->count : 0, out);
    out->push_back('\n');
  };
  if (dev.xid_counts.empty()) series(nullptr);
  for (const model::XidCount& c : dev.xid_counts) series(&c);
}

// DCGM_EXP_CLOCK_EVENTS_COUNT: one series per reason seen in the window, labels clock_event then
// window_size_in_ms (byte-wise sorted with the CSV label fields, as dcgm-exporter's label map).
// As dcgm-exporter: a GPU with samples in the window but no reason active gets no series at all;
// one with no sample (every read failed) gets one series valued 0 without clock_event.
void AppendClockEventCounts(const model::DeviceSnapshot& dev, std::string_view name,
                            const std::string& labels, const std::string& tail, int64_t window_ms,
                            std::string* out) {
  if (!dev.clock_events_watched) return;
  auto series = [&](std::string_view event, int64_t count) {
    out->append(name);
    out->append(labels);
    if (!event.empty()) AppendLabel("clock_event", event, false, out);
    out->append(",window_size_in_ms=\"");
    AppendInt(window_ms, out);
    out->push_back('"');
    out->append(tail);
    AppendInt(count, out);
    out->push_back('\n');
  };
  if (!dev.clock_events_sampled) {
    series("", 0);
    return;
  }
  for (const model::ClockEventCount& c : dev.clock_event_counts) {
    series(fields::ClockEventName(c.reason), c.count);
  }
}

const model::Value* FindSample(const std::vector<model::Sample>& samples, int field_id) {
  // Samples are in ascending field id (DeviceReader's contract).
  auto it = std::lower_bound(samples.begin(), samples.end(), field_id,
                             [](const model::Sample& s, int id) { return s.field_id < id; });
  if (it == samples.end() || it->field_id != field_id) return nullptr;
  return &it->value;
}

// Appends "<value>\n"; false (nothing appended) for a string value, which would be an invalid
// sample in a numeric family.
bool AppendValue(const model::Value& value, std::string* out) {
  if (const auto* i = std::get_if<int64_t>(&value)) {
    AppendInt(*i, out);
  } else if (const auto* d = std::get_if<double>(&value)) {
    AppendGoFixed(*d, out);
  } else {
    return false;
  }
  out->push_back('\n');
  return true;
}

void AppendSelfMetrics(const model::Snapshot& snapshot, const PrometheusOptions& options,
                       std::string* out) {
  AppendHelpType("nvml_exporter_collect_duration_seconds",
                 "Time the last collection of all devices took, in seconds.", "gauge", out);
  out->append("nvml_exporter_collect_duration_seconds ");
  AppendGoFixed(snapshot.collect_seconds, out);
  out->push_back('\n');

  AppendHelpType("nvml_exporter_last_collect_timestamp_seconds",
                 "Unix time when the last collection started, in seconds.", "gauge", out);
  out->append("nvml_exporter_last_collect_timestamp_seconds ");
  // Integer milliseconds printed as seconds with 3 decimals: exact, no float rounding.
  int64_t ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(snapshot.time.time_since_epoch())
          .count();
  if (ms < 0) {
    out->push_back('-');
    ms = -ms;
  }
  AppendInt(ms / 1000, out);
  out->push_back('.');
  int64_t frac = ms % 1000;
  if (frac < 100) out->push_back('0');
  if (frac < 10) out->push_back('0');
  AppendInt(frac, out);
  out->push_back('\n');

  AppendHelpType("nvml_exporter_gpu_up",
                 "1 if the last collection could read the GPU, 0 if it is lost or every read "
                 "failed.",
                 "gauge", out);
  const std::string_view uuid_label = options.use_old_namespace ? "uuid" : "UUID";
  for (const model::DeviceSnapshot& dev : snapshot.devices) {
    // One per physical GPU: a MIG instance is up exactly when its GPU is.
    if (dev.identity == nullptr || dev.identity->mig) continue;
    out->append("nvml_exporter_gpu_up{gpu=\"");
    AppendUnsigned(dev.identity->index, out);
    out->push_back('"');
    AppendLabel(uuid_label, dev.identity->uuid, false, out);
    out->append(dev.up ? "} 1\n" : "} 0\n");
  }

  AppendHelpType("nvml_exporter_build_info",
                 "Build and runtime information of nvml-exporter; the value is always 1.", "gauge",
                 out);
  out->append("nvml_exporter_build_info{");
  AppendLabel("version", options.build.version, true, out);
  AppendLabel("revision", options.build.revision, false, out);
  AppendLabel("nvml_library", options.build.nvml_library, false, out);
  AppendLabel("driver_version", options.build.driver_version, false, out);
  out->append("} 1\n");

  if (options.attribution_errors) {
    const auto counts = options.attribution_errors->Counts();
    if (!counts.empty()) {
      AppendHelpType("nvml_exporter_attribution_errors_total",
                     "Failed refreshes of an attribution source (kubelet, cgroup, apiserver, "
                     "hpc); the last good attribution stays in use.",
                     "counter", out);
      for (const auto& [source, count] : counts) {
        out->append("nvml_exporter_attribution_errors_total{");
        AppendLabel("source", source, true, out);
        out->append("} ");
        AppendUnsigned(count, out);
        out->push_back('\n');
      }
    }
  }
}

}  // namespace

void RenderPrometheus(const model::Snapshot& snapshot, const PrometheusOptions& options,
                      std::string* out) {
  out->clear();

  // Families and label rows in the shared order (render/series.h), duplicates dropped.
  const OrderedRows rows = OrderRows(options.entries);
  const std::vector<const CollectorEntry*>& families = rows.families;
  const std::vector<const CollectorEntry*>& label_rows = rows.label_rows;

  // Devices that get series, with their labels and attribute sets (one series per set).
  struct LiveDevice {
    const model::DeviceSnapshot* dev;
    std::string labels;
    std::vector<AttributeSet> sets;
    DeviceSeriesPrefix bare;  // the labels without attributes, for the per-pod families
  };
  std::vector<LiveDevice> live;
  live.reserve(snapshot.devices.size());
  size_t series_per_family = 0;
  for (const model::DeviceSnapshot& dev : snapshot.devices) {
    if (!dev.up || dev.identity == nullptr) continue;
    LiveDevice d{&dev,
                 BuildDeviceLabels(*dev.identity, options, label_rows),
                 BuildAttributeSets(*dev.identity, snapshot.attribution, options.use_old_namespace,
                                    options.device_pod_uid),
                 {}};
    d.bare = {&dev, d.labels + "} "};
    series_per_family += d.sets.size();
    live.push_back(std::move(d));
  }

  // Size estimate: each series is name + labels + attributes + ~16 value bytes; HELP/TYPE ~ 2
  // names + help.
  size_t estimate = 2048;
  size_t prefix_total = 0;
  for (const LiveDevice& d : live) {
    for (const AttributeSet& set : d.sets) prefix_total += d.labels.size() + set.tail.size() + 24;
  }
  for (const CollectorEntry* f : families) {
    estimate += 2 * f->name.size() + f->help.size() + 32;
    estimate += series_per_family * f->name.size() + prefix_total;
  }
  out->reserve(estimate);

  for (const CollectorEntry* f : families) {
    const size_t family_start = out->size();
    AppendHelpType(f->name, f->help, config::MetricTypeName(f->type), out);
    const size_t header_end = out->size();
    for (const LiveDevice& d : live) {
      if (f->field->id == kXidCountField) {
        for (const AttributeSet& set : d.sets) {
          AppendXidCounts(*d.dev, f->name, d.labels, set.tail, snapshot.xid_window_ms, out);
        }
        continue;
      }
      if (f->field->id == kClockEventsCountField) {
        for (const AttributeSet& set : d.sets) {
          AppendClockEventCounts(*d.dev, f->name, d.labels, set.tail,
                                 snapshot.clock_events_window_ms, out);
        }
        continue;
      }
      const model::Value* v = FindSample(d.dev->samples, f->field->id);
      if (v == nullptr || std::holds_alternative<std::string>(*v)) continue;
      if (PerPodSeriesField(f->field->id, options.pods)) {
        // dcgm-exporter 4.8's shape for shared GPUs with per-process data: the device series
        // without pod labels, then one series per pod with that pod's own share (not the
        // device's value copied to every sharing pod).
        out->append(f->name);
        out->append(d.bare.prefix);
        AppendValue(*v, out);
        AppendDcgmPerPodSeries(f->field->id, f->name, d.bare, snapshot, options.pods, out);
        continue;
      }
      for (const AttributeSet& set : d.sets) {
        out->append(f->name);
        if (f->field->id == kXidErrorsField) {
          AppendXidLastPrefix(d.labels, set, *v, out);
        } else {
          out->append(d.labels);
          out->append(set.tail);
        }
        AppendValue(*v, out);
      }
    }
    // Families with no series are omitted altogether, as dcgm-exporter does.
    if (out->size() == header_end) out->resize(family_start);
  }

  std::vector<DeviceSeriesPrefix> bare;
  bare.reserve(live.size());
  for (const LiveDevice& d : live) bare.push_back(d.bare);
  AppendPodFamilies(snapshot, bare, options.pods, out);
  AppendSelfMetrics(snapshot, options, out);
}

}  // namespace nvmlx::render
