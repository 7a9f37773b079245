// systemd socket activation (dcgm-exporter's --web-systemd-socket): the listening socket systemd
// passes to the service, as sd_listen_fds(3) describes it. LISTEN_PID names the process the
// sockets are for (ours, or they are someone else's), LISTEN_FDS how many there are, starting at
// fd 3. We serve on the first one; it must be a listening TCP socket (IPv4 or IPv6), since the
// HTTP server speaks TCP.
//
// Thread-safety: pure functions (SystemdListenFd reads the descriptor's state).
#ifndef NVML_EXPORTER_SERVE_SYSTEMD_SOCKET_H_
#define NVML_EXPORTER_SERVE_SYSTEMD_SOCKET_H_

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "util/status.h"

namespace nvmlx::serve {

inline constexpr int kSystemdListenFdsStart = 3;  // SD_LISTEN_FDS_START

using GetEnvFn = std::function<std::optional<std::string>(std::string_view)>;

// How many sockets systemd passed to process `self`. NOT_FOUND (naming the variable) when there
// are none for us: LISTEN_PID or LISTEN_FDS unset, another PID, or 0 sockets; INVALID_ARGUMENT
// when a variable is not a number.
Result<int> SystemdListenFdCount(const GetEnvFn& getenv, pid_t self);

// The descriptor to serve on: kSystemdListenFdsStart after the checks above and a check that it
// is a listening TCP socket (UNAVAILABLE otherwise). Marks it close-on-exec.
Result<int> SystemdListenFd(const GetEnvFn& getenv, pid_t self);

// The check alone: `fd` is a listening TCP (v4 or v6) socket.
Status CheckListeningTcpSocket(int fd);

}  // namespace nvmlx::serve

#endif  // NVML_EXPORTER_SERVE_SYSTEMD_SOCKET_H_
