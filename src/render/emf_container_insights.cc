#include "render/emf_container_insights.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <iterator>
#include <unordered_set>

#include "fields/container_insights.h"
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

constexpr std::string_view kGpuSources = R"(["dcgm","pod","calculated"])";
// CloudWatch keeps at most 100 distinct values per EMF distribution.
constexpr size_t kMaxDistributionValues = 100;

// CloudWatch's MetricDatum range (docs/emf.md §2).
bool Sendable(double v) {
  if (!std::isfinite(v)) return false;
  const double a = std::fabs(v);
  return a == 0 || (a >= 8.5e-109 && a <= 1.17e108);
}

void AppendNumber(double v, std::string* out) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(ec == std::errc() ? std::string_view(buf, end - buf) : std::string_view("0"));
}

void AppendInt(int64_t v, std::string* out) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, end);
}

// CloudWatch dimension values: 1..1024 printable ASCII characters, not all blank.
bool UsableValue(std::string_view v) {
  if (v.empty() || v.size() > 1024) return false;
  bool non_blank = false;
  for (unsigned char c : v) {
    if (c >= 0x80 || c < 0x20) return false;
    if (c != ' ') non_blank = true;
  }
  return non_blank;
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
    const model::Snapshot&) const {
  return {options_.instance_id, options_.instance_type};
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
      for (const fields::CiGpuMetric& m : metrics) {
        double v = 0;
        if (device_value(m, &v))
          node.metrics.push_back({"node_" + std::string(m.suffix), m.unit, v});
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
    auto pod_event = [&](std::string_view type, std::string_view prefix, const Holder& h,
                         uint64_t sm, uint64_t mem, bool with_container) {
      const model::PodMeta* meta = MetaOf(snap.attribution, h.namespace_name, h.pod);
      Event e{.type = type,
              .labels = common,
              .kubernetes = KubernetesObject(options_.node_name, meta, h.pod,
                                             with_container ? h.container : ""),
              .metrics = {},
              .dimensions = with_container ? &kContainerGpuDims : &kPodGpuDims};
      Put(&e.labels, "FullPodName", h.pod);
      Put(&e.labels, "Namespace", h.namespace_name);
      Put(&e.labels, "PodName", CiWorkloadName(h.pod, "", ""));
      Put(&e.labels, "UUID", id.DeviceKey());
      if (with_container) Put(&e.labels, "ContainerName", h.container);
      for (const fields::CiGpuMetric& m : metrics) {
        double v = 0;
        if (value(m, sm, mem, &v))
          e.metrics.push_back({std::string(prefix) += m.suffix, m.unit, v});
      }
      SortLabels(&e.labels);
      events->push_back(std::move(e));
    };
    for (const Holder& h : holders) {
      pod_event("ContainerGPU", "container_", h, h.usage ? h.usage->sm_percent : 0,
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
      pod_event("PodGPU", "pod_", h, sm, mem, false);
    }
  }
}

void ContainerInsightsRenderer::AddAllocationEvents(const model::Snapshot&,
                                                    std::vector<Event>*) const {}

void ContainerInsightsRenderer::Render(const model::Snapshot& snap,
                                       std::chrono::system_clock::time_point time,
                                       std::vector<std::string>* docs) {
  const int64_t ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch()).count();
  std::vector<Event> gpu, allocation;
  AddGpuEvents(snap, &gpu);
  AddAllocationEvents(snap, &allocation);
  for (const Event& e : allocation) Write(e, ms, nullptr, docs);
  if (!options_.histograms) {
    for (const Event& e : gpu) Write(e, ms, nullptr, docs);
    return;
  }
  // A period's collections make one distribution per event and metric; it is sent at the first
  // collection past the period, stamped with the period's last collection.
  if (window_start_ == std::chrono::system_clock::time_point{}) window_start_ = time;
  if (time - window_start_ >= options_.histogram_period) {
    for (const auto& [key, w] : windows_) Write(w.last, last_ms_, &w, docs);
    windows_.clear();
    window_start_ = time;
  }
  last_ms_ = ms;
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
      Distribution& d = w.metrics[m.name];
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
    AppendNumber(values[i].first, out);
  }
  *out += "],\"Counts\":[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) *out += ',';
    AppendInt(static_cast<int64_t>(values[i].second), out);
  }
  *out += "],\"Max\":";
  AppendNumber(max, out);
  *out += ",\"Min\":";
  AppendNumber(min, out);
  *out += ",\"Count\":";
  AppendInt(static_cast<int64_t>(count), out);
  *out += ",\"Sum\":";
  AppendNumber(sum, out);
  *out += '}';
}

}  // namespace

void ContainerInsightsRenderer::Write(const Event& event, int64_t timestamp_ms,
                                      const Window* histogram, std::vector<std::string>* docs) {
  // What is sent: a metric with a sendable value (or its period's distribution).
  struct Out {
    const std::string* name;
    std::string_view unit;
    std::string value;
  };
  std::vector<Out> out;
  if (histogram != nullptr) {
    for (const auto& [name, d] : histogram->metrics) {
      std::string v;
      AppendDistribution(d.counts, d.min, d.max, d.sum, d.count, &v);
      out.push_back({&name, d.unit, std::move(v)});
    }
  } else {
    for (const Metric& m : event.metrics) {
      if (!Sendable(m.value)) continue;
      std::string v;
      AppendNumber(m.value, &v);
      out.push_back({&m.name, m.unit, std::move(v)});
    }
  }
  if (out.empty()) return;  // as the agent: an event with no metric is not sent

  std::string head = "{\"_aws\":{\"Timestamp\":";
  AppendInt(timestamp_ms, &head);
  head += ",\"LogGroupName\":";
  util::AppendJsonQuoted(log_group_, &head);
  if (!log_stream_.empty()) {
    head += ",\"LogStreamName\":";
    util::AppendJsonQuoted(log_stream_, &head);
  }
  head += ",\"CloudWatchMetrics\":[{\"Namespace\":\"ContainerInsights\",\"Dimensions\":[";
  bool first_set = true;
  for (const std::vector<std::string_view>& set : *event.dimensions) {
    const bool usable = std::all_of(set.begin(), set.end(), [&](std::string_view k) {
      const std::string* v = Find(event.labels, k);
      return v != nullptr && UsableValue(*v);
    });
    if (!usable) continue;
    head += first_set ? "[" : ",[";
    first_set = false;
    for (size_t i = 0; i < set.size(); ++i) {
      if (i > 0) head += ',';
      util::AppendJsonQuoted(set[i], &head);
    }
    head += ']';
  }
  head += "],\"Metrics\":[";
  for (size_t i = 0; i < out.size(); ++i) {
    if (i > 0) head += ',';
    head += "{\"Name\":";
    util::AppendJsonQuoted(*out[i].name, &head);
    head += ",\"Unit\":";
    util::AppendJsonQuoted(out[i].unit, &head);
    if (options_.high_resolution) head += ",\"StorageResolution\":1";
    head += '}';
  }
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
  std::string tail;
  for (const Out& o : out) {
    tail += ',';
    util::AppendJsonQuoted(*o.name, &tail);
    tail += ':';
    tail += o.value;
  }
  tail += '}';
  // A pod's labels can make the event too large for one datagram: then it goes without them
  // (the `kubernetes` object keeps only the host), and if that is still too large, not at all.
  std::string doc = head + ",\"kubernetes\":" + event.kubernetes + tail;
  if (doc.size() > options_.max_document_bytes) {
    doc = head + ",\"kubernetes\":" + KubernetesObject(options_.node_name, nullptr, "", "") + tail;
  }
  if (doc.size() > options_.max_document_bytes) {
    ++oversize_dropped_;
    return;
  }
  docs->push_back(std::move(doc));
}

}  // namespace nvmlx::render
