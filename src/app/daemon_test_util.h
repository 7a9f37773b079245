// Test helpers for the tests that run a whole Daemon on the simulated GPUs (daemon_test,
// daemon_reload_race_test): flags parsed as the daemon parses them, the simulated NVML as its
// environment, and a plain HTTP GET against its port. Test code only.
//
// Thread-safety: pure functions (HttpGet opens its own socket).
#ifndef NVML_EXPORTER_APP_DAEMON_TEST_UTIL_H_
#define NVML_EXPORTER_APP_DAEMON_TEST_UTIL_H_

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "app/daemon.h"
#include "config/options.h"

namespace nvmlx::app::testing {

// Parsed as the daemon parses them, with no environment variable set.
inline config::Options Flags(std::vector<std::string> args) {
  args.insert(args.begin(), "nvml-exporter");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  Result<config::Options> o = config::ParseOptions(
      static_cast<int>(argv.size()), argv.data(),
      [](std::string_view) -> std::optional<std::string> { return std::nullopt; });
  EXPECT_TRUE(o.ok()) << o.status().message();
  return o.ok() ? *o : config::Options();
}

inline Daemon::Environment SimulatedGpus() {
  return {NVMLX_SIMGPU_LIBRARY, "",
          [](std::string_view) -> std::optional<std::string> { return std::nullopt; }};
}

// GET `path` from 127.0.0.1:`port` over a fresh connection; the whole response, or "" when the
// connection fails.
inline std::string HttpGet(uint16_t port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string response;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    const std::string request =
        "GET " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    if (send(fd, request.data(), request.size(), 0) == static_cast<ssize_t>(request.size())) {
      char buf[65536];
      for (ssize_t n; (n = recv(fd, buf, sizeof(buf), 0)) > 0;) response.append(buf, n);
    }
  }
  close(fd);
  return response;
}

}  // namespace nvmlx::app::testing

#endif  // NVML_EXPORTER_APP_DAEMON_TEST_UTIL_H_
