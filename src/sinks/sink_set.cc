#include "sinks/sink_set.h"

#include <string_view>

#include "render/text_format.h"

namespace nvmlx::sinks {

Result<std::unique_ptr<SinkSet>> SinkSet::Create(const std::vector<std::string>& specs,
                                                 const SinkOptions& options) {
  std::vector<SinkSpec> parsed;
  for (const std::string& s : specs) {
    Result<SinkSpec> spec = ParseSinkSpec(s);
    if (!spec.ok()) return spec.status();
    for (const SinkSpec& p : parsed) {
      if (p.text == spec->text) {
        return InvalidArgument("--emf-output \"" + s + "\" is given twice");
      }
    }
    parsed.push_back(std::move(*spec));
  }
  std::vector<std::unique_ptr<Sink>> sinks;
  for (SinkSpec& spec : parsed) {
    std::unique_ptr<Transport> t = MakeTransport(spec, options);
    sinks.push_back(std::make_unique<Sink>(std::move(spec), options, std::move(t)));
  }
  return std::make_unique<SinkSet>(std::move(sinks));
}

void SinkSet::Publish(std::vector<std::string> documents) {
  if (documents.empty()) return;
  std::vector<std::shared_ptr<const std::string>> shared;
  shared.reserve(documents.size());
  for (std::string& d : documents)
    shared.push_back(std::make_shared<const std::string>(std::move(d)));
  for (const auto& sink : sinks_) sink->Offer(shared);
}

void SinkSet::AppendMetrics(std::string* out) const {
  auto family = [&](std::string_view name, std::string_view help, std::string_view type,
                    auto value) {
    out->append("# HELP ").append(name).append(" ").append(help).append("\n# TYPE ");
    out->append(name).append(" ").append(type).append("\n");
    for (const auto& sink : sinks_) {
      out->append(name).append("{sink=\"");
      render::AppendEscapedLabelValue(sink->name(), out);
      out->append("\"} ").append(std::to_string(value(*sink))).append("\n");
    }
  };
  family("nvml_exporter_emf_sent_total", "EMF documents sent, per --emf-output.", "counter",
         [](const Sink& s) { return s.sent(); });
  family("nvml_exporter_emf_dropped_total",
         "EMF documents dropped (queue full, unsendable, or left at shutdown), per --emf-output.",
         "counter", [](const Sink& s) { return s.dropped(); });
  family("nvml_exporter_emf_queue_length", "EMF documents waiting to be sent, per --emf-output.",
         "gauge", [](const Sink& s) { return s.queued(); });
}

void SinkSet::Stop() {
  for (const auto& sink : sinks_) sink->RequestStop();  // all drain at once
  for (const auto& sink : sinks_) sink->Stop();
}

}  // namespace nvmlx::sinks
