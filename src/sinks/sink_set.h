// SinkSet: every --emf-output of the daemon, fed the same documents. Each sink counts what it
// sent, dropped and holds queued (Sink's atomics); app/own_families.h turns them into the
// nvml_exporter_emf_* families of /metrics.
//
// Thread-safety: Publish() and sinks() may be called from any thread; the set itself is built
// once and stopped once by its owner.
#ifndef NVML_EXPORTER_SINKS_SINK_SET_H_
#define NVML_EXPORTER_SINKS_SINK_SET_H_

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "sinks/sink.h"
#include "util/status.h"

namespace nvmlx::sinks {

class SinkSet {
 public:
  // Parses every spec (errors name the bad one) and starts one Sink per spec.
  static Result<std::unique_ptr<SinkSet>> Create(const std::vector<std::string>& specs,
                                                 const SinkOptions& options);
  explicit SinkSet(std::vector<std::unique_ptr<Sink>> sinks) : sinks_(std::move(sinks)) {}

  // Hands the documents to every sink; never blocks on I/O.
  void Publish(std::vector<std::string> documents);
  // Drains every sink at once, for up to each one's drain_timeout or `max_drain`, if shorter.
  void Stop(std::chrono::milliseconds max_drain = std::chrono::milliseconds::max());

  const std::vector<std::unique_ptr<Sink>>& sinks() const { return sinks_; }

 private:
  std::vector<std::unique_ptr<Sink>> sinks_;
};

}  // namespace nvmlx::sinks

#endif  // NVML_EXPORTER_SINKS_SINK_SET_H_
