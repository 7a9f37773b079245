#include "render/emf_container_insights.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <iterator>
#include <optional>
#include <tuple>
#include <unordered_set>

#include "fields/container_insights.h"
#include "model/gpu_allocation.h"
#include "render/emf.h"
#include "render/number_text.h"
#include "render/pod_families.h"
#include "util/json_string.h"

namespace nvmlx::render {
namespace {

using Dimensions = std::vector<std::vector<std::string_view>>;
using Labels = std::vector<std::pair<std::string, std::string>>;

// The agent's declarations (docs/emf.md §7.3), each set in its sorted order as the agent's EMF
// exporter sorts them. A set is declared only when the event has every key.
const Dimensions kContainerGpuDims = {
    {"ClusterName"},
    {"ClusterName", "ContainerName", "Namespace", "PodName"},
    {"ClusterName", "ContainerName", "FullPodName", "Namespace", "PodName"},
    {"ClusterName", "ContainerName", "FullPodName", "GpuDevice", "Namespace", "PodName"}};
const Dimensions kPodGpuDims = {
    {"ClusterName"},
    {"ClusterName", "Namespace"},
    {"ClusterName", "Namespace", "Service"},
    {"ClusterName", "Namespace", "PodName"},
    {"ClusterName", "FullPodName", "Namespace", "PodName"},
    {"ClusterName", "FullPodName", "GpuDevice", "Namespace", "PodName"}};
const Dimensions kNodeGpuDims = {
    {"ClusterName"},
    {"ClusterName", "InstanceId", "NodeName"},
    {"ClusterName", "GpuDevice", "InstanceId", "InstanceType", "NodeName"}};

// The allocation counts' declarations (docs/emf.md §7.3). Service is never set by us.
const Dimensions kPodAllocationDims = {{"ClusterName"},
                                       {"ClusterName", "Namespace", "PodName"},
                                       {"ClusterName", "FullPodName", "Namespace", "PodName"},
                                       {"ClusterName", "Namespace", "Service"}};
const Dimensions kNodeAllocationDims = {{"ClusterName"}, {"ClusterName", "InstanceId", "NodeName"}};
constexpr std::string_view kCount = "Count";
constexpr std::string_view kPercent = "Percent";

constexpr std::string_view kGpuSources = R"(["dcgm","pod","calculated"])";
// CloudWatch keeps at most 100 distinct values per EMF distribution.
constexpr size_t kMaxDistributionValues = 100;

// "container_" / "pod_" / "node_" + a GPU metric's suffix, built once: events name their metrics
// by views into this table instead of a string each.
enum Level { kContainerLevel = 0, kPodLevel = 1, kNodeLevel = 2 };
std::string_view GpuMetricName(Level level, size_t index) {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (std::string_view prefix : {"container_", "pod_", "node_"}) {
      for (const fields::CiGpuMetric& m : fields::ContainerInsightsGpuMetrics()) {
        n.push_back(std::string(prefix) += m.suffix);
      }
    }
    return n;
  }();
  return names[static_cast<size_t>(level) * fields::ContainerInsightsGpuMetrics().size() + index];
}

const std::string* Find(const Labels& labels, std::string_view name) {
  for (const auto& [k, v] : labels) {
    if (k == name) return &v;
  }
  return nullptr;
}

// Adds (name, value) when the value is non-empty; the caller sorts.
void Put(Labels* labels, std::string_view name, std::string_view value) {
  if (!value.empty()) labels->emplace_back(std::string(name), std::string(value));
}

void SortLabels(Labels* labels) {
  std::sort(labels->begin(), labels->end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
}

// The `kubernetes` object of a GPU event: host always; the pod's name, uid and labels on pod and
// container events; the container's name on container events. Keys sorted, as the agent's.
std::string KubernetesObject(std::string_view host, const model::PodMeta* meta,
                             std::string_view pod, std::string_view container) {
  std::string o = "{";
  if (!container.empty()) {
    o += "\"container_name\":";
    util::AppendJsonQuoted(container, &o);
    o += ',';
  }
  o += "\"host\":";
  util::AppendJsonQuoted(host, &o);
  if (meta != nullptr && !meta->labels.empty()) {
    o += ",\"labels\":{";
    bool first = true;
    for (const auto& [k, v] : meta->labels) {
      if (!first) o += ',';
      first = false;
      util::AppendJsonQuoted(k, &o);
      o += ':';
      util::AppendJsonQuoted(v, &o);
    }
    o += '}';
  }
  if (meta != nullptr && !meta->uid.empty()) {
    o += ",\"pod_id\":";
    util::AppendJsonQuoted(meta->uid, &o);
  }
  if (!pod.empty()) {
    o += ",\"pod_name\":";
    util::AppendJsonQuoted(pod, &o);
  }
  o += '}';
  return o;
}

const model::PodMeta* MetaOf(const model::Attribution& a, std::string_view ns,
                             std::string_view pod) {
  if (a.metadata == nullptr) return nullptr;
  auto by_name = a.metadata->uid_by_name.find(std::string(ns) + "/" + std::string(pod));
  if (by_name == a.metadata->uid_by_name.end()) return nullptr;
  auto it = a.metadata->by_uid.find(by_name->second);
  return it == a.metadata->by_uid.end() ? nullptr : &it->second;
}

// One pod container on one device, with its share when per-process data gives one.
struct Holder {
  std::string_view namespace_name, pod, container;
  const PodUsage* usage = nullptr;
};

// Who holds device `dev`: the kubelet's containers (pod-resources), else those running processes
// on it (per-process attribution); in that order, each (namespace, pod, container) once.
std::vector<Holder> HoldersOf(const model::DeviceSnapshot& dev, const model::Attribution& a,
                              const DeviceUsage& usage) {
  std::vector<Holder> holders;
  auto usage_of = [&usage](std::string_view ns, std::string_view pod, std::string_view c) {
    for (const PodUsage& u : usage.pods) {
      if (u.namespace_name == ns && u.pod == pod && u.container == c) return &u;
    }
    return static_cast<const PodUsage*>(nullptr);
  };
  auto add = [&](std::string_view ns, std::string_view pod, std::string_view c) {
    if (pod.empty()) return;
    for (const Holder& h : holders) {
      if (h.namespace_name == ns && h.pod == pod && h.container == c) return;
    }
    holders.push_back({ns, pod, c, usage_of(ns, pod, c)});
  };
  if (a.devices != nullptr) {
    if (auto it = a.devices->pods_by_device.find(dev.identity->DeviceKey());
        it != a.devices->pods_by_device.end()) {
      for (const model::PodRef& p : it->second) add(p.namespace_name, p.pod, p.container);
    }
  }
  for (const PodUsage& u : usage.pods) add(u.namespace_name, u.pod, u.container);
  return holders;
}

}  // namespace

std::string CiWorkloadName(std::string_view pod, std::string_view owner_kind,
                           std::string_view owner_name) {
  if (owner_name.empty()) return std::string(pod);
  // A ReplicaSet made by a Deployment is named "<deployment>-<pod-template-hash>"; a Job made by
  // a CronJob "<cronjob>-<scheduled time in minutes>".
  auto strip_suffix = [owner_name](auto keep) -> std::string {
    const size_t dash = owner_name.rfind('-');
    if (dash == std::string_view::npos || dash == 0 || dash + 1 == owner_name.size()) {
      return std::string(owner_name);
    }
    const std::string_view suffix = owner_name.substr(dash + 1);
    if (!std::all_of(suffix.begin(), suffix.end(), keep)) return std::string(owner_name);
    return std::string(owner_name.substr(0, dash));
  };
  if (owner_kind == "ReplicaSet") {
    return strip_suffix([](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; });
  }
  if (owner_kind == "Job") {
    return strip_suffix([](char c) { return c >= '0' && c <= '9'; });
  }
  return std::string(owner_name);
}

ContainerInsightsRenderer::ContainerInsightsRenderer(ContainerInsightsOptions options)
    : options_(std::move(options)) {
  log_group_ = options_.log_group.empty()
                   ? "/aws/containerinsights/" + options_.cluster_name + "/performance"
                   : options_.log_group;
  log_stream_ = options_.log_stream.empty() ? options_.node_name : options_.log_stream;
}

std::pair<std::string, std::string> ContainerInsightsRenderer::Identity(
    const model::Snapshot& snap) const {
  // The Node object's values first (what EC2 says the node is), each flag where it gives none.
  const model::NodeInfo* node = snap.attribution.node.get();
  std::string id = node != nullptr ? node->instance_id : "";
  std::string type = node != nullptr ? node->instance_type : "";
  if (id.empty()) id = options_.instance_id;
  if (type.empty()) type = options_.instance_type;
  return {std::move(id), std::move(type)};
}

void ContainerInsightsRenderer::AddGpuEvents(const model::Snapshot& snap,
                                             std::vector<Event>* events) const {
  const auto [instance_id, instance_type] = Identity(snap);
  const std::span<const fields::CiGpuMetric> metrics = fields::ContainerInsightsGpuMetrics();
  for (const model::DeviceSnapshot& dev : snap.devices) {
    if (dev.identity == nullptr || !dev.up) continue;
    const model::DeviceIdentity& id = *dev.identity;
    const model::DeviceSnapshot* parent = nullptr;
    if (id.mig) {
      for (const model::DeviceSnapshot& d : snap.devices) {
        if (d.identity != nullptr && !d.identity->mig && d.identity->uuid == id.uuid) parent = &d;
      }
    }
    const std::string device = "nvidia" + std::to_string(id.index);
    auto device_value = [&](const fields::CiGpuMetric& m, double* v) {
      if (fields::CiGpuValue(m, dev.samples, v)) return true;
      return m.gpu_wide && parent != nullptr && fields::CiGpuValue(m, parent->samples, v);
    };
    Labels common;
    Put(&common, "ClusterName", options_.cluster_name);
    Put(&common, "GpuDevice", device);
    Put(&common, "InstanceId", instance_id);
    Put(&common, "InstanceType", instance_type);
    Put(&common, "NodeName", options_.node_name);

    if (!id.mig) {
      Event node{.type = "NodeGPU",
                 .labels = common,
                 .kubernetes = KubernetesObject(options_.node_name, nullptr, "", ""),
                 .metrics = {},
                 .dimensions = &kNodeGpuDims};
      for (size_t i = 0; i < metrics.size(); ++i) {
        double v = 0;
        if (device_value(metrics[i], &v)) {
          node.metrics.push_back({GpuMetricName(kNodeLevel, i), metrics[i].unit, v});
        }
      }
      SortLabels(&node.labels);
      events->push_back(std::move(node));
    }

    const DeviceUsage usage =
        options_.pod_shares ? AggregatePodUsage(dev, snap.attribution) : DeviceUsage{};
    const std::vector<Holder> holders = HoldersOf(dev, snap.attribution, usage);
    std::unordered_set<std::string> pods;
    for (const Holder& h : holders) pods.insert(std::string(h.namespace_name) + "/" += h.pod);
    // Shares only where the GPU is shared and per-process data says who uses what.
    const bool shared = options_.pod_shares && pods.size() > 1;
    double fb_bytes = 0;
    const bool fb_known = fields::CiFramebufferBytes(dev.samples, &fb_bytes) && fb_bytes > 0;
    auto value = [&](const fields::CiGpuMetric& m, uint64_t sm, uint64_t mem, double* v) {
      using Share = fields::CiGpuMetric::Share;
      if (!shared || m.share == Share::kDevice) return device_value(m, v);
      switch (m.share) {
        case Share::kSmPercent:
          *v = static_cast<double>(std::min<uint64_t>(sm, 100));
          return true;
        case Share::kMemoryBytes:
          *v = static_cast<double>(mem);
          return true;
        case Share::kMemoryPercent:
          if (!fb_known) return false;
          *v = static_cast<double>(mem) / fb_bytes * 100.0;
          return true;
        case Share::kDevice:
          break;
      }
      return false;
    };
    auto pod_event = [&](std::string_view type, Level level, const Holder& h, uint64_t sm,
                         uint64_t mem, bool with_container) {
      const model::PodMeta* meta = MetaOf(snap.attribution, h.namespace_name, h.pod);
      Event e{.type = type,
              .labels = common,
              .kubernetes = KubernetesObject(options_.node_name, meta, h.pod,
                                             with_container ? h.container : ""),
              .metrics = {},
              .dimensions = with_container ? &kContainerGpuDims : &kPodGpuDims};
      Put(&e.labels, "FullPodName", h.pod);
      Put(&e.labels, "Namespace", h.namespace_name);
      Put(&e.labels, "PodName",
          meta != nullptr ? CiWorkloadName(h.pod, meta->owner_kind, meta->owner_name)
                          : CiWorkloadName(h.pod, "", ""));
      Put(&e.labels, "UUID", id.DeviceKey());
      if (with_container) Put(&e.labels, "ContainerName", h.container);
      for (size_t i = 0; i < metrics.size(); ++i) {
        double v = 0;
        if (value(metrics[i], sm, mem, &v)) {
          e.metrics.push_back({GpuMetricName(level, i), metrics[i].unit, v});
        }
      }
      SortLabels(&e.labels);
      events->push_back(std::move(e));
    };
    for (const Holder& h : holders) {
      pod_event("ContainerGPU", kContainerLevel, h, h.usage ? h.usage->sm_percent : 0,
                h.usage ? h.usage->memory_bytes : 0, true);
    }
    // One pod event per pod: its containers' shares summed.
    std::unordered_set<std::string> done;
    for (const Holder& h : holders) {
      const std::string key = std::string(h.namespace_name) + "/" += h.pod;
      if (!done.insert(key).second) continue;
      uint64_t sm = 0, mem = 0;
      for (const Holder& o : holders) {
        if (o.usage != nullptr && o.namespace_name == h.namespace_name && o.pod == h.pod) {
          sm += o.usage->sm_percent;
          mem += o.usage->memory_bytes;
        }
      }
      pod_event("PodGPU", kPodLevel, h, sm, mem, false);
    }
  }
}

void ContainerInsightsRenderer::AddAllocationEvents(const model::Snapshot& snap,
                                                    std::vector<Event>* events) const {
  const model::PodMetadata* pods = snap.attribution.metadata.get();
  if (pods == nullptr) return;  // no API server: neither pod specs nor a capacity to count
  const auto [instance_id, instance_type] = Identity(snap);
  Labels common;
  Put(&common, "ClusterName", options_.cluster_name);
  Put(&common, "InstanceId", instance_id);
  Put(&common, "InstanceType", instance_type);
  Put(&common, "NodeName", options_.node_name);
  const std::optional<int64_t> capacity = model::NodeGpuCapacity(snap.attribution);

  // Pods in a stable order (by namespace and name) so that documents do not reorder between
  // collections; a static pod's mirror-uid alias is skipped, as in NodeGpuAllocationOf.
  std::vector<const model::PodMeta*> counted;
  for (const auto& [uid, pod] : pods->by_uid) {
    if (uid == pod.uid) counted.push_back(&pod);
  }
  std::sort(counted.begin(), counted.end(), [](const model::PodMeta* a, const model::PodMeta* b) {
    return std::tie(a->namespace_name, a->pod) < std::tie(b->namespace_name, b->pod);
  });
  for (const model::PodMeta* pod : counted) {
    const std::optional<model::PodGpuAllocation> a = model::PodGpuAllocationOf(*pod, capacity);
    if (!a.has_value()) continue;
    Event e{.type = "Pod",
            .labels = common,
            .kubernetes = {},
            .metrics = {{"pod_gpu_request", kCount, static_cast<double>(a->request)},
                        {"pod_gpu_limit", kCount, static_cast<double>(a->limit)},
                        {"pod_gpu_usage_total", kCount, static_cast<double>(a->usage_total)}},
            .dimensions = &kPodAllocationDims};
    if (a->reserved_capacity.has_value()) {
      e.metrics.push_back({"pod_gpu_reserved_capacity", kPercent, *a->reserved_capacity});
    }
    Put(&e.labels, "FullPodName", pod->pod);
    Put(&e.labels, "Namespace", pod->namespace_name);
    Put(&e.labels, "PodName", CiWorkloadName(pod->pod, pod->owner_kind, pod->owner_name));
    SortLabels(&e.labels);
    events->push_back(std::move(e));
  }

  const std::optional<model::NodeGpuAllocation> n = model::NodeGpuAllocationOf(*pods, capacity);
  if (!n.has_value()) return;  // capacity unknown or 0: no node fields, as the agent
  Event node{.type = "Node",
             .labels = std::move(common),
             .kubernetes = {},
             .metrics = {{"node_gpu_limit", kCount, static_cast<double>(n->limit)},
                         {"node_gpu_usage_total", kCount, static_cast<double>(n->usage_total)},
                         {"node_gpu_reserved_capacity", kPercent, n->reserved_capacity},
                         {"node_gpu_unreserved_capacity", kPercent, n->unreserved_capacity},
                         {"node_gpu_available_capacity", kCount,
                          static_cast<double>(n->available_capacity)}},
             .dimensions = &kNodeAllocationDims,
             .fields = {{"node_gpu_request", static_cast<double>(n->request)}}};
  events->push_back(std::move(node));
}

void ContainerInsightsRenderer::Render(const model::Snapshot& snap,
                                       std::chrono::system_clock::time_point time,
                                       std::vector<std::string>* docs) {
  const int64_t ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch()).count();
  std::vector<Event> gpu, allocation;
  AddGpuEvents(snap, &gpu);
  AddAllocationEvents(snap, &allocation);
  if (!options_.histograms) {
    for (const Event& e : allocation) Write(e, ms, nullptr, docs);
    for (const Event& e : gpu) Write(e, ms, nullptr, docs);
    return;
  }
  // A period's collections make one distribution per event and metric; it is sent at the first
  // collection past the period, stamped with the period's last collection. The allocation
  // counts go with it as plain values, the period's last ones: they are counts of pods, not
  // samples, and the agent sends them once per its (60 s) interval too.
  if (window_start_ == std::chrono::system_clock::time_point{}) window_start_ = time;
  if (time - window_start_ >= options_.histogram_period) {
    for (const Event& e : last_allocation_) Write(e, last_ms_, nullptr, docs);
    std::vector<const std::pair<const std::string, Window>*> ordered;
    ordered.reserve(windows_.size());
    for (const auto& entry : windows_) ordered.push_back(&entry);
    std::sort(ordered.begin(), ordered.end(),
              [](const auto* a, const auto* b) { return a->first < b->first; });
    for (const auto* entry : ordered) Write(entry->second.last, last_ms_, &entry->second, docs);
    windows_.clear();
    window_start_ = time;
  }
  last_ms_ = ms;
  last_allocation_ = std::move(allocation);
  AddToWindows(std::move(gpu));
}

void ContainerInsightsRenderer::AddToWindows(std::vector<Event>&& events) {
  for (Event& e : events) {
    std::string key(e.type);
    for (const auto& [k, v] : e.labels) {
      key += '\x1f';
      key += k;
      key += '=';
      key += v;
    }
    Window& w = windows_[key];
    for (const Metric& m : e.metrics) {
      if (!Sendable(m.value)) continue;
      Distribution& d = w.metrics[std::string(m.name)];
      d.unit = m.unit;
      if (d.count == 0 || m.value < d.min) d.min = m.value;
      if (d.count == 0 || m.value > d.max) d.max = m.value;
      d.sum += m.value;
      ++d.count;
      ++d.counts[m.value];
    }
    w.last = std::move(e);
  }
}

namespace {

// At most kMaxDistributionValues (value, count) pairs: the two closest neighbours merge into
// their count-weighted mean until it fits. Count, Sum, Min and Max stay exact.
std::vector<std::pair<double, uint64_t>> Bounded(const std::map<double, uint64_t>& counts) {
  std::vector<std::pair<double, uint64_t>> v(counts.begin(), counts.end());
  while (v.size() > kMaxDistributionValues) {
    size_t best = 0;
    for (size_t i = 1; i + 1 < v.size(); ++i) {
      if (v[i + 1].first - v[i].first < v[best + 1].first - v[best].first) best = i;
    }
    const double n = static_cast<double>(v[best].second + v[best + 1].second);
    v[best].first = (v[best].first * static_cast<double>(v[best].second) +
                     v[best + 1].first * static_cast<double>(v[best + 1].second)) /
                    n;
    v[best].second += v[best + 1].second;
    v.erase(v.begin() + static_cast<std::ptrdiff_t>(best) + 1);
  }
  return v;
}

void AppendDistribution(const std::map<double, uint64_t>& counts, double min, double max,
                        double sum, uint64_t count, std::string* out) {
  const auto values = Bounded(counts);
  *out += "{\"Values\":[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) *out += ',';
    AppendShortest(values[i].first, out);
  }
  *out += "],\"Counts\":[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) *out += ',';
    AppendInt(static_cast<int64_t>(values[i].second), out);
  }
  *out += "],\"Max\":";
  AppendShortest(max, out);
  *out += ",\"Min\":";
  AppendShortest(min, out);
  *out += ",\"Count\":";
  AppendInt(static_cast<int64_t>(count), out);
  *out += ",\"Sum\":";
  AppendShortest(sum, out);
  *out += '}';
}

}  // namespace

const std::string& ContainerInsightsRenderer::DimensionsJson(const Event& event) {
  uint32_t usable = 0;
  for (size_t i = 0; i < event.dimensions->size() && i < 32; ++i) {
    const std::vector<std::string_view>& set = (*event.dimensions)[i];
    if (std::all_of(set.begin(), set.end(), [&](std::string_view k) {
          const std::string* v = Find(event.labels, k);
          return v != nullptr && UsableDimensionValue(*v);
        })) {
      usable |= uint32_t{1} << i;
    }
  }
  auto [it, added] = dimensions_json_.try_emplace({event.dimensions, usable});
  if (!added) return it->second;
  std::string& out = it->second;
  out = "[";
  for (size_t i = 0; i < event.dimensions->size() && i < 32; ++i) {
    if ((usable & (uint32_t{1} << i)) == 0) continue;
    out += out.size() == 1 ? "[" : ",[";
    const std::vector<std::string_view>& set = (*event.dimensions)[i];
    for (size_t k = 0; k < set.size(); ++k) {
      if (k > 0) out += ',';
      util::AppendJsonQuoted(set[k], &out);
    }
    out += ']';
  }
  out += ']';
  return out;
}

void ContainerInsightsRenderer::Write(const Event& event, int64_t timestamp_ms,
                                      const Window* histogram, std::vector<std::string>* docs) {
  // What is sent: a metric with a sendable value (or its period's distribution). Names and
  // units are the schema's own identifiers (no character needs escaping); values are numbers.
  std::string decl, values;
  auto add = [&](std::string_view name, std::string_view unit) {
    decl += decl.empty() ? "{\"Name\":\"" : ",{\"Name\":\"";
    decl += name;
    decl += "\",\"Unit\":\"";
    decl += unit;
    decl += options_.high_resolution ? "\",\"StorageResolution\":1}" : "\"}";
    values += ",\"";
    values += name;
    values += "\":";
  };
  if (histogram != nullptr) {
    for (const auto& [name, d] : histogram->metrics) {
      add(name, d.unit);
      AppendDistribution(d.counts, d.min, d.max, d.sum, d.count, &values);
    }
  } else {
    for (const Metric& m : event.metrics) {
      if (!Sendable(m.value)) continue;
      add(m.name, m.unit);
      AppendShortest(m.value, &values);
    }
  }
  if (decl.empty()) return;  // as the agent: an event with no metric is not sent

  std::string head = "{\"_aws\":{\"Timestamp\":";
  head.reserve(1024);
  AppendInt(timestamp_ms, &head);
  head += ",\"LogGroupName\":";
  util::AppendJsonQuoted(log_group_, &head);
  if (!log_stream_.empty()) {
    head += ",\"LogStreamName\":";
    util::AppendJsonQuoted(log_stream_, &head);
  }
  head += ",\"CloudWatchMetrics\":[{\"Namespace\":\"ContainerInsights\",\"Dimensions\":";
  head += DimensionsJson(event);
  head += ",\"Metrics\":[";
  head += decl;
  head += "]}]}";
  for (const auto& [k, v] : event.labels) {
    head += ',';
    util::AppendJsonQuoted(k, &head);
    head += ':';
    util::AppendJsonQuoted(v, &head);
  }
  if (event.type.ends_with("GPU")) {
    head += ",\"Sources\":";
    head += kGpuSources;
  }
  head += ",\"Timestamp\":\"";
  AppendInt(timestamp_ms, &head);
  head += "\",\"Type\":";
  util::AppendJsonQuoted(event.type, &head);
  head += ",\"Version\":\"0\"";
  std::string& tail = values;
  for (const auto& [name, v] : event.fields) {
    if (!Sendable(v)) continue;
    tail += ',';
    util::AppendJsonQuoted(name, &tail);
    tail += ':';
    AppendShortest(v, &tail);
  }
  tail += '}';
  // A pod's labels can make the event too large for one datagram: then it goes without them
  // (the `kubernetes` object keeps only the host), and if that is still too large, not at all.
  // The allocation events carry no `kubernetes` object.
  std::string doc = std::move(head);
  const size_t before_kubernetes = doc.size();
  if (!event.kubernetes.empty()) {
    doc += ",\"kubernetes\":";
    doc += event.kubernetes;
  }
  doc += tail;
  if (doc.size() > options_.max_document_bytes && !event.kubernetes.empty()) {
    doc.resize(before_kubernetes);
    doc += ",\"kubernetes\":";
    doc += KubernetesObject(options_.node_name, nullptr, "", "");
    doc += tail;
  }
  if (doc.size() > options_.max_document_bytes) {
    ++oversize_dropped_;
    return;
  }
  docs->push_back(std::move(doc));
}

}  // namespace nvmlx::render
