// The four transports of sink.h. Each is used by one sink thread only. Sockets are plain POSIX
// (blocking I/O bounded by poll() timeouts on the sink's own thread), so nothing here can stall
// the collector.
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <limits>
#include <string>

#include "sinks/sink.h"

namespace nvmlx::sinks {
namespace {

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

// Writes all of `data` to a blocking fd (stdout, files).
Status WriteAll(int fd, std::string_view data, const std::string& what) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Unavailable(Errno(what));
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

class StdoutTransport : public Transport {
 public:
  Status Send(std::string_view doc, std::chrono::milliseconds /*budget*/) override {
    line_.assign(doc);
    line_.push_back('\n');
    return WriteAll(STDOUT_FILENO, line_, "write stdout");
  }

 private:
  std::string line_;
};

// Appends lines; before a line would take the file past max_bytes, renames PATH -> PATH.1 (and
// PATH.k -> PATH.k+1 up to keep, the oldest removed) and starts a new PATH.
class FileTransport : public Transport {
 public:
  FileTransport(std::string path, uint64_t max_bytes, int keep)
      : path_(std::move(path)), max_bytes_(max_bytes), keep_(keep) {}
  ~FileTransport() override { Reset(); }

  Status Send(std::string_view doc, std::chrono::milliseconds /*budget*/) override {
    if (fd_ < 0) NVMLX_RETURN_IF_ERROR(Open());
    line_.assign(doc);
    line_.push_back('\n');
    if (size_ > 0 && size_ + line_.size() > max_bytes_) {
      Reset();
      Rotate();
      NVMLX_RETURN_IF_ERROR(Open());
    }
    NVMLX_RETURN_IF_ERROR(WriteAll(fd_, line_, "write " + path_));
    size_ += line_.size();
    return Status::Ok();
  }

  void Reset() override {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  Status Open() {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) return Unavailable(Errno("open " + path_));
    struct stat st {};
    size_ = ::fstat(fd_, &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
    return Status::Ok();
  }

  void Rotate() {
    if (keep_ <= 0) {
      ::unlink(path_.c_str());
      return;
    }
    ::unlink((path_ + "." + std::to_string(keep_)).c_str());
    for (int i = keep_ - 1; i >= 1; --i) {
      ::rename((path_ + "." + std::to_string(i)).c_str(),
               (path_ + "." + std::to_string(i + 1)).c_str());
    }
    ::rename(path_.c_str(), (path_ + ".1").c_str());
  }

  const std::string path_;
  const uint64_t max_bytes_;
  const int keep_;
  int fd_ = -1;
  uint64_t size_ = 0;
  std::string line_;
};

// Resolves host:port (numeric or by name) for `socktype`; the first address wins.
Status Resolve(const SinkSpec& spec, int socktype, sockaddr_storage* addr, socklen_t* len) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = socktype;
  addrinfo* res = nullptr;
  const std::string port = std::to_string(spec.port);
  const int rc = ::getaddrinfo(spec.host.c_str(), port.c_str(), &hints, &res);
  if (rc != 0 || res == nullptr) {
    return Unavailable("resolve " + spec.host + ": " + ::gai_strerror(rc));
  }
  std::memcpy(addr, res->ai_addr, res->ai_addrlen);
  *len = res->ai_addrlen;
  ::freeaddrinfo(res);
  return Status::Ok();
}

int Remaining(std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

// Newline-delimited documents over one TCP connection, reconnected on failure. A document counts
// as delivered once the receiver acknowledged its last byte: the bytes written on this connection
// minus what the kernel still holds unacknowledged (SIOCOUTQ) say how far the receiver got.
class TcpTransport : public Transport {
 public:
  TcpTransport(SinkSpec spec, std::chrono::milliseconds timeout)
      : spec_(std::move(spec)), timeout_(timeout) {}
  ~TcpTransport() override { Reset(); }

  void CapDeadline(std::chrono::steady_clock::time_point deadline) override {
    cap_ns_.store(deadline.time_since_epoch().count(), std::memory_order_relaxed);
  }

  Status Send(std::string_view doc, std::chrono::milliseconds budget) override {
    timed_out_ = false;
    const auto deadline = std::chrono::steady_clock::now() + std::min(budget, timeout_);
    if (fd_ >= 0 && PeerClosed()) Reset();
    if (fd_ < 0) NVMLX_RETURN_IF_ERROR(Connect(deadline));
    line_.assign(doc);
    line_.push_back('\n');
    std::string_view rest = line_;
    while (!rest.empty()) {
      const ssize_t n = ::send(fd_, rest.data(), rest.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n >= 0) {
        rest.remove_prefix(static_cast<size_t>(n));
        written_ += static_cast<uint64_t>(n);
        continue;
      }
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return Unavailable(Errno("send"));
      if (!AwaitWritable(deadline)) {
        timed_out_ = true;
        return Unavailable("send: receiver too slow (timed out)");
      }
    }
    ends_.push_back(written_);
    return Status::Ok();
  }

  void Reset() override {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    written_ = 0;
    ends_.clear();
  }

  bool CountsAcknowledged() const override { return true; }
  uint64_t TakeAcknowledged() override {
    if (fd_ < 0 || ends_.empty()) return 0;
    int queued = 0;
    if (::ioctl(fd_, SIOCOUTQ, &queued) != 0) return 0;
    const uint64_t acknowledged = written_ - static_cast<uint64_t>(std::max(queued, 0));
    uint64_t n = 0;
    while (!ends_.empty() && ends_.front() <= acknowledged) {
      ends_.pop_front();
      ++n;
    }
    return n;
  }
  uint64_t Unacknowledged() const override { return ends_.size(); }
  bool LastSendTimedOut() const override { return timed_out_; }
  uint64_t TakeUnacknowledged() override {
    const uint64_t n = ends_.size();
    ends_.clear();
    return n;
  }

 private:
  // Polls for POLLOUT until `deadline` or the cap (CapDeadline), in slices of at most 50 ms so
  // that a cap set meanwhile is honoured. False: not writable in time.
  bool AwaitWritable(std::chrono::steady_clock::time_point deadline) {
    for (;;) {
      const auto cap = std::chrono::steady_clock::time_point(
          std::chrono::steady_clock::duration(cap_ns_.load(std::memory_order_relaxed)));
      const int left = std::min(Remaining(std::min(deadline, cap)), 50);
      if (left == 0) return false;
      pollfd p{fd_, POLLOUT, 0};
      const int r = ::poll(&p, 1, left);
      if (r > 0) return true;
      if (r < 0 && errno != EINTR) return false;
    }
  }

  // The agent never writes to us: a readable socket means it closed (or reset) the connection.
  // Checking first avoids writing a document into a connection the peer already gave up.
  bool PeerClosed() {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) return false;
    char buf[256];
    const ssize_t n = ::recv(fd_, buf, sizeof(buf), MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
  }

  Status Connect(std::chrono::steady_clock::time_point deadline) {
    sockaddr_storage addr{};
    socklen_t len = 0;
    NVMLX_RETURN_IF_ERROR(Resolve(spec_, SOCK_STREAM, &addr, &len));
    fd_ = ::socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd_ < 0) return Unavailable(Errno("socket"));
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0) {
      if (errno != EINPROGRESS) {
        Status st = Unavailable(Errno("connect " + spec_.host + ":" + std::to_string(spec_.port)));
        Reset();
        return st;
      }
      int err = 0;
      socklen_t err_len = sizeof(err);
      if (!AwaitWritable(deadline)) {
        Reset();
        return Unavailable("connect " + spec_.host + ":" + std::to_string(spec_.port) +
                           ": timed out");
      }
      if (::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &err_len) != 0 || err != 0) {
        Reset();
        return Unavailable("connect " + spec_.host + ":" + std::to_string(spec_.port) + ": " +
                           std::strerror(err));
      }
    }
    return Status::Ok();
  }

  const SinkSpec spec_;
  const std::chrono::milliseconds timeout_;
  int fd_ = -1;
  std::string line_;
  std::atomic<int64_t> cap_ns_{std::numeric_limits<int64_t>::max()};  // CapDeadline's
  bool timed_out_ = false;     // the last Send waited on the receiver past its deadline
  uint64_t written_ = 0;       // bytes written on this connection
  std::deque<uint64_t> ends_;  // per written, unacknowledged document: its end in written_
};

// One document per datagram, unconnected (an ICMP "port unreachable" must not fail later
// sends: the agent may simply not be up yet).
class UdpTransport : public Transport {
 public:
  explicit UdpTransport(SinkSpec spec) : spec_(std::move(spec)) {}
  ~UdpTransport() override { Reset(); }

  Status Send(std::string_view doc, std::chrono::milliseconds /*budget*/) override {
    if (doc.size() > 65507) {
      return InvalidArgument("document of " + std::to_string(doc.size()) +
                             " bytes does not fit one UDP datagram");
    }
    if (fd_ < 0) {
      NVMLX_RETURN_IF_ERROR(Resolve(spec_, SOCK_DGRAM, &addr_, &len_));
      fd_ = ::socket(addr_.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
      if (fd_ < 0) return Unavailable(Errno("socket"));
    }
    for (int attempt = 0;; ++attempt) {
      const ssize_t n = ::sendto(fd_, doc.data(), doc.size(), MSG_NOSIGNAL,
                                 reinterpret_cast<const sockaddr*>(&addr_), len_);
      if (n >= 0) return Status::Ok();
      // EINTR, or a stale ICMP report (ECONNREFUSED): the datagram was not sent; once more.
      if ((errno == EINTR || errno == ECONNREFUSED) && attempt == 0) continue;
      return Unavailable(Errno("sendto"));
    }
  }

  void Reset() override {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  const SinkSpec spec_;
  sockaddr_storage addr_{};
  socklen_t len_ = 0;
  int fd_ = -1;
};

}  // namespace

std::unique_ptr<Transport> MakeTransport(const SinkSpec& spec, const SinkOptions& options) {
  switch (spec.kind) {
    case SinkSpec::Kind::kStdout:
      return std::make_unique<StdoutTransport>();
    case SinkSpec::Kind::kFile:
      return std::make_unique<FileTransport>(spec.path, options.file_max_bytes, options.file_keep);
    case SinkSpec::Kind::kTcp:
      return std::make_unique<TcpTransport>(spec, options.io_timeout);
    case SinkSpec::Kind::kUdp:
      return std::make_unique<UdpTransport>(spec);
  }
  return nullptr;
}

}  // namespace nvmlx::sinks
