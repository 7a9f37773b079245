// EmfPipeline: the daemon's CloudWatch EMF path, wired from the flags: rules (--emf-config or
// the built-in set), the EMF renderer, and the sinks (--emf-output). The collector's publish
// callback hands it each collection's series model: it renders there (bounded work, once per
// collection) and queues the documents on the sinks, whose own threads send them, so a dead
// receiver never slows collection or scrapes.
//
// The CloudWatch labels it adds (render/emf.h): ClusterName (--emf-cluster-name, when set),
// NodeName ($NODE_NAME, else the host name), Service (--emf-service, "nvidia-dcgm-exporter": the
// GPU Operator's Service name, so the article's label_matcher ".*dcgm.*" matches), job
// (--emf-job, "kubernetes-pod-dcgm-exporter": the article's scrape job name), and Namespace
// (the workload's namespace, from the pod attribution).
//
// With --emf-schema container-insights the documents are Container Insights' GPU events instead
// (render/emf_container_insights.h): ClusterName is then required, the rules, --emf-namespace and
// the Service/job labels do not apply, and the log group is .../performance.
//
// Thread-safety: OnSeries() from one thread at a time (the collector's); AddFamilies() from any
// thread (it writes only the caller's model); Stop() once.
#ifndef NVML_EXPORTER_APP_EMF_PIPELINE_H_
#define NVML_EXPORTER_APP_EMF_PIPELINE_H_

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/own_families.h"
#include "config/options.h"
#include "render/emf.h"
#include "render/emf_container_insights.h"
#include "render/series_model.h"
#include "sinks/sink_set.h"
#include "util/status.h"

namespace nvmlx::app {

class EmfPipeline {
 public:
  // The series come from the daemon's one series model (OnSeries), so only the EMF flags are
  // read here. Errors (bad rules file, bad --emf-output, bad --emf-namespace) are
  // INVALID_ARGUMENT/NOT_FOUND with the file, line and what was expected.
  static Result<std::unique_ptr<EmfPipeline>> Create(const config::Options& options);

  EmfPipeline(render::EmfRenderer renderer, std::unique_ptr<sinks::SinkSet> sinks)
      : renderer_(std::move(renderer)), sinks_(std::move(sinks)) {}
  EmfPipeline(render::ContainerInsightsRenderer renderer, std::unique_ptr<sinks::SinkSet> sinks)
      : ci_(std::move(renderer)), sinks_(std::move(sinks)) {}

  // The collection's series model (render/series.h, built with the Prometheus page's options)
  // and the snapshot it was built from (the Container Insights schema reads the snapshot).
  void OnSeries(const render::SeriesModel& model, const model::Snapshot& snap);
  // The sinks' counters as our own families of the page (app/own_families.h).
  void AddFamilies(render::SeriesModel* model) const { AddSinkFamilies(*sinks_, model); }
  // Drains the sinks for at most their drain timeout or `max_drain`, if shorter.
  void Stop(std::chrono::milliseconds max_drain = std::chrono::milliseconds::max()) {
    sinks_->Stop(max_drain);
  }

 private:
  // Exactly one is set: the prometheus schema's renderer or Container Insights'.
  std::optional<render::EmfRenderer> renderer_;
  std::optional<render::ContainerInsightsRenderer> ci_;
  std::unique_ptr<sinks::SinkSet> sinks_;
  bool fields_checked_ = false;
  std::vector<std::string> documents_;
  uint64_t oversize_logged_ = 0;
};

}  // namespace nvmlx::app

#endif  // NVML_EXPORTER_APP_EMF_PIPELINE_H_
