#include "app/emf_pipeline.h"

#include <limits.h>
#include <unistd.h>

#include <utility>

#include "config/text_file.h"
#include "util/log.h"

namespace nvmlx::app {
namespace {

std::string NodeName(const config::Options& o) {
  if (!o.node_name.empty()) return o.node_name;
  char buf[HOST_NAME_MAX + 1] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  return buf;
}

}  // namespace

Result<std::unique_ptr<EmfPipeline>> EmfPipeline::Create(const config::Options& options) {
  const config::Options::Emf& e = options.emf;
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

  sinks::SinkOptions so;
  so.queue_capacity = static_cast<size_t>(e.queue_size);
  so.file_max_bytes = e.file_max_bytes;
  so.file_keep = e.file_keep;
  Result<std::unique_ptr<sinks::SinkSet>> set = sinks::SinkSet::Create(e.outputs, so);
  if (!set.ok()) return set.status();

  log::Info("EMF output on", {{"outputs", std::to_string(e.outputs.size())},
                              {"rules", rules.source},
                              {"declarations", std::to_string(rules.declarations.size())},
                              {"namespace", rules.metric_namespace},
                              {"counters", e.counters_delta ? "delta" : "raw"}});
  return std::make_unique<EmfPipeline>(render::EmfRenderer(std::move(rules), std::move(eo)),
                                       std::move(*set));
}

void EmfPipeline::OnSeries(const render::SeriesModel& model,
                           std::chrono::system_clock::time_point time) {
  documents_.clear();
  renderer_.Render(model, time, &documents_);
  if (renderer_.oversize_dropped() > oversize_logged_) {
    if (oversize_logged_ == 0) {
      log::Warn("EMF metric dropped: its labels alone exceed the document size limit",
                {{"dropped", std::to_string(renderer_.oversize_dropped())}});
    }
    oversize_logged_ = renderer_.oversize_dropped();
  }
  sinks_->Publish(std::move(documents_));
  documents_ = {};
}

}  // namespace nvmlx::app
