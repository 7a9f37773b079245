// Renders a Snapshot as CloudWatch Container Insights' GPU events (docs/emf.md §7): the documents
// the CloudWatch agent publishes for EKS with enhanced observability when it scrapes
// dcgm-exporter, written by us directly so that the console's GPU views and alarms work with our
// EMF alone (--emf-schema container-insights).
//
// Per collection:
//  - ContainerGPU: one event per (device, pod container) the device is attributed to, with the
//    seven container_gpu_* metrics (fields/container_insights.h) and the labels ClusterName,
//    ContainerName, FullPodName (the pod), PodName (its workload), Namespace, GpuDevice
//    (nvidia<index>), UUID, NodeName, InstanceId, InstanceType, Type, Version "0", Sources,
//    Timestamp and the `kubernetes` object. Devices with no pod give none (the agent drops them).
//  - PodGPU: the same per (device, pod), pod_gpu_*, without ContainerName.
//  - NodeGPU: one per GPU (MIG instances are not nodes' GPUs), node_gpu_*.
//  - Pod / Node: the GPU allocation counts (pod_gpu_request, ..., node_gpu_limit, ...) from the
//    API server's pod specs and the Node's capacity (model/gpu_allocation.h), when known.
// A dimension set is declared only when every key has a value (Service: never, we do not know
// pods' Services). On a GPU shared by several pods (time-slicing, MPS) and with per-process data
// (--kubernetes-process-metrics), each pod's copy carries its own share of utilization and memory
// instead of the device's value; on a MIG instance, the instance's values, with temperature and
// power from its GPU. The agent repeats the device's value in both cases (docs/emf.md §7.5).
//
// Histograms (--emf-histograms): as the agent's high-frequency mode, each GPU metric of an event
// is sent once per period (60 s) as {"Values","Counts","Max","Min","Count","Sum"} over the
// collections of that period, one distribution per event (label set); the allocation counts stay
// plain values.
//
// The envelope is EMF version 1 (`_aws` with a numeric Timestamp): what a client may send to the
// agent's EMF listener or to CloudWatch Logs. The agent's own exporter writes the older version
// "0" layout; CloudWatch extracts the same metrics, dimensions and members from both.
//
// Thread-safety: not thread-safe (histogram windows); call Render from one thread.
#ifndef NVML_EXPORTER_RENDER_EMF_CONTAINER_INSIGHTS_H_
#define NVML_EXPORTER_RENDER_EMF_CONTAINER_INSIGHTS_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/snapshot.h"

namespace nvmlx::render {

struct ContainerInsightsOptions {
  std::string cluster_name;  // required (the agent refuses to run without one)
  std::string node_name;     // NodeName, kubernetes.host; the log stream by default
  // InstanceId / InstanceType when the Node object does not give them (model::NodeInfo).
  std::string instance_id;
  std::string instance_type;
  std::string log_group;   // empty: /aws/containerinsights/<cluster>/performance
  std::string log_stream;  // empty: the node name
  bool high_resolution = false;
  // Per-process data is collected (--kubernetes-process-metrics): shared GPUs split per pod.
  bool pod_shares = false;
  bool histograms = false;
  std::chrono::seconds histogram_period{60};
  size_t max_document_bytes = 61440;
};

// The workload name Container Insights reports as PodName: a ReplicaSet's Deployment (the
// ReplicaSet name without its "-<hash>" suffix), a Job's CronJob (without "-<digits>"), another
// owner's name, or the pod's own name when it has no owner (docs/emf.md §7.4).
std::string CiWorkloadName(std::string_view pod, std::string_view owner_kind,
                           std::string_view owner_name);

class ContainerInsightsRenderer {
 public:
  explicit ContainerInsightsRenderer(ContainerInsightsOptions options);

  // Appends this collection's documents to *docs (with histograms: only when a period ends).
  void Render(const model::Snapshot& snap, std::chrono::system_clock::time_point time,
              std::vector<std::string>* docs);

  const ContainerInsightsOptions& options() const { return options_; }
  uint64_t oversize_dropped() const { return oversize_dropped_; }

  // One event before it is written: exposed for the allocation part and the tests.
  struct Metric {
    std::string_view name;  // static storage: the schema's names (MetricName)
    std::string_view unit;
    double value = 0;
  };
  struct Event {
    std::string_view type;                                    // "ContainerGPU", "Pod", ...
    std::vector<std::pair<std::string, std::string>> labels;  // sorted by name
    std::string kubernetes;                                   // JSON object text
    std::vector<Metric> metrics;
    const std::vector<std::vector<std::string_view>>* dimensions = nullptr;
    // Numeric members that are not metrics (the Node event's node_gpu_request, as the agent's).
    std::vector<std::pair<std::string_view, double>> fields{};
  };

 private:
  struct Distribution {
    std::string_view unit;
    std::map<double, uint64_t> counts;
    double min = 0, max = 0, sum = 0;
    uint64_t count = 0;
  };
  struct Window {
    Event last;  // labels, kubernetes and dimensions of the latest collection
    std::map<std::string, Distribution> metrics;
  };

  void AddGpuEvents(const model::Snapshot& snap, std::vector<Event>* events) const;
  void AddAllocationEvents(const model::Snapshot& snap, std::vector<Event>* events) const;
  void Write(const Event& event, int64_t timestamp_ms, const Window* histogram,
             std::vector<std::string>* docs);
  void AddToWindows(std::vector<Event>&& events);
  const std::string& DimensionsJson(const Event& event);
  std::pair<std::string, std::string> Identity(const model::Snapshot& snap) const;

  ContainerInsightsOptions options_;
  std::string log_group_;
  std::string log_stream_;
  // By event type + labels. Hashed: a collection looks up every event's window (thousands with
  // hundreds of pods); the period's documents are written in key order all the same.
  std::unordered_map<std::string, Window> windows_;
  // The "Dimensions" array of an event, by its declaration table and which of its sets the
  // event can use (bit i: set i): the same few arrays serve every event of a collection.
  std::map<std::pair<const void*, uint32_t>, std::string> dimensions_json_;
  // With histograms: the latest allocation events, sent (as plain values) when a period ends.
  std::vector<Event> last_allocation_;
  std::chrono::system_clock::time_point window_start_{};
  int64_t last_ms_ = 0;  // the latest collection's Timestamp, for the period's documents
  uint64_t oversize_dropped_ = 0;
};

}  // namespace nvmlx::render

#endif  // NVML_EXPORTER_RENDER_EMF_CONTAINER_INSIGHTS_H_
