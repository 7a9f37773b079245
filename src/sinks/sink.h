// EMF sinks: where rendered EMF documents go (--emf-output, repeatable):
//   stdout                 one document per line on standard output
//   file:PATH              one per line, appended; rotated by size (PATH.1 ... PATH.<keep>)
//   tcp://HOST:PORT        newline-delimited, as the CloudWatch agent's emf listener reads TCP
//   udp://HOST:PORT        one document per datagram (the agent's udp listener)
// (docs/emf.md §6). Each sink has a bounded queue and its own thread, so a slow or
// dead receiver never blocks collection or scrapes: Offer() never waits; when the queue is full
// the new document is dropped and counted. A failed send is retried after a reconnect with
// exponential backoff (the document stays at the head of the queue); documents that can never
// be sent (a datagram over 65507 bytes) are dropped and counted.
//
// The backoff and the drain deadline are timed on SinkOptions::clock (a util::Clock).
//
// Thread-safety: Offer(), sent(), dropped() and queued() may be called from any thread;
// RequestStop()/Stop() from the owner.
#ifndef NVML_EXPORTER_SINKS_SINK_H_
#define NVML_EXPORTER_SINKS_SINK_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "util/clock.h"
#include "util/mutex.h"
#include "util/status.h"
#include "util/thread_annotations.h"

namespace nvmlx::sinks {

struct SinkSpec {
  enum class Kind { kStdout, kFile, kTcp, kUdp };
  Kind kind = Kind::kStdout;
  std::string text;  // as written: the `sink` label of the self-metrics
  std::string path;  // kFile
  std::string host;  // kTcp, kUdp
  uint16_t port = 0;
};

// "stdout", "file:PATH", "tcp://HOST:PORT", "udp://HOST:PORT" (HOST may be [v6]). Errors name
// the spec and what was expected.
Result<SinkSpec> ParseSinkSpec(std::string_view text);

struct SinkOptions {
  size_t queue_capacity = 10000;        // documents
  uint64_t file_max_bytes = 100 << 20;  // rotate when the next line would pass this
  int file_keep = 5;                    // rotated files kept (PATH.1 newest)
  std::chrono::milliseconds backoff_initial{100};
  std::chrono::milliseconds backoff_max{10000};
  std::chrono::milliseconds io_timeout{2000};  // connect and send, per attempt
  // On Stop(): how long to keep sending what is queued.
  std::chrono::milliseconds drain_timeout{2000};
  util::Clock* clock = nullptr;  // times backoff and drain; null: the real clock
};

// How documents leave: one implementation per kind (transports.cc). Called from the sink's
// thread only.
class Transport {
 public:
  virtual ~Transport() = default;
  // Sends one document. kUnavailable: retry later (after Reset and a backoff); any other error:
  // this document can never be sent (dropped).
  virtual Status Send(std::string_view document) = 0;
  // Drops the connection (the next Send reconnects).
  virtual void Reset() {}
};

std::unique_ptr<Transport> MakeTransport(const SinkSpec& spec, const SinkOptions& options);

class Sink {
 public:
  Sink(SinkSpec spec, SinkOptions options, std::unique_ptr<Transport> transport);
  ~Sink();  // stops
  Sink(const Sink&) = delete;
  Sink& operator=(const Sink&) = delete;

  // Queues the documents; never blocks on I/O. Full queue: the rest are dropped and counted.
  void Offer(const std::vector<std::shared_ptr<const std::string>>& documents) NVMLX_EXCLUDES(mu_);
  // Sends what is queued for up to drain_timeout, then stops the thread; the rest is dropped.
  void Stop() NVMLX_EXCLUDES(mu_);
  // Starts that drain without waiting (Stop() then joins): several sinks drain in parallel.
  void RequestStop() NVMLX_EXCLUDES(mu_);

  const std::string& name() const { return spec_.text; }
  uint64_t sent() const { return sent_.load(std::memory_order_relaxed); }
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  size_t queued() const NVMLX_EXCLUDES(mu_);

 private:
  void Loop() NVMLX_EXCLUDES(mu_);

  const SinkSpec spec_;
  const SinkOptions options_;
  util::Clock* const clock_;
  std::unique_ptr<Transport> transport_;  // used by the thread only
  mutable util::Mutex mu_;
  util::CondVar cv_;
  std::deque<std::shared_ptr<const std::string>> queue_ NVMLX_GUARDED_BY(mu_);
  bool stopping_ NVMLX_GUARDED_BY(mu_) = false;
  util::Clock::TimePoint drain_deadline_ NVMLX_GUARDED_BY(mu_);
  std::atomic<uint64_t> sent_{0};
  std::atomic<uint64_t> dropped_{0};
  std::thread thread_;
};

}  // namespace nvmlx::sinks

#endif  // NVML_EXPORTER_SINKS_SINK_H_
