#include "ci_schema_validator.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

namespace nvmlx::testing {
namespace {

using nlohmann::json;
using Set = std::vector<std::string>;  // a dimension set, sorted

struct TypeSchema {
  std::map<std::string, std::string> units;  // metric name -> unit
  std::vector<Set> dimensions;               // the agent's declarations for the Type
  std::set<std::string> members;             // labels the Type's level keeps
  std::set<std::string> required;
  bool gpu = false;  // Sources and kubernetes.host
};

std::map<std::string, std::string> GpuUnits(const std::string& prefix) {
  return {{prefix + "gpu_utilization", "Percent"},
          {prefix + "gpu_memory_utilization", "Percent"},
          {prefix + "gpu_memory_used", "Bytes"},
          {prefix + "gpu_memory_total", "Bytes"},
          {prefix + "gpu_temperature", "None"},
          {prefix + "gpu_power_draw", "None"},
          {prefix + "gpu_tensor_core_utilization", "Percent"}};
}

const std::map<std::string, TypeSchema>& Schemas() {
  static const auto* schemas = [] {
    const std::set<std::string> common = {"ClusterName", "InstanceId", "InstanceType",
                                          "NodeName",    "Type",       "Version",
                                          "Sources",     "Timestamp",  "kubernetes"};
    auto with = [&common](std::initializer_list<std::string> more) {
      std::set<std::string> s = common;
      s.insert(more);
      return s;
    };
    auto* m = new std::map<std::string, TypeSchema>;
    (*m)["ContainerGPU"] = {
        GpuUnits("container_"),
        {{"ClusterName"},
         {"ClusterName", "ContainerName", "Namespace", "PodName"},
         {"ClusterName", "ContainerName", "FullPodName", "Namespace", "PodName"},
         {"ClusterName", "ContainerName", "FullPodName", "GpuDevice", "Namespace", "PodName"}},
        with({"GpuDevice", "Namespace", "FullPodName", "PodName", "Service", "UUID",
              "ContainerName"}),
        {"GpuDevice", "ContainerName", "FullPodName", "Namespace", "PodName"},
        true};
    (*m)["PodGPU"] = {GpuUnits("pod_"),
                      {{"ClusterName"},
                       {"ClusterName", "Namespace"},
                       {"ClusterName", "Namespace", "Service"},
                       {"ClusterName", "Namespace", "PodName"},
                       {"ClusterName", "FullPodName", "Namespace", "PodName"},
                       {"ClusterName", "FullPodName", "GpuDevice", "Namespace", "PodName"}},
                      with({"GpuDevice", "Namespace", "FullPodName", "PodName", "Service", "UUID"}),
                      {"GpuDevice", "FullPodName", "Namespace", "PodName"},
                      true};
    (*m)["NodeGPU"] = {GpuUnits("node_"),
                       {{"ClusterName"},
                        {"ClusterName", "InstanceId", "NodeName"},
                        {"ClusterName", "GpuDevice", "InstanceId", "InstanceType", "NodeName"}},
                       with({"GpuDevice"}),
                       {"GpuDevice"},
                       true};
    (*m)["Pod"] = {{{"pod_gpu_request", "Count"},
                    {"pod_gpu_limit", "Count"},
                    {"pod_gpu_usage_total", "Count"},
                    {"pod_gpu_reserved_capacity", "Percent"}},
                   {{"ClusterName"},
                    {"ClusterName", "Namespace", "PodName"},
                    {"ClusterName", "FullPodName", "Namespace", "PodName"},
                    {"ClusterName", "Namespace", "Service"}},
                   with({"Namespace", "FullPodName", "PodName", "Service"}),
                   {"FullPodName", "Namespace", "PodName"},
                   false};
    (*m)["Node"] = {{{"node_gpu_limit", "Count"},
                     {"node_gpu_usage_total", "Count"},
                     {"node_gpu_reserved_capacity", "Percent"},
                     {"node_gpu_unreserved_capacity", "Percent"},
                     {"node_gpu_available_capacity", "Count"}},
                    {{"ClusterName"}, {"ClusterName", "InstanceId", "NodeName"}},
                    with({"node_gpu_request"}),
                    {},
                    false};
    return m;
  }();
  return *schemas;
}

bool NonEmptyString(const json& root, const std::string& key) {
  return root.contains(key) && root[key].is_string() && !root[key].get<std::string>().empty();
}

}  // namespace

std::vector<std::string> ValidateContainerInsights(std::string_view document,
                                                   const CiSchemaOptions& options) {
  std::vector<std::string> errors;
  auto err = [&errors](std::string e) { errors.push_back(std::move(e)); };
  const json root = json::parse(document, nullptr, false);
  if (!root.is_object() || !root.contains("_aws")) return {"not an EMF document"};
  const json& aws = root["_aws"];
  if (aws.value("LogGroupName", "") !=
      "/aws/containerinsights/" + options.cluster_name + "/performance") {
    err("log group is not /aws/containerinsights/<cluster>/performance: " + aws.dump());
  }
  const json& directives = aws["CloudWatchMetrics"];
  if (!directives.is_array() || directives.size() != 1 ||
      directives[0].value("Namespace", "") != "ContainerInsights") {
    err("expected one directive in namespace ContainerInsights");
    return errors;
  }
  const std::string type = root.value("Type", "");
  auto schema_it = Schemas().find(type);
  if (schema_it == Schemas().end()) return {"unknown Type: " + type};
  const TypeSchema& schema = schema_it->second;
  if (root.value("Version", "") != "0") err("Version is not \"0\"");
  if (!root.contains("Timestamp") || !root["Timestamp"].is_string() ||
      root["Timestamp"].get<std::string>() != std::to_string(aws.value("Timestamp", int64_t{-1}))) {
    err("Timestamp member is not the _aws Timestamp as a string");
  }
  if (root.value("ClusterName", "") != options.cluster_name) err("ClusterName is not the cluster");
  std::set<std::string> required = schema.required;
  required.insert("NodeName");
  if (options.instance_known) required.insert({"InstanceId", "InstanceType"});
  for (const std::string& k : required) {
    if (!NonEmptyString(root, k)) err(type + " without " + k);
  }
  // Metrics: the Type's names, each with its unit.
  std::set<std::string> metric_names;
  for (const json& m : directives[0]["Metrics"]) {
    const std::string name = m.value("Name", "");
    metric_names.insert(name);
    auto u = schema.units.find(name);
    if (u == schema.units.end()) {
      err(type + " carries a metric the agent does not publish there: " + name);
    } else if (m.value("Unit", "") != u->second) {
      err(name + " unit " + m.value("Unit", "") + ", the agent's is " + u->second);
    }
  }
  // Dimension sets: exactly the agent's for this Type whose keys are all members.
  std::set<Set> declared, expected;
  for (const json& set : directives[0]["Dimensions"]) {
    Set s = set.get<Set>();
    std::sort(s.begin(), s.end());
    declared.insert(s);
  }
  for (Set s : schema.dimensions) {
    std::sort(s.begin(), s.end());
    if (std::all_of(s.begin(), s.end(),
                    [&](const std::string& k) { return NonEmptyString(root, k); })) {
      expected.insert(s);
    }
  }
  if (declared != expected) {
    err(type + ": dimension sets " + json(declared).dump() + ", the agent declares " +
        json(expected).dump());
  }
  // Members: _aws, the metrics, and the labels the level keeps.
  for (const auto& [k, v] : root.items()) {
    if (k == "_aws" || metric_names.count(k) != 0) continue;
    if (schema.members.count(k) == 0) err(type + " has a member the agent drops: " + k);
  }
  if (schema.gpu) {
    if (!root.contains("Sources") || !root["Sources"].is_array()) err("Sources is not an array");
    if (!root.contains("kubernetes") || !root["kubernetes"].is_object() ||
        root["kubernetes"].value("host", "") != root.value("NodeName", "")) {
      err("kubernetes is not an object whose host is NodeName");
    }
  }
  // Values: percents within 0..100, memory used <= total (plain values only).
  for (const std::string& name : metric_names) {
    const json& v = root[name];
    if (!v.is_number()) continue;
    auto u = schema.units.find(name);
    if (u != schema.units.end() && u->second == "Percent" &&
        (v.get<double>() < 0 || v.get<double>() > 100)) {
      err(name + " outside 0..100: " + v.dump());
    }
  }
  for (const std::string prefix : {"container_", "pod_", "node_"}) {
    const std::string used = prefix + "gpu_memory_used", total = prefix + "gpu_memory_total";
    if (root.contains(used) && root.contains(total) && root[used].is_number() &&
        root[total].is_number() && root[used].get<double>() > root[total].get<double>()) {
      err(used + " above " + total);
    }
  }
  return errors;
}

}  // namespace nvmlx::testing
