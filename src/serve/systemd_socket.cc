#include "serve/systemd_socket.h"

#include <fcntl.h>
#include <sys/socket.h>

#include <cerrno>
#include <charconv>
#include <cstring>

namespace nvmlx::serve {
namespace {

std::optional<long long> Number(const std::string& s) {
  long long v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

Result<int> SystemdListenFdCount(const GetEnvFn& getenv, pid_t self) {
  std::optional<std::string> pid = getenv("LISTEN_PID");
  std::optional<std::string> fds = getenv("LISTEN_FDS");
  if (!pid || pid->empty() || !fds || fds->empty()) {
    return NotFound(
        "no systemd socket: LISTEN_PID and LISTEN_FDS are not set (is the service "
        "started by a .socket unit?)");
  }
  std::optional<long long> p = Number(*pid);
  std::optional<long long> n = Number(*fds);
  if (!p) return InvalidArgument("LISTEN_PID: \"" + *pid + "\" is not a process id");
  if (!n || *n < 0) return InvalidArgument("LISTEN_FDS: \"" + *fds + "\" is not a count");
  if (*p != self) {
    return NotFound("no systemd socket: LISTEN_PID=" + *pid + " is another process (we are " +
                    std::to_string(self) + ")");
  }
  if (*n == 0) return NotFound("no systemd socket: LISTEN_FDS=0");
  return static_cast<int>(*n);
}

Status CheckListeningTcpSocket(int fd) {
  const std::string what = "systemd socket fd " + std::to_string(fd);
  int listening = 0;
  socklen_t len = sizeof(listening);
  if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0) {
    return Unavailable(what + " is not a socket: " + std::strerror(errno));
  }
  if (!listening) return Unavailable(what + " is not listening");
  int type = 0;
  len = sizeof(type);
  sockaddr_storage addr = {};
  socklen_t alen = sizeof(addr);
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &alen) != 0 ||
      (addr.ss_family != AF_INET && addr.ss_family != AF_INET6)) {
    return Unavailable(what +
                       " is not a TCP socket (ListenStream= must be a port or "
                       "address:port)");
  }
  return Status::Ok();
}

Result<int> SystemdListenFd(const GetEnvFn& getenv, pid_t self) {
  Result<int> n = SystemdListenFdCount(getenv, self);
  if (!n.ok()) return n.status();
  NVMLX_RETURN_IF_ERROR(CheckListeningTcpSocket(kSystemdListenFdsStart));
  // Not inherited by anything we might run.
  fcntl(kSystemdListenFdsStart, F_SETFD, FD_CLOEXEC);
  return kSystemdListenFdsStart;
}

}  // namespace nvmlx::serve
