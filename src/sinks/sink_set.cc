#include "sinks/sink_set.h"

#include <string_view>

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

void SinkSet::Stop(std::chrono::milliseconds max_drain) {
  for (const auto& sink : sinks_) sink->RequestStop(max_drain);  // all drain at once
  for (const auto& sink : sinks_) sink->Stop(max_drain);
}

}  // namespace nvmlx::sinks
