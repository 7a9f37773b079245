// SystemdListenFdCount over the environment systemd sets, and CheckListeningTcpSocket over real
// descriptors of each kind (the server adopting one: http_server_test).
#include "serve/systemd_socket.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <map>
#include <string>

namespace nvmlx::serve {
namespace {

using ::testing::HasSubstr;

GetEnvFn Env(std::map<std::string, std::string> vars) {
  return [vars](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(SystemdListenFdCountTest, ForUs) {
  Result<int> n = SystemdListenFdCount(Env({{"LISTEN_PID", "42"}, {"LISTEN_FDS", "1"}}), 42);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 1);
  Result<int> two = SystemdListenFdCount(Env({{"LISTEN_PID", "7"}, {"LISTEN_FDS", "2"}}), 7);
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(*two, 2);
}

TEST(SystemdListenFdCountTest, NoneForUs) {
  Result<int> unset = SystemdListenFdCount(Env({}), 42);
  ASSERT_FALSE(unset.ok());
  EXPECT_EQ(unset.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(unset.status().message(), HasSubstr("LISTEN_PID and LISTEN_FDS are not set"));
  Result<int> other = SystemdListenFdCount(Env({{"LISTEN_PID", "41"}, {"LISTEN_FDS", "1"}}), 42);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(other.status().message(), HasSubstr("LISTEN_PID=41 is another process"));
  Result<int> zero = SystemdListenFdCount(Env({{"LISTEN_PID", "42"}, {"LISTEN_FDS", "0"}}), 42);
  EXPECT_EQ(zero.status().code(), StatusCode::kNotFound);
}

TEST(SystemdListenFdCountTest, Garbage) {
  Result<int> pid = SystemdListenFdCount(Env({{"LISTEN_PID", "x"}, {"LISTEN_FDS", "1"}}), 42);
  EXPECT_EQ(pid.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(pid.status().message(), "LISTEN_PID: \"x\" is not a process id");
  Result<int> fds = SystemdListenFdCount(Env({{"LISTEN_PID", "42"}, {"LISTEN_FDS", "-1"}}), 42);
  EXPECT_EQ(fds.status().message(), "LISTEN_FDS: \"-1\" is not a count");
}

TEST(CheckListeningTcpSocketTest, Kinds) {
  int tcp = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a = {};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(tcp, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  EXPECT_THAT(CheckListeningTcpSocket(tcp).message(), HasSubstr("is not listening"));
  ASSERT_EQ(::listen(tcp, 4), 0);
  EXPECT_TRUE(CheckListeningTcpSocket(tcp).ok());
  ::close(tcp);

  int unix_sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un u = {};
  u.sun_family = AF_UNIX;
  const std::string path = ::testing::TempDir() + "/systemd_socket_test.sock";
  ::unlink(path.c_str());
  std::snprintf(u.sun_path, sizeof(u.sun_path), "%s", path.c_str());
  ASSERT_EQ(::bind(unix_sock, reinterpret_cast<sockaddr*>(&u), sizeof(u)), 0);
  ASSERT_EQ(::listen(unix_sock, 4), 0);
  EXPECT_THAT(CheckListeningTcpSocket(unix_sock).message(), HasSubstr("is not a TCP socket"));
  ::close(unix_sock);
  ::unlink(path.c_str());

  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  EXPECT_THAT(CheckListeningTcpSocket(pipe_fds[0]).message(), HasSubstr("is not a socket"));
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

}  // namespace
}  // namespace nvmlx::serve
