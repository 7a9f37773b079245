// Renders series models as CloudWatch Embedded Metric Format documents (docs/emf.md §1):
// one JSON object per document, no newline inside, shaped
//   {"_aws":{"Timestamp":<ms>,["LogGroupName":..,]["LogStreamName":..,]
//            "CloudWatchMetrics":[{"Namespace":..,"Dimensions":[[..]],
//                                  "Metrics":[{"Name":..,"Unit":..[,"StorageResolution":1]}]}]},
//    "<label>":"<value>", ..., "<metric>":<number>, ...}
//
// What goes in: a SeriesModel (render/series.h): one document per label set with EMF points (like
// the agent's merge), its points in family order; plus the CloudWatch labels the agent path gets
// from relabeling (EmfOptions:: extra_labels: ClusterName, NodeName, Service, job, and Namespace
// copied from `namespace`), each only where the series has no label of that name. Every label is a
// string member (kept in the log, queryable in Logs Insights); the rules (render/emf_rules.h)
// decide which metrics get a directive and with which dimension sets. A label set with no directive
// gives no document.
//
// Values: finite numbers in CloudWatch's range only (NaN, +-Inf, |v| > 1.17e108 and
// 0 < |v| < 8.5e-109 are skipped); integers exact, doubles shortest round-trip. Counters (CSV
// type `counter`) are sent as deltas by default, like the agent: the first sample of a series is
// held back, a decrease counts as a reset (the current value is the delta), and a series unseen
// for 5 minutes starts over. With counters_as_delta=false they are sent raw.
//
// Units: DCGM units mapped to CloudWatch's (EmfUnitFor); metric_unit in the rules overrides.
// Ratios (DCGM "ratio", 0..1, e.g. DCGM_FI_PROF_GR_ENGINE_ACTIVE) stay 0..1 with Unit None:
// the metric keeps the value and meaning it has on the Prometheus side and on the agent path,
// and "Percent" on a 0..1 value would read as 100x too small.
//
// Limits: at most 100 metrics per document (so per directive), dimension sets of at most 30 keys
// (rules), documents at most max_document_bytes (default 61440: fits one UDP datagram);
// a label set that needs more is split into several documents with the same labels and
// Timestamp. A dimension set whose value is blank, non-ASCII or over 1024 characters is not
// used (CloudWatch would reject the document). A single metric that cannot fit is dropped and
// counted (oversize_dropped()).
//
// Thread-safety: not thread-safe (it keeps the counters' previous values); call Render from one
// thread (the collector's publish callback).
#ifndef NVML_EXPORTER_RENDER_EMF_H_
#define NVML_EXPORTER_RENDER_EMF_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/snapshot.h"
#include "render/emf_rules.h"
#include "render/series.h"
#include "render/series_model.h"

namespace nvmlx::render {

struct EmfOptions {
  std::string log_group_name;   // _aws.LogGroupName; empty: omitted (the agent's default group)
  std::string log_stream_name;  // _aws.LogStreamName; empty: omitted
  bool counters_as_delta = true;
  bool high_resolution = false;  // StorageResolution 1 on every metric
  size_t max_document_bytes = 61440;
  size_t max_metrics_per_document = 100;
  // Added to every label set where absent, in this order: ClusterName (when non-empty),
  // NodeName, Service, job.
  Labels extra_labels;
};

// The CloudWatch unit for a DCGM unit string of the field catalog: "%" Percent, "B" Bytes,
// "B/s" Bytes/Second, "KB/s" Kilobytes/Second, "MB/s" Megabytes/Second, "MiB" Megabytes,
// "count" Count, "s" Seconds, "ms" Milliseconds, "us" Microseconds; everything else (ratio, MHz,
// C, W, mJ, ns, bitmask, "") None. CloudWatch units are labels, not conversions: values are sent
// in the DCGM unit, as on /metrics.
std::string_view EmfUnitFor(std::string_view dcgm_unit);

// Whether CloudWatch takes `v` as a dimension value: 1..1024 printable ASCII characters, not all
// blank (docs/emf.md §2). A dimension set with any other value is left out, not sent broken.
bool UsableDimensionValue(std::string_view v);

class EmfRenderer {
 public:
  EmfRenderer(EmfRules rules, EmfOptions options);

  // Appends the documents for `model`'s EMF points to *docs; `time` is their Timestamp (the
  // Snapshot's). The model's own families (nvml_exporter_*) and Prometheus-only series are not
  // sent, but for those marked with an emf_unit (energy per pod, a counter: sent as deltas).
  void Render(const SeriesModel& model, std::chrono::system_clock::time_point time,
              std::vector<std::string>* docs);

  const EmfRules& rules() const { return rules_; }
  uint64_t oversize_dropped() const { return oversize_dropped_; }

 private:
  struct Metric {
    std::string_view name;
    std::string_view unit;
    std::string value;  // JSON number text
  };
  struct CounterState {
    double value = 0;
    int64_t int_value = 0;
    std::chrono::system_clock::time_point seen;
  };

  // Appends to `metrics` the value to send for point `v` of `entry`'s family (counters: the
  // delta), or nothing.
  void AddValue(const std::string& series_key, const SeriesFamily& family, const SeriesPoint& v,
                std::chrono::system_clock::time_point time, std::vector<Metric>* metrics);
  // Writes the documents of one label set (split by count and size).
  void EmitLabelSet(const Labels& labels, const std::vector<Metric>& metrics,
                    const std::vector<EmfDirective>& directives, int64_t timestamp_ms,
                    std::vector<std::string>* docs);
  // One document of `chosen` metric indices; empty when it has no directive left.
  std::string WriteDocument(const Labels& labels, const std::vector<Metric>& metrics,
                            const std::vector<EmfDirective>& directives,
                            const std::vector<size_t>& chosen, int64_t timestamp_ms) const;
  void Split(const Labels& labels, const std::vector<Metric>& metrics,
             const std::vector<EmfDirective>& directives, std::vector<size_t> chosen,
             int64_t timestamp_ms, std::vector<std::string>* docs);

  EmfRules rules_;
  EmfOptions options_;
  // Reused across renders: each label set's EMF points, in family order.
  std::vector<uint32_t> set_begin_;
  std::vector<std::pair<const SeriesFamily*, const SeriesPoint*>> set_points_;
  std::unordered_map<std::string, CounterState> counters_;
  NameMatchCache name_matches_;
  std::chrono::system_clock::time_point last_prune_;
  uint64_t oversize_dropped_ = 0;
};

}  // namespace nvmlx::render

#endif  // NVML_EXPORTER_RENDER_EMF_H_
