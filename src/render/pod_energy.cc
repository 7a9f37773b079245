#include "render/pod_energy.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "fields/field_roles.h"
#include "render/pod_families.h"
#include "render/series.h"
#include "util/json_members.h"

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

// The key of a GPU's last reading: its UUID, or "gpu<index>" when NVML gave none.
std::string ReadingKey(unsigned index, const std::string& uuid) {
  return uuid.empty() ? "gpu" + std::to_string(index) : uuid;
}

// --- Restore: the saved file is input from outside (a hostPath, anyone's edit) -----------------
// Read through util/json_members.h only: no access that throws on a wrong type or a missing
// member (a throw here ended the daemon at every start).
using Json = nlohmann::json;
using util::json::Member;

// `v` as an integer in [lo, hi] (0 <= lo <= hi); nullopt when absent, of another type or out of
// range.
std::optional<int64_t> IntegerIn(const Json* v, int64_t lo, int64_t hi) {
  const std::optional<uint64_t> u = util::json::Uint(v);
  if (!u || *u < static_cast<uint64_t>(lo) || *u > static_cast<uint64_t>(hi)) return std::nullopt;
  return static_cast<int64_t>(*u);
}

Status Expected(const std::string& where, std::string_view what) {
  return InvalidArgument(where + ": expected " + std::string(what));
}

constexpr int64_t kMaxReadingMj = static_cast<int64_t>(PodEnergyLedger::kMaxJoules * 1000);
constexpr std::string_view kUnixSecondsWanted = "Unix seconds, an integer from 0 to 7258118400";
constexpr std::string_view kReadingWanted = "millijoules, an integer from 0 to 1e18";
constexpr std::string_view kKeysWanted = "GPU keys of at most 512 bytes";
static_assert(PodEnergyLedger::kMaxUnixSeconds == 7258118400 &&
                  PodEnergyLedger::kMaxLabelBytes == 512 && kMaxReadingMj == 1000000000000000000,
              "the messages above name these bounds");

// One element of "series", checked.
struct SavedSeries {
  struct {
    unsigned gpu = 0;
    std::string uuid, profile, gpu_instance, ns, pod, container;
  } key;
  double joules = 0;
  int64_t grown_s = 0;
};

Result<SavedSeries> ParseSeries(const Json& e, const std::string& where) {
  if (!e.is_object()) return Expected(where, "an object");
  SavedSeries s;
  const std::optional<int64_t> gpu =
      IntegerIn(Member(e, "gpu"), 0, std::numeric_limits<unsigned>::max());
  if (!gpu) return Expected(where + ".gpu", "a GPU index, an integer from 0 to 4294967295");
  s.key.gpu = static_cast<unsigned>(*gpu);
  for (auto [field, out] : {std::pair<const char*, std::string*>{"uuid", &s.key.uuid},
                            {"profile", &s.key.profile},
                            {"gpu_instance", &s.key.gpu_instance},
                            {"namespace", &s.key.ns},
                            {"pod", &s.key.pod},
                            {"container", &s.key.container}}) {
    const std::string* v = util::json::StringPtr(Member(e, field));
    if (v == nullptr || v->size() > PodEnergyLedger::kMaxLabelBytes) {
      return Expected(where + "." + field, "a string of at most 512 bytes");
    }
    *out = *v;
  }
  const std::optional<double> joules = util::json::Number(Member(e, "joules"));
  if (!joules || *joules < 0 || *joules > PodEnergyLedger::kMaxJoules) {
    return Expected(where + ".joules", "a number of joules from 0 to 1e15");
  }
  s.joules = *joules;
  const std::optional<int64_t> grown =
      IntegerIn(Member(e, "grown"), 0, PodEnergyLedger::kMaxUnixSeconds);
  if (!grown) return Expected(where + ".grown", kUnixSecondsWanted);
  s.grown_s = *grown;
  return s;
}

}  // namespace

void PodEnergyLedger::Observe(const model::Snapshot& snap) {
  for (const model::DeviceSnapshot& gpu : snap.devices) {
    if (gpu.identity == nullptr || gpu.identity->mig || !gpu.up) continue;
    const std::optional<int64_t> mj = EnergyMillijoules(gpu);
    if (!mj) continue;
    const std::string key = ReadingKey(gpu.identity->index, gpu.identity->uuid);
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

void PodEnergyLedger::AddFamily(const PodFamiliesOptions& options, SeriesModel* model) const {
  if (accounts_.empty()) return;
  // Through the one builder: its registry entry has the CloudWatch unit too (EMF gets the joules
  // of each window).
  SeriesFamily& f = AddOwnFamily(model, OwnFamily("nvml_exporter_pod_gpu_energy_joules_total"));
  // The label names of our other per-pod families (-o: uuid, pod_namespace, pod_name,
  // container_name), from the one place they are spelled.
  const LabelNames names = options.label_names();
  std::vector<LabelView> labels;
  for (const auto& [k, a] : accounts_) {
    const std::string gpu = std::to_string(k.gpu);
    labels.clear();
    labels.emplace_back("gpu", gpu);
    // A UUID NVML did not give is left out, never UUID="" (as on nvml_exporter_gpu_up).
    if (!k.uuid.empty()) labels.emplace_back(names.uuid, k.uuid);
    if (!k.gpu_instance.empty()) {
      labels.emplace_back("GPU_I_PROFILE", k.profile);
      labels.emplace_back("GPU_I_ID", k.gpu_instance);
    }
    labels.emplace_back(names.ns, k.ns);
    labels.emplace_back(names.pod, k.pod);
    labels.emplace_back(names.container, k.container);
    AddOwnDoublePoint(model, &f, labels, a.joules, kToBoth);
  }
}

std::string PodEnergyLedger::Serialize(std::chrono::system_clock::time_point now) const {
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
  // Replace, not throw, on a label that is not UTF-8 (the kubelet's and API server's names are,
  // but a throw here would end the daemon).
  return util::json::Dump(doc, 1) + "\n";
}

Result<PodEnergyLedger::Restored> PodEnergyLedger::Restore(
    const std::string& text, std::chrono::system_clock::time_point now, const KnownGpus& gpus) {
  Result<Json> parsed = util::json::Parse(text);
  if (!parsed.ok()) return InvalidArgument("expected a JSON object; " + parsed.status().message());
  if (!parsed->is_object()) return InvalidArgument("expected a JSON object");
  const Json& doc = *parsed;
  if (!IntegerIn(Member(doc, "version"), 1, 1)) return Expected("version", "1");
  const std::optional<int64_t> saved_s = IntegerIn(Member(doc, "saved"), 0, kMaxUnixSeconds);
  if (!saved_s) return Expected("saved", kUnixSecondsWanted);
  const Json* readings_json = util::json::Object(Member(doc, "readings_mj"));
  if (readings_json == nullptr) {
    return Expected("readings_mj", "an object of GPU readings");
  }
  std::set<std::string> known_readings;
  for (const auto& [index, uuid] : gpus) known_readings.insert(ReadingKey(index, uuid));
  std::map<std::string, int64_t> readings;
  for (const auto& [gpu, mj] : readings_json->items()) {
    if (gpu.size() > kMaxLabelBytes) return Expected("readings_mj", kKeysWanted);
    const std::optional<int64_t> v = IntegerIn(&mj, 0, kMaxReadingMj);
    if (!v) return Expected("readings_mj[\"" + gpu + "\"]", kReadingWanted);
    if (known_readings.contains(gpu)) readings[gpu] = *v;
  }
  const Json* series = util::json::Array(Member(doc, "series"));
  if (series == nullptr) return Expected("series", "an array");
  std::map<Key, Account> accounts;
  Restored restored;
  size_t n = 0;
  for (const Json& e : *series) {
    const std::string where = "series[" + std::to_string(n++) + "]";
    Result<SavedSeries> s = ParseSeries(e, where);
    if (!s.ok()) return s.status();
    const auto known = gpus.find(s->key.gpu);
    if (known == gpus.end() || known->second != s->key.uuid) {
      ++restored.dropped;  // not a GPU of this daemon's
      continue;
    }
    Key k;
    k.gpu = s->key.gpu;
    k.uuid = std::move(s->key.uuid);
    k.profile = std::move(s->key.profile);
    k.gpu_instance = std::move(s->key.gpu_instance);
    k.ns = std::move(s->key.ns);
    k.pod = std::move(s->key.pod);
    k.container = std::move(s->key.container);
    Account a;
    a.joules = s->joules;
    a.grown = std::chrono::system_clock::time_point(std::chrono::seconds(s->grown_s));
    if (!accounts.emplace(std::move(k), a).second) {
      return Expected(where, "each series once (another has the same labels)");
    }
  }
  restored.series = accounts.size();
  const auto saved = std::chrono::system_clock::time_point(std::chrono::seconds(*saved_s));
  accounts_ = std::move(accounts);
  last_mj_.clear();
  if (now - saved <= kRestoreGap) last_mj_ = std::move(readings);
  return restored;
}

}  // namespace nvmlx::render
