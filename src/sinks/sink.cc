#include "sinks/sink.h"

#include <pthread.h>

#include <algorithm>
#include <charconv>
#include <csignal>
#include <utility>

#include "util/log.h"
#include "util/thread_name.h"

namespace nvmlx::sinks {
namespace {

Status BadSpec(std::string_view text, const std::string& why) {
  return InvalidArgument("--emf-output \"" + std::string(text) + "\": " + why +
                         " (expected stdout, file:PATH, tcp://HOST:PORT or udp://HOST:PORT)");
}

}  // namespace

Result<SinkSpec> ParseSinkSpec(std::string_view text) {
  SinkSpec spec;
  spec.text = std::string(text);
  if (text == "stdout") {
    spec.kind = SinkSpec::Kind::kStdout;
    return spec;
  }
  if (text.rfind("file:", 0) == 0) {
    spec.kind = SinkSpec::Kind::kFile;
    spec.path = std::string(text.substr(5));
    if (spec.path.empty()) return BadSpec(text, "no file path after file:");
    return spec;
  }
  std::string_view rest;
  if (text.rfind("tcp://", 0) == 0) {
    spec.kind = SinkSpec::Kind::kTcp;
    rest = text.substr(6);
  } else if (text.rfind("udp://", 0) == 0) {
    spec.kind = SinkSpec::Kind::kUdp;
    rest = text.substr(6);
  } else {
    return BadSpec(text, "unknown kind of output");
  }
  std::string_view host, port;
  if (!rest.empty() && rest.front() == '[') {
    const size_t close = rest.find(']');
    if (close == std::string_view::npos || close + 1 >= rest.size() || rest[close + 1] != ':') {
      return BadSpec(text, "an IPv6 host must be written [ADDR]:PORT");
    }
    host = rest.substr(1, close - 1);
    port = rest.substr(close + 2);
  } else {
    const size_t colon = rest.rfind(':');
    if (colon == std::string_view::npos) return BadSpec(text, "no :PORT");
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  if (host.empty()) return BadSpec(text, "no host");
  unsigned value = 0;
  auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || ptr != port.data() + port.size() || value == 0 ||
      value > 65535) {
    return BadSpec(text, "the port must be a number from 1 to 65535");
  }
  spec.host = std::string(host);
  spec.port = static_cast<uint16_t>(value);
  return spec;
}

Sink::Sink(SinkSpec spec, SinkOptions options, std::unique_ptr<Transport> transport)
    : spec_(std::move(spec)),
      options_(options),
      clock_(options_.clock != nullptr ? options_.clock : util::Clock::Real()),
      transport_(std::move(transport)) {
  thread_ = std::thread([this] { Loop(); });
}

Sink::~Sink() { Stop(); }

void Sink::Offer(const std::vector<std::shared_ptr<const std::string>>& documents) {
  uint64_t dropped = 0;
  {
    util::MutexLock lock(&mu_);
    for (const auto& d : documents) {
      if (stopping_ || queue_.size() >= options_.queue_capacity) {
        ++dropped;
      } else {
        queue_.push_back(d);
      }
    }
  }
  if (dropped > 0) dropped_.fetch_add(dropped, std::memory_order_relaxed);
  cv_.Signal();
}

size_t Sink::queued() const {
  util::MutexLock lock(&mu_);
  return queue_.size();
}

void Sink::RequestStop(std::chrono::milliseconds max_drain) {
  const std::chrono::milliseconds drain = std::min(options_.drain_timeout, max_drain);
  {
    util::MutexLock lock(&mu_);
    if (!stopping_) {
      stopping_ = true;
      drain_deadline_ = util::AddSaturating(clock_->Now(), drain);
    }
  }
  // A send already waiting on the receiver ends with the drain, not after its own io_timeout.
  transport_->CapDeadline(std::chrono::steady_clock::now() + drain);
  cv_.SignalAll();
}

void Sink::Stop(std::chrono::milliseconds max_drain) {
  RequestStop(max_drain);
  if (thread_.joinable()) thread_.join();
}

std::chrono::milliseconds Sink::SendBudget() {
  util::MutexLock lock(&mu_);
  if (!stopping_) return options_.io_timeout;
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(drain_deadline_ - clock_->Now());
  return std::clamp(left, std::chrono::milliseconds(1), options_.io_timeout);
}

void Sink::CountAcknowledged(util::Clock::TimePoint now) {
  if (!transport_->CountsAcknowledged()) return;
  if (const uint64_t n = transport_->TakeAcknowledged(); n > 0) {
    sent_.fetch_add(n, std::memory_order_relaxed);
  }
  if (transport_->Unacknowledged() == 0) {
    unacknowledged_since_.reset();
    stalled_.store(false, std::memory_order_relaxed);
    return;
  }
  if (!unacknowledged_since_) {
    unacknowledged_since_ = now;
  } else if (now - *unacknowledged_since_ >= options_.io_timeout) {
    stalled_.store(true, std::memory_order_relaxed);
  }
}

void Sink::Loop() {
  util::NameThisThread("emf " + name());
  // A reader that closed stdout (or a FIFO) must fail this sink's writes with EPIPE, not kill
  // the daemon: SIGPIPE is blocked on this thread only (a write's SIGPIPE goes to the thread
  // that wrote; sockets use MSG_NOSIGNAL anyway).
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
  std::chrono::milliseconds backoff = options_.backoff_initial;
  bool failing = false;  // log the first failure and the recovery, not every retry
  util::Clock::TimePoint failed_at{};
  // While documents written over TCP await the receiver's acknowledgement, look every 100 ms.
  const auto awaiting = [this] {
    return transport_->CountsAcknowledged() && transport_->Unacknowledged() > 0;
  };
  while (true) {
    std::shared_ptr<const std::string> doc;
    {
      util::MutexLock lock(&mu_);
      while (!stopping_ && queue_.empty()) {
        if (!awaiting()) {
          cv_.Wait(&mu_);
          continue;
        }
        (void)clock_->WaitUntil(&cv_, &mu_,
                                util::AddSaturating(clock_->Now(), std::chrono::milliseconds(100)));
        CountAcknowledged(clock_->Now());
      }
      if (queue_.empty() || (stopping_ && clock_->Now() >= drain_deadline_)) {
        dropped_.fetch_add(queue_.size(), std::memory_order_relaxed);
        queue_.clear();
        if (stopping_) {
          // What was written gets the rest of the drain to be acknowledged; then it is lost.
          while (awaiting() && clock_->Now() < drain_deadline_) {
            (void)clock_->WaitUntil(
                &cv_, &mu_,
                std::min(drain_deadline_,
                         util::AddSaturating(clock_->Now(), std::chrono::milliseconds(20))));
            CountAcknowledged(clock_->Now());
          }
          dropped_.fetch_add(transport_->TakeUnacknowledged(), std::memory_order_relaxed);
          break;
        }
        continue;
      }
      doc = queue_.front();
    }
    Status st = transport_->Send(*doc, SendBudget());
    const util::Clock::TimePoint now = clock_->Now();
    if (st.ok() || st.code() != StatusCode::kUnavailable) {
      {
        util::MutexLock lock(&mu_);
        if (!queue_.empty() && queue_.front() == doc) queue_.pop_front();
      }
      if (st.ok()) {
        if (!transport_->CountsAcknowledged()) sent_.fetch_add(1, std::memory_order_relaxed);
        CountAcknowledged(now);
        if (failing && !stalled() && now - failed_at >= kRecoveryQuiet) {
          log::Info("EMF output recovered", {{"sink", spec_.text}});
          failing = false;
        }
        backoff = options_.backoff_initial;
      } else {
        dropped_.fetch_add(1, std::memory_order_relaxed);
        log::Warn("EMF document dropped", {{"sink", spec_.text}, {"err", st.message()}});
      }
      continue;
    }
    // The connection goes: what it holds unacknowledged never reached the receiver.
    CountAcknowledged(now);
    if (transport_->LastSendTimedOut()) stalled_.store(true, std::memory_order_relaxed);
    dropped_.fetch_add(transport_->TakeUnacknowledged(), std::memory_order_relaxed);
    transport_->Reset();
    failed_at = now;
    if (!failing) {
      log::Warn(
          "EMF output failing; retrying with backoff (documents queue, then drop; logged once "
          "until it has worked for a minute)",
          {{"sink", spec_.text}, {"err", st.message()}});
      failing = true;
    }
    util::MutexLock lock(&mu_);
    const util::Clock::TimePoint until = util::AddSaturating(clock_->Now(), backoff);
    // Wakes early on Stop(); while draining, waits at most until the drain deadline.
    while (!stopping_ && !clock_->WaitUntil(&cv_, &mu_, until)) {
    }
    if (stopping_) {
      const util::Clock::TimePoint end = std::min(until, drain_deadline_);
      while (!clock_->WaitUntil(&cv_, &mu_, end)) {
      }
    }
    backoff = std::min(backoff * 2, options_.backoff_max);
  }
}

}  // namespace nvmlx::sinks
