#include "render/pod_energy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "fields/field_ids.h"
#include "render/prometheus.h"
#include "render/series.h"

namespace nvmlx::render {
namespace {

using std::chrono::seconds;

const auto kT0 = std::chrono::system_clock::from_time_t(1796000000);
// The GPUs of the daemon that restores (the test's three).
const PodEnergyLedger::KnownGpus kGpus = {{0, "GPU-0"}, {1, "GPU-1"}, {2, "GPU-2"}};

// GPU 0 exclusive to ns/a; GPU 1 time-sliced by ns/b and ns/c (pids 10 and 11); GPU 2 MIG with a
// 1g instance held by ns/d and a 2g instance nobody holds.
class PodEnergyTest : public ::testing::Test {
 protected:
  PodEnergyTest() {
    for (unsigned i = 0; i < 3; ++i) {
      model::DeviceIdentity id;
      id.index = i;
      id.uuid = "GPU-" + std::to_string(i);
      ids_->push_back(id);
    }
    for (auto [gi, profile] : {std::pair<unsigned, const char*>{1, "1g.18gb"}, {2, "2g.35gb"}}) {
      model::DeviceIdentity id = (*ids_)[2];
      id.mig = model::DeviceIdentity::Mig{gi, 0, profile, "MIG-" + std::to_string(gi)};
      ids_->push_back(id);
    }
    auto pods = std::make_shared<model::DeviceAttribution>();
    pods->pods_by_device["GPU-0"] = {{"ns", "a", "main", ""}};
    pods->pods_by_device["GPU-1"] = {{"ns", "b", "main", "0"}, {"ns", "c", "main", "1"}};
    pods->pods_by_device["MIG-1"] = {{"ns", "d", "main", ""}};
    attribution_.devices = pods;
    auto procs = std::make_shared<model::ProcessAttribution>();
    procs->by_pid[10] = {"uid-b", std::string(64, 'b')};
    procs->by_pid[11] = {"uid-c", std::string(64, 'c')};
    attribution_.processes = procs;
    auto meta = std::make_shared<model::PodMetadata>();
    for (const char* p : {"b", "c"}) {
      model::PodMeta m;
      m.namespace_name = "ns";
      m.pod = p;
      m.uid = std::string("uid-") + p;
      m.container_names[std::string(64, p[0])] = "main";
      meta->by_uid[m.uid] = m;
      meta->uid_by_name["ns/" + std::string(p)] = m.uid;
    }
    attribution_.metadata = meta;
  }
  // A collection at kT0 + t with each GPU's energy counter (mJ) and GPU 1's SM shares.
  model::Snapshot Snap(int t, std::array<int64_t, 3> mj, unsigned sm_b, unsigned sm_c) {
    model::Snapshot s;
    s.time = kT0 + seconds(t);
    s.identities = ids_;
    s.attribution = attribution_;
    s.devices.resize(ids_->size());
    for (size_t i = 0; i < ids_->size(); ++i) {
      s.devices[i].identity = &(*ids_)[i];
      if (i < 3) s.devices[i].samples = {{fields::ids::kTotalEnergy, mj[i]}};
    }
    s.devices[1].processes = {{10, 0, true, sm_b, 0}, {11, 0, true, sm_c, 0}};
    return s;
  }
  std::shared_ptr<std::vector<model::DeviceIdentity>> ids_ =
      std::make_shared<std::vector<model::DeviceIdentity>>();
  model::Attribution attribution_;
};

TEST_F(PodEnergyTest, ExclusiveSharedAndMigSplitsSumToTheGpusGrowth) {
  PodEnergyLedger ledger;
  ledger.Observe(Snap(0, {1000, 5000, 0}, 30, 50));  // the first reading: no window yet
  EXPECT_EQ(ledger.Joules(0, "", "ns", "a", "main"), 0);
  ledger.Observe(Snap(1, {61000, 105000, 90000}, 30, 50));
  EXPECT_DOUBLE_EQ(ledger.Joules(0, "", "ns", "a", "main"), 60);
  EXPECT_DOUBLE_EQ(ledger.Joules(0, "", "", "", ""), 0);
  EXPECT_DOUBLE_EQ(ledger.Joules(1, "", "ns", "b", "main"), 30);
  EXPECT_DOUBLE_EQ(ledger.Joules(1, "", "ns", "c", "main"), 50);
  EXPECT_DOUBLE_EQ(ledger.Joules(1, "", "", "", ""), 20) << "the idle rest, unattributed";
  EXPECT_DOUBLE_EQ(ledger.Joules(2, "1", "ns", "d", "main"), 30) << "1 of 3 compute slices";
  EXPECT_DOUBLE_EQ(ledger.Joules(2, "2", "", "", ""), 60);
  // Over-subscribed shares (MPS can report more than 100 % in all) are scaled to the whole.
  ledger.Observe(Snap(2, {61000, 205000, 90000}, 100, 100));
  EXPECT_DOUBLE_EQ(ledger.Joules(1, "", "ns", "b", "main"), 80);
  EXPECT_DOUBLE_EQ(ledger.Joules(1, "", "ns", "c", "main"), 100);
  EXPECT_DOUBLE_EQ(ledger.Joules(1, "", "", "", ""), 20);
}

TEST_F(PodEnergyTest, CountersNeverGoBackAcrossReattributionAndResets) {
  PodEnergyLedger ledger;
  ledger.Observe(Snap(0, {0, 0, 0}, 0, 0));
  ledger.Observe(Snap(1, {10000, 0, 0}, 0, 0));
  EXPECT_DOUBLE_EQ(ledger.Joules(0, "", "ns", "a", "main"), 10);
  // Pod a's container restarts: for one window the kubelet lists nobody on GPU 0.
  auto gone = std::make_shared<model::DeviceAttribution>(*attribution_.devices);
  gone->pods_by_device.erase("GPU-0");
  attribution_.devices = gone;
  ledger.Observe(Snap(2, {15000, 0, 0}, 0, 0));
  EXPECT_DOUBLE_EQ(ledger.Joules(0, "", "ns", "a", "main"), 10);
  EXPECT_DOUBLE_EQ(ledger.Joules(0, "", "", "", ""), 5);
  auto back = std::make_shared<model::DeviceAttribution>(*gone);
  back->pods_by_device["GPU-0"] = {{"ns", "a", "main", ""}};
  attribution_.devices = back;
  ledger.Observe(Snap(3, {20000, 0, 0}, 0, 0));
  EXPECT_DOUBLE_EQ(ledger.Joules(0, "", "ns", "a", "main"), 15) << "continues, from 10";
  // The GPU's counter went down (a reset): that window counts nothing, the next one does.
  ledger.Observe(Snap(4, {100, 0, 0}, 0, 0));
  EXPECT_DOUBLE_EQ(ledger.Joules(0, "", "ns", "a", "main"), 15);
  ledger.Observe(Snap(5, {2100, 0, 0}, 0, 0));
  EXPECT_DOUBLE_EQ(ledger.Joules(0, "", "ns", "a", "main"), 17);
  // A series not grown for an hour is dropped (a pod gone for good).
  ledger.Observe(Snap(5 + 3601, {2100, 0, 0}, 0, 0));
  EXPECT_DOUBLE_EQ(ledger.Joules(0, "", "ns", "a", "main"), 0);
}

// The family's series on a page: label text ({...}) -> value.
std::map<std::string, double> EnergySeries(const std::string& page) {
  std::map<std::string, double> out;
  const std::string name = "nvml_exporter_pod_gpu_energy_joules_total{";
  for (size_t at = page.find(name); at != std::string::npos; at = page.find(name, at + 1)) {
    const size_t end = page.find('\n', at);
    const size_t space = page.rfind(' ', end);
    out[page.substr(at + name.size() - 1, space - (at + name.size() - 1))] =
        std::stod(page.substr(space + 1, end - space - 1));
  }
  return out;
}

// An hour of 1 s collections with powers and shares that change every second: each series
// carries the joules the test works out on its own, window by window, from the split's rules
// (whole to the exclusive holder; by SM share scaled to 100 % at most, the rest unattributed; by
// compute slices on MIG). Not the sum of the series: that holds by construction, since the
// ledger credits the remainder.
TEST_F(PodEnergyTest, AnHourOfCollectionsGivesEachHolderItsShare) {
  PodEnergyLedger ledger;
  std::mt19937 rng(7);
  std::uniform_int_distribution<int64_t> watts(50, 700);
  std::uniform_int_distribution<unsigned> sm(0, 70);
  std::array<int64_t, 3> mj = {0, 0, 0};
  ledger.Observe(Snap(0, mj, 0, 0));
  double a = 0, b = 0, c = 0, idle1 = 0, d = 0, idle2 = 0;  // the expected joules
  for (int t = 1; t <= 3600; ++t) {
    std::array<int64_t, 3> w;
    for (size_t g = 0; g < 3; ++g) {
      w[g] = watts(rng);
      mj[g] += w[g] * 1000;  // one second at that power
    }
    const unsigned sm_b = sm(rng), sm_c = sm(rng);
    ledger.Observe(Snap(t, mj, sm_b, sm_c));
    a += static_cast<double>(w[0]);
    const double scale = std::max(100.0, static_cast<double>(sm_b + sm_c));
    b += static_cast<double>(w[1]) * sm_b / scale;
    c += static_cast<double>(w[1]) * sm_c / scale;
    idle1 += static_cast<double>(w[1]) * (scale - sm_b - sm_c) / scale;
    d += static_cast<double>(w[2]) / 3;  // 1 of the 3 compute slices (1g + 2g)
    idle2 += static_cast<double>(w[2]) * 2 / 3;
  }
  SeriesModel model;
  ledger.AddFamily(PodFamiliesOptions(), &model);
  std::string page;
  RenderPrometheus(model, &page);
  const std::map<std::string, double> want = {
      {R"({gpu="0",UUID="GPU-0",namespace="ns",pod="a",container="main"})", a},
      {R"({gpu="1",UUID="GPU-1",namespace="",pod="",container=""})", idle1},
      {R"({gpu="1",UUID="GPU-1",namespace="ns",pod="b",container="main"})", b},
      {R"({gpu="1",UUID="GPU-1",namespace="ns",pod="c",container="main"})", c},
      {R"({gpu="2",UUID="GPU-2",GPU_I_PROFILE="1g.18gb",GPU_I_ID="1",namespace="ns",pod="d",)"
       R"(container="main"})",
       d},
      {R"({gpu="2",UUID="GPU-2",GPU_I_PROFILE="2g.35gb",GPU_I_ID="2",namespace="",pod="",)"
       R"(container=""})",
       idle2},
  };
  const std::map<std::string, double> got = EnergySeries(page);
  ASSERT_EQ(got.size(), want.size()) << page;  // none for GPU 0's idle time: it has none
  for (const auto& [labels, joules] : want) {
    ASSERT_TRUE(got.contains(labels)) << labels << "\n" << page;
    // The page has 6 decimals; the sums' order differs from the ledger's by far less.
    EXPECT_NEAR(got.at(labels), joules, 1e-3) << labels;
  }
  EXPECT_NE(page.find("# TYPE nvml_exporter_pod_gpu_energy_joules_total counter"),
            std::string::npos);
}

// -o (--use-old-namespace): the family's labels are named as on our other per-pod families
// (uuid, pod_namespace, pod_name, container_name); and a GPU whose UUID NVML did not give has no
// UUID label, never UUID="" (nor a holder: the kubelet names devices by UUID).
TEST_F(PodEnergyTest, LabelNamesFollowTheOldNamespaceOptionAndNoEmptyUuid) {
  (*ids_)[0].uuid.clear();
  PodEnergyLedger ledger;
  ledger.Observe(Snap(0, {0, 0, 0}, 0, 0));
  ledger.Observe(Snap(1, {10000, 20000, 0}, 50, 0));
  for (const bool old : {false, true}) {
    PodFamiliesOptions options;
    options.use_old_namespace = old;
    SeriesModel model;
    ledger.AddFamily(options, &model);
    std::string page;
    RenderPrometheus(model, &page);
    const std::map<std::string, double> got = EnergySeries(page);
    const std::map<std::string, double> want =
        old ? std::map<
                  std::string,
                  double>{{R"({gpu="0",pod_namespace="",pod_name="",container_name=""})", 10},
                          {R"({gpu="1",uuid="GPU-1",pod_namespace="",pod_name="",container_name=""})",
                           10},
                          {R"({gpu="1",uuid="GPU-1",pod_namespace="ns",pod_name="b",)"
                           R"(container_name="main"})",
                           10}}
            : std::map<std::string, double>{
                  {R"({gpu="0",namespace="",pod="",container=""})", 10},
                  {R"({gpu="1",UUID="GPU-1",namespace="",pod="",container=""})", 10},
                  {R"({gpu="1",UUID="GPU-1",namespace="ns",pod="b",container="main"})", 10}};
    EXPECT_EQ(got, want) << page;
    EXPECT_EQ(page.find("UUID=\"\""), std::string::npos) << page;
    EXPECT_EQ(page.find("uuid=\"\""), std::string::npos) << page;
  }
}

// A restart of the daemon with the ledger saved: the series go on from their values, and the
// energy used while it restarted goes to the holders of the first window.
TEST_F(PodEnergyTest, SavedLedgerGoesOnAcrossARestart) {
  PodEnergyLedger before;
  before.Observe(Snap(0, {0, 0, 0}, 0, 0));
  before.Observe(Snap(1, {10000, 0, 0}, 0, 0));
  const std::string saved = before.Serialize(kT0 + seconds(1));
  PodEnergyLedger after;
  ASSERT_TRUE(after.Restore(saved, kT0 + seconds(20), kGpus).ok());
  EXPECT_DOUBLE_EQ(after.Joules(0, "", "ns", "a", "main"), 10);
  after.Observe(Snap(21, {30000, 0, 0}, 0, 0));  // 20 J while it restarted, then this window
  EXPECT_DOUBLE_EQ(after.Joules(0, "", "ns", "a", "main"), 30);
  // Saved too long ago: the values go on, the gap is nobody's (a new first reading).
  PodEnergyLedger late;
  ASSERT_TRUE(late.Restore(saved, kT0 + std::chrono::minutes(30), kGpus).ok());
  late.Observe(Snap(1800, {900000, 0, 0}, 0, 0));
  EXPECT_DOUBLE_EQ(late.Joules(0, "", "ns", "a", "main"), 10);
  late.Observe(Snap(1801, {901000, 0, 0}, 0, 0));
  EXPECT_DOUBLE_EQ(late.Joules(0, "", "ns", "a", "main"), 11);
}

TEST_F(PodEnergyTest, BadSavedLedgerIsRefusedNamingWhereAndKeepsTheLedger) {
  PodEnergyLedger ledger;
  ledger.Observe(Snap(0, {0, 0, 0}, 0, 0));
  ledger.Observe(Snap(1, {10000, 0, 0}, 0, 0));
  EXPECT_EQ(ledger.Restore("{not json", kT0, kGpus)
                .status()
                .message()
                .rfind("expected a JSON object; invalid JSON: ", 0),
            0u);
  EXPECT_EQ(ledger.Restore("[1]", kT0, kGpus).status().message(), "expected a JSON object");
  EXPECT_EQ(ledger.Restore(R"({"version": 2, "series": []})", kT0, kGpus).status().message(),
            "version: expected 1");
  const auto bad = ledger.Restore(
      R"({"version": 1, "saved": 1796000000, "readings_mj": {},
          "series": [{"gpu": 0, "uuid": "GPU-0", "profile": "", "gpu_instance": "",
          "namespace": "ns", "pod": "a", "container": "main", "joules": 5, "grown": 1796000000},
         {"gpu": 0, "joules": -1}]})",
      kT0, kGpus);
  EXPECT_EQ(bad.status().message(), "series[1].uuid: expected a string of at most 512 bytes");
  EXPECT_DOUBLE_EQ(ledger.Joules(0, "", "ns", "a", "main"), 10) << "left as it was";
}

// Issue 36: whatever JSON the state file holds, Restore answers with an error naming the member
// and what it expected, and throws nothing (the daemon used to end with nlohmann's type_error at
// every start on "version": "1", "saved": "x" or "grown": "x", and took a GPU index of 2^40 or
// 1e308 joules as they were).
TEST_F(PodEnergyTest, EveryMemberOfTheWrongTypeOrRangeIsRefusedByItsPath) {
  using Json = nlohmann::json;
  PodEnergyLedger source;
  source.Observe(Snap(0, {0, 0, 0}, 0, 0));
  source.Observe(Snap(1, {10000, 0, 0}, 0, 0));
  const Json good = Json::parse(source.Serialize(kT0 + seconds(1)));
  ASSERT_TRUE(PodEnergyLedger().Restore(good.dump(), kT0 + seconds(2), kGpus).ok());
  const std::vector<Json> wrong = {"x", "1", 1.5, -1, nullptr, Json::array(), Json::object(), true,
                                   1ULL << 40,
                                   // Past 2262: as a system_clock time in nanoseconds it
                                   // overflows (UBSan caught it when the bound was 3000).
                                   9300000000LL, 1e308, -9223372036854775807LL - 1,
                                   18446744073709551615ULL, std::string(600, 'a')};
  auto refused = [&](const Json& doc, const std::string& path) {
    PodEnergyLedger ledger;
    ledger.Observe(Snap(0, {0, 0, 0}, 0, 0));
    ledger.Observe(Snap(1, {7000, 0, 0}, 0, 0));
    const auto r = ledger.Restore(doc.dump(), kT0 + seconds(2), kGpus);
    EXPECT_FALSE(r.ok()) << path << " = " << doc.dump();
    if (!r.ok()) {
      EXPECT_EQ(r.status().message().rfind(path + ": expected ", 0), 0u)
          << path << ": " << r.status().message();
    }
    EXPECT_DOUBLE_EQ(ledger.Joules(0, "", "ns", "a", "main"), 7) << "left as it was: " << path;
  };
  size_t cases = 0;
  for (const char* member : {"version", "saved", "readings_mj", "series"}) {
    for (const Json& v : wrong) {
      if (std::string(member) == "readings_mj" && v.is_object()) continue;  // empty: valid
      if (std::string(member) == "series" && v.is_array()) continue;
      Json doc = good;
      doc[member] = v;
      refused(doc, member);
      ++cases;
    }
  }
  for (const Json& v : wrong) {
    Json doc = good;
    doc["readings_mj"]["GPU-0"] = v;
    if (!v.is_number_integer() || v.get<int64_t>() < 0) refused(doc, "readings_mj[\"GPU-0\"]");
  }
  const Json& first = good["series"][0];
  for (const auto& [member, unused] : first.items()) {
    for (const Json& v : wrong) {
      const bool string_member = first[member].is_string();
      if (string_member && v.is_string() && v.get<std::string>().size() <= 512) continue;
      if (member == "joules" && v.is_number() && v.get<double>() >= 0 &&
          v.get<double>() <= PodEnergyLedger::kMaxJoules) {
        continue;  // 1.5 J, 2^40 J: valid
      }
      Json doc = good;
      doc["series"][0][member] = v;
      refused(doc, "series[0]." + member);
      ++cases;
    }
  }
  Json missing = good;
  missing["series"][0].erase("joules");
  refused(missing, "series[0].joules");
  Json twice = good;
  twice["series"].push_back(good["series"][0]);
  refused(twice, "series[" + std::to_string(good["series"].size()) + "]");
  EXPECT_GT(cases, 100u);
  // Beyond a double: the parser's infinity is no number of joules either.
  std::string inf = good.dump();
  const size_t at = inf.find("\"joules\":") + 9;
  inf.replace(at, inf.find_first_of(",}", at) - at, "1e400");
  EXPECT_FALSE(PodEnergyLedger().Restore(inf, kT0, kGpus).ok());
}

// Random damage to a saved file, and nesting deep enough to exhaust a recursive parser: an error
// or a restore, never an exception (gtest reports one as a failure) nor a crash.
TEST_F(PodEnergyTest, DamagedTextNeverThrows) {
  PodEnergyLedger source;
  source.Observe(Snap(0, {0, 0, 0}, 0, 0));
  source.Observe(Snap(1, {10000, 5000, 9000}, 20, 30));
  const std::string good = source.Serialize(kT0 + seconds(1));
  std::mt19937 rng(36);
  const std::string alphabet = "{}[]\":,-.0123456789eEtruefalsnl x\\\xff";
  for (int i = 0; i < 3000; ++i) {
    std::string text = good;
    for (int k = 0; k < 3; ++k) {
      text[rng() % text.size()] = alphabet[rng() % alphabet.size()];
    }
    PodEnergyLedger ledger;
    (void)ledger.Restore(text, kT0 + seconds(2), kGpus);
  }
  EXPECT_FALSE(PodEnergyLedger().Restore(std::string(200000, '['), kT0, kGpus).ok());
  EXPECT_FALSE(PodEnergyLedger()
                   .Restore(std::string(100000, '[') + std::string(100000, ']'), kT0, kGpus)
                   .ok());
}

// A series of a GPU the restarted daemon does not have (its index, or its UUID there, differs) is
// left out and counted, the others go on; so is its GPU's reading.
TEST_F(PodEnergyTest, SeriesOfAnotherGpuAreDroppedTheOthersGoOn) {
  PodEnergyLedger before;
  before.Observe(Snap(0, {0, 0, 0}, 0, 0));
  before.Observe(Snap(1, {10000, 5000, 9000}, 20, 30));
  const std::string saved = before.Serialize(kT0 + seconds(1));
  PodEnergyLedger after;
  const auto r = after.Restore(saved, kT0 + seconds(2), {{0, "GPU-0"}, {1, "GPU-other"}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->series, 1u);
  EXPECT_GT(r->dropped, 3u);
  EXPECT_DOUBLE_EQ(after.Joules(0, "", "ns", "a", "main"), 10);
  EXPECT_DOUBLE_EQ(after.Joules(1, "", "ns", "b", "main"), 0);
  after.Observe(Snap(3, {12000, 9000, 9000}, 20, 30));
  EXPECT_DOUBLE_EQ(after.Joules(0, "", "ns", "a", "main"), 12) << "GPU 0's reading restored";
  // GPU-1's reading was not restored: its first window after the restart counts nothing.
  EXPECT_DOUBLE_EQ(after.Joules(1, "", "ns", "b", "main"), 0);
}

// A label that is not UTF-8 (names come from outside) is written with U+FFFD, not thrown on.
TEST_F(PodEnergyTest, SerializeOfANonUtf8LabelDoesNotThrow) {
  auto pods = std::make_shared<model::DeviceAttribution>(*attribution_.devices);
  pods->pods_by_device["GPU-0"] = {{"ns", "bad\xff\xfe", "main", ""}};
  attribution_.devices = pods;
  PodEnergyLedger ledger;
  ledger.Observe(Snap(0, {0, 0, 0}, 0, 0));
  ledger.Observe(Snap(1, {10000, 0, 0}, 0, 0));
  const std::string text = ledger.Serialize(kT0 + seconds(1));
  PodEnergyLedger back;
  ASSERT_TRUE(back.Restore(text, kT0 + seconds(2), kGpus).ok());
  EXPECT_DOUBLE_EQ(back.Joules(0, "", "ns", "bad\xef\xbf\xbd\xef\xbf\xbd", "main"), 10);
}

}  // namespace
}  // namespace nvmlx::render
