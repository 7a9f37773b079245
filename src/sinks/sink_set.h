// SinkSet: every --emf-output of the daemon, fed the same documents, and the Prometheus text of
// their counters for /metrics:
//   nvml_exporter_emf_sent_total{sink="<spec>"}     documents handed to the receiver
//   nvml_exporter_emf_dropped_total{sink="<spec>"}  documents given up (queue full, unsendable,
//                                                   still queued at shutdown)
//   nvml_exporter_emf_queue_length{sink="<spec>"}   documents waiting
//
// Thread-safety: Publish() and AppendMetrics() may be called from any thread; the set itself is
// built once and stopped once by its owner.
#ifndef NVML_EXPORTER_SINKS_SINK_SET_H_
#define NVML_EXPORTER_SINKS_SINK_SET_H_

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
  // Appends the three counter families above (Prometheus text 0.0.4).
  void AppendMetrics(std::string* out) const;
  void Stop();

  const std::vector<std::unique_ptr<Sink>>& sinks() const { return sinks_; }

 private:
  std::vector<std::unique_ptr<Sink>> sinks_;
};

}  // namespace nvmlx::sinks

#endif  // NVML_EXPORTER_SINKS_SINK_SET_H_
