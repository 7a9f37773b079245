#include "render/pod_energy.h"

#include <charconv>
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>
#include <vector>

#include "fields/field_roles.h"
#include "render/pod_families.h"
#include "render/series.h"

namespace nvmlx::render {
namespace {

// A MIG profile's compute slices: the n of DCGM's "<n>g.<m>gb" ("1g.18gb", "3g.71gb"); 0 when the
// name does not say.
unsigned ComputeSlices(const std::string& profile) {
  unsigned n = 0;
  const auto [end, ec] = std::from_chars(profile.data(), profile.data() + profile.size(), n);
  return ec == std::errc() && end != profile.data() + profile.size() && *end == 'g' ? n : 0;
}

std::optional<int64_t> EnergyMillijoules(const model::DeviceSnapshot& dev) {
  const model::Sample* s = fields::FindQuantity(dev.samples, fields::Quantity::kEnergyMillijoules);
  if (s == nullptr) return std::nullopt;
  if (const auto* i = std::get_if<int64_t>(&s->value)) return *i;
  if (const auto* d = std::get_if<double>(&s->value)) return static_cast<int64_t>(*d);
  return std::nullopt;
}

}  // namespace

void PodEnergyLedger::Observe(const model::Snapshot& snap) {
  for (const model::DeviceSnapshot& gpu : snap.devices) {
    if (gpu.identity == nullptr || gpu.identity->mig || !gpu.up) continue;
    const std::optional<int64_t> mj = EnergyMillijoules(gpu);
    if (!mj) continue;
    const std::string key = gpu.identity->uuid.empty() ? "gpu" + std::to_string(gpu.identity->index)
                                                       : gpu.identity->uuid;
    auto last = last_mj_.find(key);
    const bool first = last == last_mj_.end();
    const int64_t before = first ? 0 : last->second;
    last_mj_[key] = *mj;
    if (first || *mj <= before) continue;  // the first reading, or a reset: no window
    const double joules = static_cast<double>(*mj - before) / 1000.0;
    std::vector<std::pair<const model::DeviceSnapshot*, unsigned>> instances;
    unsigned slices = 0;
    for (const model::DeviceSnapshot& d : snap.devices) {
      if (d.identity == nullptr || !d.identity->mig || d.identity->index != gpu.identity->index) {
        continue;
      }
      const unsigned n = ComputeSlices(d.identity->mig->profile);
      instances.emplace_back(&d, n);
      slices += n;
    }
    if (instances.empty() || slices == 0) {
      Split(snap, gpu, joules);
      continue;
    }
    for (const auto& [inst, n] : instances) Split(snap, *inst, joules * n / slices);
  }
  for (auto it = accounts_.begin(); it != accounts_.end();) {
    it = snap.time - it->second.grown > kIdleForget ? accounts_.erase(it) : std::next(it);
  }
}

void PodEnergyLedger::Split(const model::Snapshot& snap, const model::DeviceSnapshot& dev,
                            double joules) {
  const model::DeviceIdentity& id = *dev.identity;
  Key base;
  base.gpu = id.index;
  base.uuid = id.uuid;
  if (id.mig) {
    base.profile = id.mig->profile;
    base.gpu_instance = std::to_string(id.mig->gpu_instance_id);
  }
  if (snap.attribution.devices != nullptr) {
    auto it = snap.attribution.devices->pods_by_device.find(id.DeviceKey());
    if (it != snap.attribution.devices->pods_by_device.end() && it->second.size() == 1 &&
        it->second[0].vgpu.empty()) {
      const model::PodRef& p = it->second[0];  // exclusively held
      Key k = base;
      k.ns = p.namespace_name;
      k.pod = p.pod;
      k.container = p.container;
      Credit(std::move(k), joules, snap.time);
      return;
    }
  }
  // Shared, or known through its processes only: by each pod container's SM share.
  const DeviceUsage usage = AggregatePodUsage(dev, snap.attribution);
  double sm_total = 0;
  for (const PodUsage& p : usage.pods) {
    if (!p.pod.empty()) sm_total += static_cast<double>(p.sm_percent);
  }
  const double scale = sm_total > 100 ? sm_total : 100;
  double given = 0;
  for (const PodUsage& p : usage.pods) {
    if (p.pod.empty() || p.sm_percent == 0) continue;
    const double share = joules * static_cast<double>(p.sm_percent) / scale;
    Key k = base;
    k.ns = std::string(p.namespace_name);
    k.pod = std::string(p.pod);
    k.container = std::string(p.container);
    Credit(std::move(k), share, snap.time);
    given += share;
  }
  Credit(base, joules - given, snap.time);  // idle time and host processes
}

void PodEnergyLedger::Credit(Key key, double joules, std::chrono::system_clock::time_point at) {
  if (joules <= 0) return;
  Account& a = accounts_[std::move(key)];
  a.joules += joules;
  a.grown = at;
}

double PodEnergyLedger::Joules(unsigned gpu, const std::string& gpu_instance, const std::string& ns,
                               const std::string& pod, const std::string& container) const {
  double sum = 0;
  for (const auto& [k, a] : accounts_) {
    if (k.gpu == gpu && k.gpu_instance == gpu_instance && k.ns == ns && k.pod == pod &&
        k.container == container) {
      sum += a.joules;
    }
  }
  return sum;
}

void PodEnergyLedger::AddFamily(SeriesModel* model) const {
  if (accounts_.empty()) return;
  SeriesFamily& f = AddOwnFamily(
      model, "nvml_exporter_pod_gpu_energy_joules_total", "counter",
      "Energy each pod container used on a GPU (or MIG instance) since the exporter started: the "
      "GPU's energy counter split among its holders (whole to an exclusive holder, by SM share "
      "on a shared GPU, by compute slices on MIG); namespace, pod and container empty for the "
      "unattributed rest.");
  // CloudWatch gets it too, as the joules of each window (a counter: EMF sends deltas): summed
  // over a period they are the energy of that period, per pod, namespace or GPU. No joule unit.
  f.emf_unit = "None";
  for (const auto& [k, a] : accounts_) {
    const std::string gpu = std::to_string(k.gpu);
    std::vector<LabelView> labels = {{"gpu", gpu}, {"UUID", k.uuid}};
    if (!k.gpu_instance.empty()) {
      labels.emplace_back("GPU_I_PROFILE", k.profile);
      labels.emplace_back("GPU_I_ID", k.gpu_instance);
    }
    labels.emplace_back("namespace", k.ns);
    labels.emplace_back("pod", k.pod);
    labels.emplace_back("container", k.container);
    AddOwnDoublePoint(model, &f, labels, a.joules, kToBoth);
  }
}

std::string PodEnergyLedger::Serialize(std::chrono::system_clock::time_point now) const {
  using Json = nlohmann::json;
  auto seconds = [](std::chrono::system_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
  };
  Json series = Json::array();
  for (const auto& [k, a] : accounts_) {
    series.push_back({{"gpu", k.gpu},
                      {"uuid", k.uuid},
                      {"profile", k.profile},
                      {"gpu_instance", k.gpu_instance},
                      {"namespace", k.ns},
                      {"pod", k.pod},
                      {"container", k.container},
                      {"joules", a.joules},
                      {"grown", seconds(a.grown)}});
  }
  Json readings = Json::object();
  for (const auto& [gpu, mj] : last_mj_) readings[gpu] = mj;
  const Json doc = {
      {"version", 1}, {"saved", seconds(now)}, {"readings_mj", readings}, {"series", series}};
  return doc.dump(1) + "\n";
}

Status PodEnergyLedger::Restore(const std::string& text,
                                std::chrono::system_clock::time_point now) {
  using Json = nlohmann::json;
  const Json doc = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return InvalidArgument("expected a JSON object");
  if (doc.value("version", 0) != 1) return InvalidArgument("expected \"version\": 1");
  if (!doc.contains("series") || !doc["series"].is_array()) {
    return InvalidArgument("expected \"series\": an array");
  }
  std::map<Key, Account> accounts;
  size_t n = 0;
  for (const Json& e : doc["series"]) {
    const std::string where = "series[" + std::to_string(n++) + "]";
    if (!e.is_object() || !e.contains("gpu") || !e["gpu"].is_number_unsigned() ||
        !e.contains("joules") || !e["joules"].is_number() || e["joules"].get<double>() < 0) {
      return InvalidArgument(where + ": expected an object with gpu (an index) and joules (>= 0)");
    }
    Key k;
    k.gpu = e["gpu"].get<unsigned>();
    for (auto [field, out] : {std::pair<const char*, std::string*>{"uuid", &k.uuid},
                              {"profile", &k.profile},
                              {"gpu_instance", &k.gpu_instance},
                              {"namespace", &k.ns},
                              {"pod", &k.pod},
                              {"container", &k.container}}) {
      if (!e.contains(field) || !e[field].is_string()) {
        return InvalidArgument(where + ": expected \"" + field + "\": a string");
      }
      *out = e[field].get<std::string>();
    }
    Account a;
    a.joules = e["joules"].get<double>();
    a.grown = std::chrono::system_clock::time_point(std::chrono::seconds(e.value("grown", 0)));
    accounts[std::move(k)] = a;
  }
  std::map<std::string, int64_t> readings;
  const auto saved =
      std::chrono::system_clock::time_point(std::chrono::seconds(doc.value("saved", 0)));
  if (now - saved <= kRestoreGap && doc.contains("readings_mj") && doc["readings_mj"].is_object()) {
    for (const auto& [gpu, mj] : doc["readings_mj"].items()) {
      if (mj.is_number_integer()) readings[gpu] = mj.get<int64_t>();
    }
  }
  accounts_ = std::move(accounts);
  last_mj_ = std::move(readings);
  return Status::Ok();
}

}  // namespace nvmlx::render
