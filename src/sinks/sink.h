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
// Over TCP a document counts as sent once the receiver acknowledged it; what a connection dropped
// for a stuck receiver held unacknowledged counts as dropped (Transport::CountsAcknowledged).
//
// Thread-safety: Offer(), sent(), dropped(), queued() and stalled() may be called from any thread;
// RequestStop()/Stop() from the owner.
#ifndef NVML_EXPORTER_SINKS_SINK_H_
#define NVML_EXPORTER_SINKS_SINK_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
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
  // Sends one document within `budget` (connect included). kUnavailable: retry later (after
  // Reset and a backoff); any other error: this document can never be sent (dropped).
  virtual Status Send(std::string_view document, std::chrono::milliseconds budget) = 0;
  // Drops the connection (the next Send reconnects).
  virtual void Reset() {}
  // TCP: a document counts as sent once the receiver acknowledged all of its bytes, not when
  // the kernel took it into our send buffer (a receiver that accepts and never reads would
  // otherwise count every document as sent). The other transports count a successful Send.
  virtual bool CountsAcknowledged() const { return false; }
  // Documents acknowledged since the last call; those written but still unacknowledged.
  virtual uint64_t TakeAcknowledged() { return 0; }
  virtual uint64_t Unacknowledged() const { return 0; }
  // Forgets the unacknowledged documents (the connection is being dropped): how many.
  virtual uint64_t TakeUnacknowledged() { return 0; }
  // The last Send failed because the receiver took nothing in time (connected, not reading).
  virtual bool LastSendTimedOut() const { return false; }
  // From any thread (Sink::RequestStop): a Send or connect waiting now, or later, ends by
  // `deadline` at the latest (steady clock), so that a stop is never held by a stuck receiver.
  virtual void CapDeadline(std::chrono::steady_clock::time_point /*deadline*/) {}
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
  // Sends what is queued for up to drain_timeout (or `max_drain`, if shorter: the daemon's stop
  // budget), then stops the thread; the rest is dropped. A send in progress is bounded by the
  // same deadline.
  void Stop(std::chrono::milliseconds max_drain = std::chrono::milliseconds::max())
      NVMLX_EXCLUDES(mu_);
  // Starts that drain without waiting (Stop() then joins): several sinks drain in parallel.
  void RequestStop(std::chrono::milliseconds max_drain = std::chrono::milliseconds::max())
      NVMLX_EXCLUDES(mu_);

  const std::string& name() const { return spec_.text; }
  uint64_t sent() const { return sent_.load(std::memory_order_relaxed); }
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  size_t queued() const NVMLX_EXCLUDES(mu_);
  // 1 while the receiver takes nothing: the last send timed out waiting for it, or documents
  // written to it stay unacknowledged past io_timeout.
  bool stalled() const { return stalled_.load(std::memory_order_relaxed); }

  // A failure streak ends (the "recovered" line) only after this long without a failure, so a
  // receiver that takes a connection's first documents and then stops reading is one streak.
  static constexpr std::chrono::seconds kRecoveryQuiet{60};

 private:
  void Loop() NVMLX_EXCLUDES(mu_);
  // Counts what the receiver acknowledged since the last look; updates stalled_.
  void CountAcknowledged(util::Clock::TimePoint now);
  // The time one send may take now: io_timeout, or what is left of the drain.
  std::chrono::milliseconds SendBudget() NVMLX_EXCLUDES(mu_);

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
  std::atomic<bool> stalled_{false};
  // The sink thread's only.
  std::optional<util::Clock::TimePoint> unacknowledged_since_;
  std::thread thread_;
};

}  // namespace nvmlx::sinks

#endif  // NVML_EXPORTER_SINKS_SINK_H_
