#include "app/emf_pipeline.h"

#include <limits.h>
#include <unistd.h>

#include <utility>

#include "config/text_file.h"
#include "fields/container_insights.h"
#include "plan/field_plan.h"
#include "util/log.h"

namespace nvmlx::app {
namespace {

std::string NodeName(const config::Options& o) {
  if (!o.node_name.empty()) return o.node_name;
  char buf[HOST_NAME_MAX + 1] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  return buf;
}

// The Container Insights schema's pipeline: its options from the flags; the settings of the
// prometheus schema that have no meaning here are refused rather than silently ignored.
Result<render::ContainerInsightsOptions> ContainerInsightsOptionsOf(
    const config::Options& options) {
  const config::Options::Emf& e = options.emf;
  if (e.cluster_name.empty()) {
    return InvalidArgument(
        "--emf-schema container-insights needs --emf-cluster-name: every Container Insights "
        "event and its log group name the cluster");
  }
  if (!e.config_file.empty()) {
    return InvalidArgument(
        "--emf-config applies to --emf-schema prometheus only: the container-insights schema "
        "declares the metrics and dimensions Container Insights publishes");
  }
  if (!e.metric_namespace.empty()) {
    return InvalidArgument(
        "--emf-namespace applies to --emf-schema prometheus only: Container Insights reads the "
        "ContainerInsights namespace");
  }
  render::ContainerInsightsOptions o;
  o.cluster_name = e.cluster_name;
  o.node_name = NodeName(options);
  o.instance_id = e.instance_id;
  o.instance_type = e.instance_type;
  o.log_group = e.log_group;
  o.log_stream = e.log_stream;
  o.high_resolution = e.high_resolution;
  o.pod_shares = options.kubernetes_process_metrics;
  o.histograms = e.histograms;
  return o;
}

Result<std::unique_ptr<sinks::SinkSet>> SinksOf(const config::Options::Emf& e) {
  sinks::SinkOptions so;
  so.queue_capacity = static_cast<size_t>(e.queue_size);
  so.file_max_bytes = e.file_max_bytes;
  so.file_keep = e.file_keep;
  return sinks::SinkSet::Create(e.outputs, so);
}

}  // namespace

Result<std::unique_ptr<EmfPipeline>> EmfPipeline::Create(const config::Options& options) {
  const config::Options::Emf& e = options.emf;
  if (e.schema == config::Options::Emf::Schema::kContainerInsights) {
    Result<render::ContainerInsightsOptions> o = ContainerInsightsOptionsOf(options);
    if (!o.ok()) return o.status();
    Result<std::unique_ptr<sinks::SinkSet>> set = SinksOf(e);
    if (!set.ok()) return set.status();
    log::Info("EMF output on", {{"outputs", std::to_string(e.outputs.size())},
                                {"schema", "container-insights"},
                                {"cluster", o->cluster_name},
                                {"histograms", o->histograms ? "on" : "off"}});
    return std::make_unique<EmfPipeline>(render::ContainerInsightsRenderer(std::move(*o)),
                                         std::move(*set));
  }
  render::EmfRules rules = render::DefaultEmfRules(!e.cluster_name.empty());
  if (!e.config_file.empty()) {
    std::vector<std::string> warnings;
    Result<std::string> text = config::ReadTextFile(e.config_file, "EMF rules file");
    if (!text.ok()) return text.status();
    Result<render::EmfRules> loaded = render::ParseEmfRules(*text, e.config_file, &warnings);
    if (!loaded.ok()) return loaded.status();
    for (const std::string& w : warnings) log::Warn("EMF rules", {{"warning", w}});
    rules = std::move(*loaded);
  }
  if (!e.metric_namespace.empty()) {
    if (Status st = render::ValidateEmfNamespace(e.metric_namespace); !st.ok()) {
      return InvalidArgument("--emf-namespace: " + st.message());
    }
    rules.metric_namespace = e.metric_namespace;
  }
  if (e.cluster_name.empty() && render::RulesReferenceDimension(rules, "ClusterName")) {
    log::Warn(
        "EMF rules use the dimension ClusterName but --emf-cluster-name is not set: "
        "those dimension sets never apply",
        {{"rules", rules.source}});
  }

  render::EmfOptions eo;
  eo.log_group_name = e.log_group;
  if (eo.log_group_name.empty() && !e.cluster_name.empty()) {
    eo.log_group_name = "/aws/containerinsights/" + e.cluster_name + "/prometheus";
  }
  eo.log_stream_name = e.log_stream;
  eo.counters_as_delta = e.counters_delta;
  eo.high_resolution = e.high_resolution;
  if (!e.cluster_name.empty()) eo.extra_labels.emplace_back("ClusterName", e.cluster_name);
  eo.extra_labels.emplace_back("NodeName", NodeName(options));
  eo.extra_labels.emplace_back("Service", e.service);
  eo.extra_labels.emplace_back("job", e.job);

  Result<std::unique_ptr<sinks::SinkSet>> set = SinksOf(e);
  if (!set.ok()) return set.status();

  log::Info("EMF output on", {{"outputs", std::to_string(e.outputs.size())},
                              {"rules", rules.source},
                              {"declarations", std::to_string(rules.declarations.size())},
                              {"namespace", rules.metric_namespace},
                              {"counters", e.counters_delta ? "delta" : "raw"}});
  return std::make_unique<EmfPipeline>(render::EmfRenderer(std::move(rules), std::move(eo)),
                                       std::move(*set));
}

void EmfPipeline::OnSeries(const render::SeriesModel& model, const model::Snapshot& snap) {
  documents_.clear();
  uint64_t oversize = 0;
  if (ci_) {
    if (!fields_checked_ && snap.plan != nullptr) {
      // Once: the fields the schema copies that the collectors list leaves out are metrics
      // Container Insights will not get; say which, rather than let a console page stay empty.
      fields_checked_ = true;
      std::string missing;
      for (std::string_view name : fields::ContainerInsightsFieldNames()) {
        bool listed = false;
        for (const config::CollectorEntry& row : snap.plan->rows()) {
          listed = listed || (row.field != nullptr && row.field->name == name);
        }
        if (!listed) (missing += missing.empty() ? "" : ",") += name;
      }
      if (!missing.empty()) {
        log::Warn(
            "the collectors list lacks fields Container Insights publishes; add them "
            "(etc/container-insights.csv has all)",
            {{"missing", missing}});
      }
    }
    ci_->Render(snap, snap.time, &documents_);
    oversize = ci_->oversize_dropped();
  } else {
    renderer_->Render(model, snap.time, &documents_);
    oversize = renderer_->oversize_dropped();
  }
  if (oversize > oversize_logged_) {
    if (oversize_logged_ == 0) {
      log::Warn("EMF metric dropped: its labels alone exceed the document size limit",
                {{"dropped", std::to_string(oversize)}});
    }
    oversize_logged_ = oversize;
  }
  sinks_->Publish(std::move(documents_));
  documents_ = {};
}

}  // namespace nvmlx::app
