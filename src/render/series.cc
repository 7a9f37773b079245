#include "render/series.h"

#include <algorithm>
#include <variant>

#include "fields/clock_event_names.h"
#include "fields/field_ids.h"
#include "fields/xid_text.h"

namespace nvmlx::render {
namespace {

using config::CollectorEntry;
using config::MetricType;

constexpr int kXidErrorsField = fields::ids::kXidErrors;
constexpr int kXidCountField = fields::ids::kXidErrorsCount;
constexpr int kClockEventsCountField = fields::ids::kClockEventsCount;

const model::Value* FindSample(const std::vector<model::Sample>& samples, int field_id) {
  auto it = std::lower_bound(samples.begin(), samples.end(), field_id,
                             [](const model::Sample& s, int id) { return s.field_id < id; });
  if (it == samples.end() || it->field_id != field_id) return nullptr;
  return &it->value;
}

bool ToSeriesValue(const CollectorEntry* entry, const model::Value& v, SeriesValue* out) {
  out->entry = entry;
  if (const auto* i = std::get_if<int64_t>(&v)) {
    out->is_integer = true;
    out->int_value = *i;
    out->value = static_cast<double>(*i);
    return true;
  }
  if (const auto* d = std::get_if<double>(&v)) {
    out->is_integer = false;
    out->value = *d;
    return true;
  }
  return false;  // a string in a numeric family
}

SeriesValue IntValue(const CollectorEntry* entry, int64_t v) {
  SeriesValue s;
  s.entry = entry;
  s.is_integer = true;
  s.int_value = v;
  s.value = static_cast<double>(v);
  return s;
}

bool ByName(const std::pair<std::string, std::string>& a,
            const std::pair<std::string, std::string>& b) {
  return a.first < b.first;
}

// Assembles fixed labels + sorted Labels + sorted Attributes, dcgm-exporter's order.
Labels Assemble(const Labels& fixed, Labels sorted_labels, Labels attributes) {
  std::stable_sort(sorted_labels.begin(), sorted_labels.end(), ByName);
  std::stable_sort(attributes.begin(), attributes.end(), ByName);
  Labels out;
  out.reserve(fixed.size() + sorted_labels.size() + attributes.size());
  out.insert(out.end(), fixed.begin(), fixed.end());
  for (auto& l : sorted_labels) out.push_back(std::move(l));
  for (auto& l : attributes) out.push_back(std::move(l));
  return out;
}

// The attribute sets of one device, as the Prometheus renderer's BuildAttributeSets: the cross
// product of the pods holding it (with vgpu when shared) and its HPC jobs, in attribution order,
// or one empty set. Names as dcgm-exporter spells them (-o: container_name, pod_name,
// pod_namespace); Assemble sorts them.
std::vector<Labels> AttributeSets(const model::DeviceIdentity& id,
                                  const model::Attribution& attribution, bool old_names,
                                  bool pod_uid) {
  const std::vector<model::PodRef> kNoPods;
  const std::vector<std::string> kNoJobs;
  const std::string& key = id.DeviceKey();
  const std::vector<model::PodRef>* pods = &kNoPods;
  const std::vector<std::string>* jobs = &kNoJobs;
  if (attribution.devices != nullptr) {
    const auto& by_device = attribution.devices->pods_by_device;
    if (auto it = by_device.find(key); it != by_device.end()) pods = &it->second;
  }
  if (attribution.hpc != nullptr) {
    const auto& by_device = attribution.hpc->jobs_by_device;
    if (auto it = by_device.find(key); it != by_device.end()) jobs = &it->second;
  }
  std::vector<Labels> sets;
  const size_t npods = std::max<size_t>(pods->size(), 1);
  const size_t njobs = std::max<size_t>(jobs->size(), 1);
  sets.reserve(npods * njobs);
  for (size_t p = 0; p < npods; ++p) {
    for (size_t j = 0; j < njobs; ++j) {
      Labels set;
      if (p < pods->size()) {
        const model::PodRef& pod = (*pods)[p];
        set.emplace_back(old_names ? "container_name" : "container", pod.container);
        set.emplace_back(old_names ? "pod_namespace" : "namespace", pod.namespace_name);
        set.emplace_back(old_names ? "pod_name" : "pod", pod.pod);
        if (!pod.vgpu.empty()) set.emplace_back("vgpu", pod.vgpu);
        if (const std::string* uid = pod_uid ? model::FindPodUid(attribution, pod) : nullptr) {
          set.emplace_back("pod_uid", *uid);
        }
      }
      if (j < jobs->size()) set.emplace_back("hpc_job", (*jobs)[j]);
      sets.push_back(std::move(set));
    }
  }
  return sets;
}

}  // namespace

const std::string* FindLabel(const Labels& labels, std::string_view name) {
  for (const auto& [k, v] : labels) {
    if (k == name) return &v;
  }
  return nullptr;
}

OrderedRows OrderRows(const std::vector<CollectorEntry>& entries) {
  OrderedRows rows;
  std::vector<const CollectorEntry*> families;
  for (const CollectorEntry& e : entries) {
    if (e.field == nullptr) continue;
    (e.type == MetricType::kLabel ? rows.label_rows : families).push_back(&e);
  }
  std::stable_sort(
      families.begin(), families.end(),
      [](const CollectorEntry* a, const CollectorEntry* b) { return a->field->id < b->field->id; });
  for (const CollectorEntry* f : families) {
    bool seen = std::any_of(rows.families.begin(), rows.families.end(),
                            [f](const CollectorEntry* u) { return u->name == f->name; });
    if (!seen) rows.families.push_back(f);
  }
  std::stable_sort(
      rows.label_rows.begin(), rows.label_rows.end(),
      [](const CollectorEntry* a, const CollectorEntry* b) { return a->name < b->name; });
  rows.label_rows.erase(std::unique(rows.label_rows.begin(), rows.label_rows.end(),
                                    [](const CollectorEntry* a, const CollectorEntry* b) {
                                      return a->name == b->name;
                                    }),
                        rows.label_rows.end());
  return rows;
}

void BuildSeries(const model::Snapshot& snapshot, const SeriesOptions& options,
                 std::vector<SeriesGroup>* out) {
  out->clear();
  const OrderedRows rows = OrderRows(options.entries);
  const std::vector<const CollectorEntry*>& unique_families = rows.families;
  const std::vector<const CollectorEntry*>& label_rows = rows.label_rows;

  for (const model::DeviceSnapshot& dev : snapshot.devices) {
    if (!dev.up || dev.identity == nullptr) continue;
    const model::DeviceIdentity& id = *dev.identity;

    Labels fixed;
    fixed.emplace_back("gpu", std::to_string(id.index));
    fixed.emplace_back(options.use_old_namespace ? "uuid" : "UUID", id.uuid);
    fixed.emplace_back("pci_bus_id", id.pci_bus_id);
    fixed.emplace_back("device", "nvidia" + std::to_string(id.index));
    fixed.emplace_back("modelName", id.model_name);
    if (id.mig) {
      fixed.emplace_back("GPU_I_PROFILE", id.mig->profile);
      fixed.emplace_back("GPU_I_ID", std::to_string(id.mig->gpu_instance_id));
    }
    if (!options.hostname.empty()) fixed.emplace_back(options.hostname_label, options.hostname);

    Labels csv_labels;
    for (const CollectorEntry* row : label_rows) {
      for (const auto& [field_id, value] : id.label_values) {
        if (field_id == row->field->id) {
          csv_labels.emplace_back(row->name, value);
          break;
        }
      }
    }

    // One copy of the device's series per (pod, HPC job) attribute set.
    for (const Labels& attributes :
         AttributeSets(id, snapshot.attribution, options.use_old_namespace, options.pod_uid)) {
      SeriesGroup plain;
      plain.device = &dev;
      plain.labels = Assemble(fixed, csv_labels, attributes);
      std::vector<SeriesGroup> extra;  // XID groups, after the plain one
      for (const CollectorEntry* f : unique_families) {
        const int field_id = f->field->id;
        if (field_id == kXidCountField) {
          if (!dev.xid_watched) continue;
          auto count_group = [&](const model::XidCount* c) {
            Labels labels = csv_labels;
            labels.emplace_back("window_size_in_ms", std::to_string(snapshot.xid_window_ms));
            if (c != nullptr) labels.emplace_back("xid", std::to_string(c->xid));
            SeriesGroup g;
            g.device = &dev;
            g.labels = Assemble(fixed, std::move(labels), attributes);
            g.values.push_back(IntValue(f, c != nullptr ? c->count : 0));
            extra.push_back(std::move(g));
          };
          if (dev.xid_counts.empty()) count_group(nullptr);
          for (const model::XidCount& c : dev.xid_counts) count_group(&c);
          continue;
        }
        if (field_id == kClockEventsCountField) {
          if (!dev.clock_events_watched) continue;
          // As dcgm-exporter: no sample in the window gives one 0 without clock_event; samples
          // with no reason active give no series.
          auto event_group = [&](std::string_view event, int64_t count) {
            Labels labels = csv_labels;
            if (!event.empty()) labels.emplace_back("clock_event", std::string(event));
            labels.emplace_back("window_size_in_ms",
                                std::to_string(snapshot.clock_events_window_ms));
            SeriesGroup g;
            g.device = &dev;
            g.labels = Assemble(fixed, std::move(labels), attributes);
            g.values.push_back(IntValue(f, count));
            extra.push_back(std::move(g));
          };
          if (!dev.clock_events_sampled) {
            event_group("", 0);
          } else {
            for (const model::ClockEventCount& c : dev.clock_event_counts) {
              event_group(fields::ClockEventName(c.reason), c.count);
            }
          }
          continue;
        }
        const model::Value* v = FindSample(dev.samples, field_id);
        if (v == nullptr) continue;
        SeriesValue sv;
        if (!ToSeriesValue(f, *v, &sv)) continue;
        if (field_id == kXidErrorsField) {
          const int64_t xid = sv.is_integer ? sv.int_value : static_cast<int64_t>(sv.value);
          Labels attrs = attributes;
          attrs.emplace_back("err_code", std::to_string(xid));
          attrs.emplace_back("err_msg", std::string(fields::XidDescription(xid)));
          SeriesGroup g;
          g.device = &dev;
          g.labels = Assemble(fixed, csv_labels, std::move(attrs));
          g.values.push_back(sv);
          extra.push_back(std::move(g));  // families ascend: before the XID counts (9001)
          continue;
        }
        plain.values.push_back(sv);
      }
      if (!plain.values.empty()) out->push_back(std::move(plain));
      for (auto& g : extra) out->push_back(std::move(g));
    }
  }
}

}  // namespace nvmlx::render
