// The CloudWatch EMF flag group (config/option_flags.h).
#include <string>

#include "config/option_flags.h"

namespace nvmlx::config::flags {
namespace {

// clang-format off
constexpr FlagSpec kEmf[] = {
  {"emf-output", "", "NVML_EXPORTER_EMF_OUTPUT", Kind::kList, "", true, "SINK",
   "Send CloudWatch EMF documents to SINK: stdout, file:PATH, tcp://HOST:PORT or\n"
   "        udp://HOST:PORT (the CloudWatch agent's emf listener: tcp/udp :25888). Repeatable."},
  {"emf-config", "", "NVML_EXPORTER_EMF_CONFIG", Kind::kString, "", true, "FILE",
   "EMF rules: the CloudWatch agent's emf_processor (metric_declaration, ...) in YAML or\n"
   "        JSON, or a whole agent config; default: built-in rules (per pod and per GPU)."},
  {"emf-cluster-name", "", "NVML_EXPORTER_EMF_CLUSTER_NAME", Kind::kString, "", true, "NAME",
   "The ClusterName label of EMF documents."},
  {"emf-namespace", "", "NVML_EXPORTER_EMF_NAMESPACE", Kind::kString, "", true, "NS",
   "CloudWatch namespace (overrides the rules' metric_namespace; default\n"
   "        ContainerInsights/Prometheus)."},
  {"emf-log-group", "", "NVML_EXPORTER_EMF_LOG_GROUP", Kind::kString, "", true, "GROUP",
   "_aws.LogGroupName (default /aws/containerinsights/<cluster>/prometheus when\n"
   "        --emf-cluster-name is set, else none: the agent's default group)."},
  {"emf-log-stream", "", "NVML_EXPORTER_EMF_LOG_STREAM", Kind::kString, "", true, "STREAM",
   "_aws.LogStreamName (default none)."},
  {"emf-counters", "", "NVML_EXPORTER_EMF_COUNTERS", Kind::kString, "delta", true, "MODE",
   "Counters in EMF: delta (as the CloudWatch agent: first sample held back) or raw."},
  {"emf-storage-resolution", "", "NVML_EXPORTER_EMF_STORAGE_RESOLUTION", Kind::kInt, "60", true,
   "S", "CloudWatch storage resolution of EMF metrics: 60 or 1 (high resolution)."},
  {"emf-service", "", "NVML_EXPORTER_EMF_SERVICE", Kind::kString, "nvidia-dcgm-exporter", true,
   "NAME", "The Service label of EMF documents."},
  {"emf-job", "", "NVML_EXPORTER_EMF_JOB", Kind::kString, "kubernetes-pod-dcgm-exporter", true,
   "NAME", "The job label of EMF documents."},
  {"emf-file-max-bytes", "", "NVML_EXPORTER_EMF_FILE_MAX_BYTES", Kind::kInt, "104857600", true,
   "N", "Rotate a file: EMF output before it passes N bytes."},
  {"emf-file-keep", "", "NVML_EXPORTER_EMF_FILE_KEEP", Kind::kInt, "5", true, "N",
   "Rotated EMF files kept (PATH.1 ... PATH.N)."},
  {"emf-queue-size", "", "NVML_EXPORTER_EMF_QUEUE_SIZE", Kind::kInt, "10000", true, "N",
   "EMF documents queued per output; beyond, new ones are dropped and counted."},
  {"emf-schema", "", "NVML_EXPORTER_EMF_SCHEMA", Kind::kString, "prometheus", true, "SCHEMA",
   "EMF documents as the CloudWatch agent's prometheus scrape path makes them (DCGM names),\n"
   "        or as Container Insights publishes GPU metrics (container-insights: node_gpu_*,\n"
   "        pod_gpu_*, container_gpu_* in the ContainerInsights namespace)."},
  {"emf-histograms", "", "NVML_EXPORTER_EMF_HISTOGRAMS", Kind::kBool, "false", true, "",
   "container-insights schema: send each GPU metric once a minute as a distribution\n"
   "        (Values/Counts/Max/Min/Count/Sum) of that minute's collections, as the agent's\n"
   "        high-frequency GPU metrics (collect every second with -c 1000)."},
  {"emf-instance-id", "", "NVML_EXPORTER_EMF_INSTANCE_ID", Kind::kString, "", true, "ID",
   "The InstanceId dimension (container-insights schema) when the Node object has no\n"
   "        aws:/// providerID or no API server is reachable."},
  {"emf-instance-type", "", "NVML_EXPORTER_EMF_INSTANCE_TYPE", Kind::kString, "", true, "TYPE",
   "The InstanceType dimension (container-insights schema) when the Node object has no\n"
   "        node.kubernetes.io/instance-type label or no API server is reachable."},
};
// clang-format on

Status ConvertEmf(const RawFlags& raw, Options* o) {
  Options::Emf* e = &o->emf;
  auto get = [&raw](std::string_view name) -> const Raw& { return raw.Get(name); };
  for (const std::string& v : get("emf-output").values) {
    size_t start = 0;
    while (start <= v.size()) {
      size_t comma = v.find(',', start);
      if (comma == std::string::npos) comma = v.size();
      std::string item = v.substr(start, comma - start);
      item.erase(0, item.find_first_not_of(' '));
      item.erase(item.find_last_not_of(' ') + 1);
      if (!item.empty()) e->outputs.push_back(item);
      start = comma + 1;
    }
  }
  ToText(get("emf-config"), &e->config_file);
  ToText(get("emf-cluster-name"), &e->cluster_name);
  ToText(get("emf-namespace"), &e->metric_namespace);
  ToText(get("emf-log-group"), &e->log_group);
  ToText(get("emf-log-stream"), &e->log_stream);
  ToText(get("emf-instance-id"), &e->instance_id);
  ToText(get("emf-instance-type"), &e->instance_type);
  NVMLX_RETURN_IF_ERROR(ToBool(get("emf-histograms"), &e->histograms));
  if (const Raw& r = get("emf-schema"); r.set) {
    if (r.last() == "prometheus") {
      e->schema = Options::Emf::Schema::kPrometheus;
    } else if (r.last() == "container-insights") {
      e->schema = Options::Emf::Schema::kContainerInsights;
    } else {
      return InvalidArgument(r.origin + ": " + Quote(r.last()) +
                             " is not an EMF schema (expected prometheus or container-insights)");
    }
  }
  NVMLX_RETURN_IF_ERROR(ToNonEmpty(get("emf-service"), &e->service));
  NVMLX_RETURN_IF_ERROR(ToNonEmpty(get("emf-job"), &e->job));
  if (const Raw& r = get("emf-counters"); r.set) {
    if (r.last() != "delta" && r.last() != "raw") {
      return InvalidArgument(r.origin + ": " + Quote(r.last()) + " is not delta or raw");
    }
    e->counters_delta = r.last() == "delta";
  }
  if (const Raw& r = get("emf-storage-resolution"); r.set) {
    if (r.last() != "60" && r.last() != "1") {
      return InvalidArgument(r.origin + ": " + Quote(r.last()) +
                             " is not a storage resolution (expected 60 or 1)");
    }
    e->high_resolution = r.last() == "1";
  }
  auto number = [&](std::string_view name, long long min, long long max, long long* out) {
    const Raw& r = get(name);
    if (!r.set) return Status::Ok();
    std::optional<long long> v = ParseDecimal(r.last());
    if (!v || *v < min || *v > max) {
      return InvalidArgument(r.origin + ": " + Quote(r.last()) + " is not a whole number from " +
                             std::to_string(min) + " to " + std::to_string(max));
    }
    *out = *v;
    return Status::Ok();
  };
  long long max_bytes = static_cast<long long>(e->file_max_bytes), keep = e->file_keep,
            queue = e->queue_size;
  NVMLX_RETURN_IF_ERROR(number("emf-file-max-bytes", 4096, 1LL << 50, &max_bytes));
  NVMLX_RETURN_IF_ERROR(number("emf-file-keep", 0, 1000, &keep));
  NVMLX_RETURN_IF_ERROR(number("emf-queue-size", 1, 10000000, &queue));
  e->file_max_bytes = static_cast<uint64_t>(max_bytes);
  e->file_keep = static_cast<int>(keep);
  e->queue_size = static_cast<int>(queue);
  if (e->histograms && e->schema != Options::Emf::Schema::kContainerInsights) {
    return InvalidArgument(get("emf-histograms").origin +
                           ": applies to --emf-schema container-insights only");
  }
  return Status::Ok();
}

}  // namespace

FlagGroup EmfFlags() { return {kEmf, &ConvertEmf}; }

}  // namespace nvmlx::config::flags
