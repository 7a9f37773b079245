#include "live/live_json.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>
#include <utility>
#include <variant>

#include "fields/clock_event_names.h"
#include "fields/field_roles.h"
#include "util/json_members.h"

namespace nvmlx::live {
namespace {

using nlohmann::json;

using fields::Quantity;

// A number rounded to 4 decimals (the page shows 3 at most); null when absent or not numeric.
json Number(const model::DeviceSnapshot& d, Quantity q) {
  const model::Sample* s = fields::FindQuantity(d.samples, q);
  if (s == nullptr) return nullptr;
  if (const auto* i = std::get_if<int64_t>(&s->value)) return *i;
  if (const auto* x = std::get_if<double>(&s->value)) {
    if (!std::isfinite(*x)) return nullptr;
    return std::round(*x * 1e4) / 1e4;
  }
  return nullptr;
}

int64_t UnixMs(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

// "ok", "lost" (fell off the bus), "stale" (reads stuck past the deadline), "down" (every read
// failed).
std::string_view StateOf(const model::DeviceSnapshot& d) {
  if (d.lost) return "lost";
  if (d.stale) return "stale";
  if (!d.up) return "down";
  return "ok";
}

// The worst health watch: "pass", "warn", "fail"; null when health is not collected.
json HealthOf(const model::DeviceSnapshot& d, json* watches) {
  *watches = json::array();
  if (d.health.empty()) return nullptr;
  int worst = 0;
  for (const model::HealthResult& h : d.health) {
    worst = std::max(worst, h.value);
    (*watches).push_back({{"watch", h.watch}, {"error_code", h.error_code}, {"value", h.value}});
  }
  return worst >= 20 ? "fail" : worst >= 10 ? "warn" : "pass";
}

json ThrottleReasons(const model::DeviceSnapshot& d) {
  const model::Sample* s = fields::FindQuantity(d.samples, Quantity::kClockEventReasons);
  if (s == nullptr || !std::holds_alternative<int64_t>(s->value)) return nullptr;
  const auto mask = static_cast<uint64_t>(std::get<int64_t>(s->value));
  json names = json::array();
  for (uint64_t bit : fields::kClockEventReasonBits) {
    if ((mask & bit) != 0) names.push_back(fields::ClockEventName(bit));
  }
  return names;
}

// One row of the pod table: a container of a pod on one device.
struct PodRow {
  std::string namespace_name, pod, container, vgpu;
  unsigned gpu = 0;
  std::string device_key;
  double share = 0;           // of the device: 1 / the containers holding it
  json memory_mib = nullptr;  // its processes' memory, or the share of the device's used memory
  std::string memory_source;  // "processes", "share", or "" (unknown)
  bool kubelet = false;       // known from the kubelet (else from its processes only)
};

void CollectPods(const model::Snapshot& snap, std::vector<PodRow>* rows) {
  const model::Attribution& a = snap.attribution;
  for (const model::DeviceSnapshot& d : snap.devices) {
    if (d.identity == nullptr) continue;
    const std::string& key = d.identity->DeviceKey();
    // Per-container process memory on this device, where the processes are attributed.
    std::map<std::tuple<std::string, std::string, std::string>, uint64_t> proc_bytes;
    if (a.processes != nullptr && a.metadata != nullptr) {
      for (const model::ProcessSample& p : d.processes) {
        auto owner = a.processes->by_pid.find(p.pid);
        if (owner == a.processes->by_pid.end()) continue;
        auto meta = a.metadata->by_uid.find(owner->second.pod_uid);
        if (meta == a.metadata->by_uid.end()) continue;
        auto c = meta->second.container_names.find(owner->second.container_id);
        const std::string container =
            c == meta->second.container_names.end() ? std::string() : c->second;
        proc_bytes[{meta->second.namespace_name, meta->second.pod, container}] +=
            p.used_memory_bytes;
      }
    }
    const json fb_used = Number(d, Quantity::kFbUsedMib);
    std::vector<const model::PodRef*> refs;
    if (a.devices != nullptr) {
      auto it = a.devices->pods_by_device.find(key);
      if (it != a.devices->pods_by_device.end()) {
        for (const model::PodRef& r : it->second) refs.push_back(&r);
      }
    }
    for (const model::PodRef* r : refs) {
      PodRow row{r->namespace_name,
                 r->pod,
                 r->container,
                 r->vgpu,
                 d.identity->index,
                 key,
                 1.0 / static_cast<double>(refs.size()),
                 nullptr,
                 "",
                 true};
      auto pb = proc_bytes.find({r->namespace_name, r->pod, r->container});
      if (pb != proc_bytes.end()) {
        row.memory_mib = std::round(static_cast<double>(pb->second) / 1048576.0 * 10) / 10;
        row.memory_source = "processes";
        proc_bytes.erase(pb);
      } else if (const std::optional<double> used = util::json::Number(&fb_used)) {
        row.memory_mib = std::round(*used * row.share * 10) / 10;
        row.memory_source = "share";
      }
      rows->push_back(std::move(row));
    }
    // Containers known only from their processes (no kubelet, or not a device holder).
    for (const auto& [who, bytes] : proc_bytes) {
      PodRow row{std::get<0>(who),
                 std::get<1>(who),
                 std::get<2>(who),
                 "",
                 d.identity->index,
                 key,
                 0,
                 std::round(static_cast<double>(bytes) / 1048576.0 * 10) / 10,
                 "processes",
                 false};
      rows->push_back(std::move(row));
    }
  }
  std::stable_sort(rows->begin(), rows->end(), [](const PodRow& x, const PodRow& y) {
    return std::tie(x.namespace_name, x.pod, x.container, x.gpu, x.device_key) <
           std::tie(y.namespace_name, y.pod, y.container, y.gpu, y.device_key);
  });
}

json Gpu(const model::DeviceSnapshot& d, const model::Snapshot& snap) {
  const model::DeviceIdentity& id = *d.identity;
  json g;
  g["gpu"] = id.index;
  g["uuid"] = id.uuid;
  g["device_key"] = id.DeviceKey();
  g["pci_bus_id"] = id.pci_bus_id;
  g["model"] = id.model_name;
  g["mig"] = id.mig ? json{{"profile", id.mig->profile},
                           {"gpu_instance_id", id.mig->gpu_instance_id},
                           {"uuid", id.mig->uuid}}
                    : json(nullptr);
  g["state"] = StateOf(d);
  g["up"] = d.up;
  g["lost"] = d.lost;
  g["stale"] = d.stale;
  g["slow_stale"] = d.slow_stale;
  g["gpu_util"] = Number(d, Quantity::kGpuUtilPercent);
  g["gr_engine_active"] = Number(d, Quantity::kGrEngineActive);
  g["tensor_active"] = Number(d, Quantity::kTensorActive);
  g["dram_active"] = Number(d, Quantity::kDramActive);
  g["fb_used_mib"] = Number(d, Quantity::kFbUsedMib);
  g["fb_free_mib"] = Number(d, Quantity::kFbFreeMib);
  json total = Number(d, Quantity::kFbTotalMib);
  const json used = Number(d, Quantity::kFbUsedMib), free = Number(d, Quantity::kFbFreeMib),
             reserved = Number(d, Quantity::kFbReservedMib);
  const std::optional<double> used_mib = util::json::Number(&used),
                              free_mib = util::json::Number(&free);
  if (total.is_null() && used_mib.has_value() && free_mib.has_value()) {
    // The default CSV has no FB_TOTAL: the whole is used + free + reserved, as NVML counts it.
    total = *used_mib + *free_mib + util::json::Number(&reserved).value_or(0.0);
  }
  g["fb_total_mib"] = std::move(total);
  g["power_w"] = Number(d, Quantity::kPowerWatts);
  g["temp_c"] = Number(d, Quantity::kGpuTempC);
  g["throttle_reasons"] = ThrottleReasons(d);
  json events = json::array();
  for (const model::ClockEventCount& c : d.clock_event_counts) {
    events.push_back({{"reason", fields::ClockEventName(c.reason)}, {"count", c.count}});
  }
  g["clock_event_counts"] = d.clock_events_watched ? events : json(nullptr);
  g["clock_events_window_ms"] = snap.clock_events_window_ms;
  g["xid_last"] = Number(d, Quantity::kLastXid);
  json xids = json::array();
  for (const model::XidCount& x : d.xid_counts) {
    xids.push_back({{"xid", x.xid}, {"count", x.count}});
  }
  g["xid_counts"] = d.xid_watched ? xids : json(nullptr);
  g["xid_window_ms"] = snap.xid_window_ms;
  json watches;
  g["health"] = HealthOf(d, &watches);
  g["health_watches"] = std::move(watches);
  g["processes"] = d.processes.size();
  return g;
}

json Header(const SnapshotJsonOptions& o) {
  return {{"version", kJsonVersion},
          {"exporter_version", o.version},
          {"hostname", o.hostname},
          {"interval_ms", o.interval.count()}};
}

std::string WithoutClose(const json& doc) {
  // Names come from outside (GPU models, pods, containers, the hostname): invalid UTF-8 in one
  // is replaced rather than thrown on.
  std::string s = util::json::Dump(doc);
  s.pop_back();  // the object's closing brace
  return s;
}

}  // namespace

std::string RenderSnapshotPrefix(const model::Snapshot& snap, const SnapshotJsonOptions& options) {
  json doc = Header(options);
  doc["time_unix_ms"] = UnixMs(snap.time);
  doc["collect_seconds"] = std::round(snap.collect_seconds * 1e4) / 1e4;
  json gpus = json::array();
  for (const model::DeviceSnapshot& d : snap.devices) {
    if (d.identity != nullptr) gpus.push_back(Gpu(d, snap));
  }
  doc["gpus"] = std::move(gpus);
  std::vector<PodRow> rows;
  CollectPods(snap, &rows);
  json pods = json::array();
  for (const PodRow& r : rows) {
    pods.push_back({{"namespace", r.namespace_name},
                    {"pod", r.pod},
                    {"container", r.container},
                    {"vgpu", r.vgpu},
                    {"gpu", r.gpu},
                    {"device_key", r.device_key},
                    {"share", r.kubelet ? json(std::round(r.share * 1e4) / 1e4) : json(nullptr)},
                    {"memory_mib", r.memory_mib},
                    {"memory_source", r.memory_source}});
  }
  doc["pods"] = std::move(pods);
  // Configured, and whether a source has answered yet (the page tells "off" from "waiting").
  doc["kubernetes"] = options.kubernetes;
  doc["pods_known"] = snap.attribution.devices != nullptr || snap.attribution.processes != nullptr;
  return WithoutClose(doc);
}

std::string FinishSnapshot(std::string_view prefix, double age_seconds, bool stale) {
  std::string out;
  out.reserve(prefix.size() + 48);
  out.append(prefix);
  out.append(",\"age_seconds\":");
  out.append(util::json::Dump(json(std::round(age_seconds * 1000) / 1000)));
  out.append(stale ? ",\"stale\":true}" : ",\"stale\":false}");
  return out;
}

std::string EmptySnapshot(const SnapshotJsonOptions& options, double age_seconds) {
  json doc = Header(options);
  doc["time_unix_ms"] = nullptr;
  doc["collect_seconds"] = nullptr;
  doc["gpus"] = json::array();
  doc["pods"] = json::array();
  doc["kubernetes"] = options.kubernetes;
  doc["pods_known"] = false;
  return FinishSnapshot(WithoutClose(doc), age_seconds, true);
}

namespace {

// A decimal of at most `max_digits` digits; nullopt otherwise.
std::optional<int64_t> Decimal(std::string_view v, std::size_t max_digits) {
  if (v.empty() || v.size() > max_digits) return std::nullopt;
  int64_t n = 0;
  for (char c : v) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n;
}

std::string Shown(std::string_view v) { return std::string(v.substr(0, 64)); }

}  // namespace

Result<HistoryQuery> ParseHistoryQuery(std::string_view query, int kept) {
  std::optional<int> minutes;
  HistoryQuery q;
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    std::string_view item = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    const std::string_view name = item.substr(0, eq);
    const std::string_view value =
        eq == std::string_view::npos ? std::string_view() : item.substr(eq + 1);
    if (name == "minutes") {
      if (minutes) return InvalidArgument("minutes given more than once");
      std::optional<int64_t> v = Decimal(value, 5);
      if (!v || *v < 1) {
        return InvalidArgument("minutes=\"" + Shown(value) +
                               "\" is not a whole number of minutes from 1 to " +
                               std::to_string(std::max(kept, 1)));
      }
      if (*v > kept) {
        return InvalidArgument("minutes=" + std::to_string(*v) + " is more than the " +
                               std::to_string(kept) +
                               " minutes of history kept (--live-history-minutes)");
      }
      minutes = static_cast<int>(*v);
    } else if (name == "since") {
      if (q.since_ms) return InvalidArgument("since given more than once");
      std::optional<int64_t> v = Decimal(value, 15);
      if (!v) {
        return InvalidArgument("since=\"" + Shown(value) +
                               "\" is not a time in Unix milliseconds (a \"t\" value of an earlier "
                               "answer)");
      }
      q.since_ms = *v;
    } else {
      return InvalidArgument("unknown query parameter \"" + Shown(name) +
                             "\" (expected minutes or since)");
    }
  }
  q.minutes = minutes.value_or(std::min(15, kept));
  return q;
}

std::string RenderHistory(const std::vector<DeviceHistory>& devices, const HistoryJsonInfo& info) {
  json doc{{"version", kJsonVersion},
           {"minutes", info.minutes},
           {"minutes_kept", info.minutes_kept},
           {"since_unix_ms", info.since_ms ? json(*info.since_ms) : json(nullptr)},
           {"interval_ms", info.interval.count()},
           {"bytes_per_gpu", info.bytes_per_gpu}};
  json series = json::array();
  for (const HistorySeries& s : kHistorySeries) {
    series.push_back({{"name", s.name}, {"unit", s.unit}, {"field_id", s.field_id}});
  }
  doc["series"] = std::move(series);
  json gpus = json::array();
  for (const DeviceHistory& d : devices) {
    json g{{"gpu", d.index}, {"device_key", d.key}};
    json t = json::array();
    std::array<json, kHistorySeriesCount> columns;
    for (json& c : columns) c = json::array();
    for (const HistoryPoint& p : d.points) {
      t.push_back(p.time_ms);
      for (std::size_t s = 0; s < kHistorySeriesCount; ++s) {
        const float v = p.values[s];
        // NaN (absent) is null; 4 decimals are more than a sparkline shows.
        columns[s].push_back(std::isfinite(v) ? json(std::round(double{v} * 1e4) / 1e4)
                                              : json(nullptr));
      }
    }
    g["t"] = std::move(t);
    for (std::size_t s = 0; s < kHistorySeriesCount; ++s) {
      g[std::string(kHistorySeries[s].name)] = std::move(columns[s]);
    }
    gpus.push_back(std::move(g));
  }
  doc["gpus"] = std::move(gpus);
  return util::json::Dump(doc);
}

}  // namespace nvmlx::live
