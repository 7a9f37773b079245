#include "emf_validator.h"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

namespace nvmlx::testing {
namespace {

using nlohmann::json;

const std::set<std::string>& Units() {
  static const auto* units = new std::set<std::string>{"Seconds",
                                                       "Microseconds",
                                                       "Milliseconds",
                                                       "Bytes",
                                                       "Kilobytes",
                                                       "Megabytes",
                                                       "Gigabytes",
                                                       "Terabytes",
                                                       "Bits",
                                                       "Kilobits",
                                                       "Megabits",
                                                       "Gigabits",
                                                       "Terabits",
                                                       "Percent",
                                                       "Count",
                                                       "Bytes/Second",
                                                       "Kilobytes/Second",
                                                       "Megabytes/Second",
                                                       "Gigabytes/Second",
                                                       "Terabytes/Second",
                                                       "Bits/Second",
                                                       "Kilobits/Second",
                                                       "Megabits/Second",
                                                       "Gigabits/Second",
                                                       "Terabits/Second",
                                                       "Count/Second",
                                                       "None"};
  return *units;
}

bool InRange(const json& v) {
  if (!v.is_number()) return false;
  const double d = v.get<double>();
  if (!std::isfinite(d)) return false;
  const double a = std::fabs(d);
  return a == 0 || (a >= 8.5e-109 && a <= 1.17e108);
}

bool ValidNamespace(const std::string& ns) {
  if (ns.empty() || ns.size() > 256 || ns.rfind("AWS/", 0) == 0) return false;
  for (char c : ns) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '#' ||
          c == ':' || c == '/' || c == '-')) {
      return false;
    }
  }
  return true;
}

bool ValidDimensionValue(const std::string& v) {
  if (v.empty() || v.size() > 1024) return false;
  bool non_blank = false;
  for (unsigned char c : v) {
    if (c >= 0x80 || c < 0x20) return false;
    if (c != ' ') non_blank = true;
  }
  return non_blank;
}

}  // namespace

namespace {

// A distribution (the CloudWatch agent's metric_as_distribution form, docs/emf.md §7.6): exactly
// Values (1..100 distinct finite numbers), Counts (as many positive integers), Max, Min, Count
// (a positive integer: the samples) and Sum; Min <= every value <= Max; the Counts add up to Count.
template <typename Err>
void CheckDistribution(const json& v, const std::string& name, Err& err) {
  static const std::set<std::string> kKeys = {"Values", "Counts", "Max", "Min", "Count", "Sum"};
  std::set<std::string> keys;
  for (const auto& [k, unused] : v.items()) keys.insert(k);
  if (keys != kKeys) {
    err("distribution of " + name + " needs exactly Values, Counts, Max, Min, Count, Sum");
    return;
  }
  const json& values = v["Values"];
  const json& counts = v["Counts"];
  if (!values.is_array() || !counts.is_array() || values.empty() || values.size() > 100 ||
      values.size() != counts.size()) {
    err("distribution of " + name + ": Values and Counts must be arrays of 1..100, equally long");
    return;
  }
  if (!InRange(v["Max"]) || !InRange(v["Min"]) || !InRange(v["Sum"]) ||
      !v["Count"].is_number_unsigned() || v["Count"].get<uint64_t>() == 0) {
    err("distribution of " + name + ": Max, Min, Sum must be numbers and Count positive");
    return;
  }
  const double lo = v["Min"].get<double>(), hi = v["Max"].get<double>();
  uint64_t total = 0;
  std::set<double> seen;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!InRange(values[i]) || values[i].get<double>() < lo || values[i].get<double>() > hi) {
      err("distribution of " + name + ": a value outside [Min, Max] or not a number");
    } else if (!seen.insert(values[i].get<double>()).second) {
      err("distribution of " + name + ": a value twice in Values");
    }
    if (!counts[i].is_number_unsigned() || counts[i].get<uint64_t>() == 0) {
      err("distribution of " + name + ": Counts must be positive integers");
    } else {
      total += counts[i].get<uint64_t>();
    }
  }
  if (total != v["Count"].get<uint64_t>()) {
    err("distribution of " + name + ": Counts add up to " + std::to_string(total) + ", Count is " +
        v["Count"].dump());
  }
}

}  // namespace

std::vector<std::string> ValidateEmf(std::string_view document, const EmfCheckOptions& options) {
  std::vector<std::string> errors;
  auto err = [&errors](std::string e) { errors.push_back(std::move(e)); };
  if (document.size() > options.max_bytes) {
    err("document is " + std::to_string(document.size()) + " bytes, over " +
        std::to_string(options.max_bytes));
  }
  if (document.find('\n') != std::string_view::npos) err("raw newline inside the document");
  json root;
  try {
    root = json::parse(document.begin(), document.end());  // throws on trailing data
  } catch (const std::exception& e) {
    err(std::string("not one JSON value: ") + e.what());
    return errors;
  }
  if (!root.is_object()) {
    err("root is not an object");
    return errors;
  }
  if (!root.contains("_aws") || !root["_aws"].is_object()) {
    err("no _aws object");
    return errors;
  }
  const json& aws = root["_aws"];
  for (const auto& [k, v] : aws.items()) {
    if (k != "Timestamp" && k != "CloudWatchMetrics" && k != "LogGroupName" &&
        k != "LogStreamName") {
      err("unexpected member _aws." + k);
    }
    if ((k == "LogGroupName" || k == "LogStreamName") &&
        (!v.is_string() || v.get<std::string>().empty())) {
      err("_aws." + k + " must be a non-empty string");
    }
  }
  if (!aws.contains("Timestamp") || !aws["Timestamp"].is_number_integer()) {
    err("_aws.Timestamp missing or not an integer");
  } else {
    const int64_t ts = aws["Timestamp"].get<int64_t>();
    if (ts <= 0) err("_aws.Timestamp not positive");
    if (options.now_ms &&
        (ts < *options.now_ms - 14LL * 86400 * 1000 || ts > *options.now_ms + 2LL * 3600 * 1000)) {
      err("_aws.Timestamp outside [now-14d, now+2h]: " + std::to_string(ts));
    }
  }
  if (!aws.contains("CloudWatchMetrics") || !aws["CloudWatchMetrics"].is_array() ||
      aws["CloudWatchMetrics"].empty()) {
    err("_aws.CloudWatchMetrics missing, not an array, or empty");
    return errors;
  }
  std::set<std::string> metric_names;
  std::set<std::string> dimension_keys;
  std::map<std::string, int> resolution;
  for (const json& d : aws["CloudWatchMetrics"]) {
    if (!d.is_object()) {
      err("a directive is not an object");
      continue;
    }
    for (const auto& [k, v] : d.items()) {
      if (k != "Namespace" && k != "Dimensions" && k != "Metrics") {
        err("unexpected directive member " + k);
      }
    }
    if (!d.contains("Namespace") || !d["Namespace"].is_string() ||
        !ValidNamespace(d["Namespace"].get<std::string>())) {
      err("directive Namespace missing or invalid");
    }
    if (!d.contains("Dimensions") || !d["Dimensions"].is_array() || d["Dimensions"].empty()) {
      err("directive Dimensions missing, not an array, or empty (use [[]] for none)");
    } else {
      for (const json& set : d["Dimensions"]) {
        if (!set.is_array()) {
          err("a DimensionSet is not an array");
          continue;
        }
        if (set.size() > 30) err("a DimensionSet has more than 30 keys");
        std::set<std::string> seen;
        for (const json& key : set) {
          if (!key.is_string()) {
            err("a dimension key is not a string");
            continue;
          }
          const std::string k = key.get<std::string>();
          if (!seen.insert(k).second) err("dimension key repeated in a set: " + k);
          if (k.empty() || k.size() > 250 || k[0] == ':') err("invalid dimension name: " + k);
          dimension_keys.insert(k);
          if (!root.contains(k)) {
            err("dimension key without a root member: " + k);
          } else if (!root[k].is_string()) {
            err("dimension member is not a string: " + k);
          } else if (!ValidDimensionValue(root[k].get<std::string>())) {
            err("dimension value blank, non-ASCII or over 1024 characters: " + k);
          }
        }
      }
    }
    if (!d.contains("Metrics") || !d["Metrics"].is_array() || d["Metrics"].empty() ||
        d["Metrics"].size() > 100) {
      err("directive Metrics missing, empty or over 100");
      continue;
    }
    for (const json& m : d["Metrics"]) {
      if (!m.is_object() || !m.contains("Name") || !m["Name"].is_string()) {
        err("a MetricDefinition has no string Name");
        continue;
      }
      for (const auto& [k, v] : m.items()) {
        if (k != "Name" && k != "Unit" && k != "StorageResolution") {
          err("unexpected MetricDefinition member " + k);
        }
      }
      const std::string name = m["Name"].get<std::string>();
      if (name.empty() || name.size() > 250) err("metric name empty or over 250: " + name);
      metric_names.insert(name);
      if (m.contains("Unit") &&
          (!m["Unit"].is_string() || Units().count(m["Unit"].get<std::string>()) == 0)) {
        err("unit not in CloudWatch's list for " + name + ": " + m["Unit"].dump());
      }
      int res = 60;
      if (m.contains("StorageResolution")) {
        if (!m["StorageResolution"].is_number_integer() ||
            (m["StorageResolution"] != 1 && m["StorageResolution"] != 60)) {
          err("StorageResolution not 1 or 60 for " + name);
        } else {
          res = m["StorageResolution"].get<int>();
        }
      }
      if (auto [it, inserted] = resolution.emplace(name, res); !inserted && it->second != res) {
        err("two StorageResolutions for " + name);
      }
      if (!root.contains(name)) {
        err("metric without a root member: " + name);
        continue;
      }
      const json& v = root[name];
      if (v.is_array()) {
        if (v.empty() || v.size() > 100) err("metric array empty or over 100 values: " + name);
        for (const json& e : v) {
          if (!InRange(e)) err("metric array value not a finite number in range: " + name);
        }
      } else if (v.is_object()) {
        CheckDistribution(v, name, err);
      } else if (!InRange(v)) {
        err("metric value not a finite number in range: " + name + " = " + v.dump());
      }
    }
  }
  if (metric_names.size() > 100) {
    err("more than 100 metrics in one document: " + std::to_string(metric_names.size()));
  }
  for (const std::string& k : dimension_keys) {
    if (metric_names.count(k) != 0) err("a name is both a dimension and a metric: " + k);
  }
  return errors;
}

}  // namespace nvmlx::testing
