#include "app/own_families.h"

#include <cstdint>
#include <string_view>

#include "render/series.h"

namespace nvmlx::app {
namespace {

using render::LabelView;

// One family with one point per (label value, value) under `label`, or one unlabelled point.
struct Point {
  std::string_view label_value;
  int64_t value;
};
void Add(render::SeriesModel* model, const render::OwnFamilyDef& def, std::string_view label,
         std::initializer_list<Point> points) {
  render::SeriesFamily& f = render::AddOwnFamily(model, def);
  for (const Point& p : points) {
    const LabelView l[] = {{label, p.label_value}};
    render::AddOwnPoint(model, &f, label.empty() ? std::span<const LabelView>() : l, p.value);
  }
}

int64_t I(uint64_t v) { return static_cast<int64_t>(v); }

}  // namespace

void AddServerFamilies(const serve::ServerStats& s, bool web_config, render::SeriesModel* model) {
  Add(model, render::OwnFamily("nvml_exporter_http_connections_total"), "outcome",
      {{"accepted", I(s.connections_accepted)},
       {"refused", I(s.connections_refused)},
       {"refused_per_source", I(s.connections_refused_per_peer)},
       {"evicted", I(s.connections_evicted)}});
  Add(model, render::OwnFamily("nvml_exporter_http_open_connections"), "",
      {{"", I(s.connections_open)}});
  Add(model, render::OwnFamily("nvml_exporter_http_accept_errors_total"), "",
      {{"", I(s.accept_errors)}});
  Add(model, render::OwnFamily("nvml_exporter_http_scrapes_refused_total"), "",
      {{"", I(s.scrapes_refused)}});
  if (!web_config) return;
  const int64_t limited = I(s.auth_rate_limited);
  Add(model, render::OwnFamily("nvml_exporter_http_auth_failures_total"), "reason",
      {{"wrong", I(s.auth_failures) - limited}, {"rate_limited", limited}});
  Add(model, render::OwnFamily("nvml_exporter_http_bcrypt_checks_total"), "",
      {{"", I(s.bcrypt_runs)}});
  render::SeriesFamily& cpu = render::AddOwnFamily(
      model, render::OwnFamily("nvml_exporter_http_bcrypt_failed_cpu_seconds_total"));
  cpu.points.push_back(render::SeriesPoint::Double(
      model->AddLabelSet({}), static_cast<double>(s.bcrypt_failure_cpu_ns.load()) / 1e9,
      render::kToPrometheus));
  Add(model, render::OwnFamily("nvml_exporter_http_tls_handshake_errors_total"), "",
      {{"", I(s.tls_handshake_errors)}});
  Add(model, render::OwnFamily("nvml_exporter_web_config_reloads_total"), "result",
      {{"ok", I(s.config_reloads_ok)}, {"failed", I(s.config_reloads_failed)}});
  Add(model, render::OwnFamily("nvml_exporter_web_config_last_reload_success"), "",
      {{"", I(s.config_last_reload_ok)}});
}

void AddSinkFamilies(const sinks::SinkSet& sinks, render::SeriesModel* model) {
  struct Counter {
    const render::OwnFamilyDef& def;  // in the registry (render/own_metrics.h)
    uint64_t (*value)(const sinks::Sink&);
  };
  static constexpr Counter kCounters[] = {
      {render::OwnFamily("nvml_exporter_emf_sent_total"),
       [](const sinks::Sink& s) -> uint64_t { return s.sent(); }},
      {render::OwnFamily("nvml_exporter_emf_dropped_total"),
       [](const sinks::Sink& s) -> uint64_t { return s.dropped(); }},
      {render::OwnFamily("nvml_exporter_emf_queue_length"),
       [](const sinks::Sink& s) -> uint64_t { return s.queued(); }},
      {render::OwnFamily("nvml_exporter_emf_receiver_stalled"),
       [](const sinks::Sink& s) -> uint64_t { return s.stalled() ? 1 : 0; }},
  };
  for (const Counter& c : kCounters) {
    render::SeriesFamily& f = render::AddOwnFamily(model, c.def);
    for (const auto& sink : sinks.sinks()) {
      const LabelView l[] = {{"sink", sink->name()}};
      render::AddOwnPoint(model, &f, l, I(c.value(*sink)));
    }
  }
}

void AddNodeFaultFamilies(const attribute::NodeFaultReporter::Stats& s,
                          render::SeriesModel* model) {
  render::SeriesFamily& f =
      render::AddOwnFamily(model, render::OwnFamily("nvml_exporter_node_fault_condition"));
  for (const auto& [type, problem] : s.problems) {
    const LabelView l[] = {{"condition", type}};
    render::AddOwnPoint(model, &f, l, problem ? 1 : 0);
  }
  Add(model, render::OwnFamily("nvml_exporter_node_fault_condition_writes_total"), "result",
      {{"ok", I(s.condition_writes)}, {"failed", I(s.condition_failures)}});
  Add(model, render::OwnFamily("nvml_exporter_node_fault_events_total"), "result",
      {{"created", I(s.events_created)},
       {"updated", I(s.events_updated)},
       {"failed", I(s.events_failed)},
       {"rate_limited", I(s.events_rate_limited)}});
}

}  // namespace nvmlx::app
