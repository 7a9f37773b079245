#include "attribute/kubelet_client.h"

#include <grpcpp/grpcpp.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

namespace nvmlx::attribute {
namespace {

// How long the one retry of an UNAVAILABLE call waits for the channel to reconnect
// (kubelet_client.h).
constexpr std::chrono::milliseconds kReconnectWait(1000);

std::string_view GrpcCodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::UNKNOWN:
      return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED:
      return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS:
      return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    default:
      return "UNKNOWN";
  }
}

}  // namespace

KubeletClient::KubeletClient(KubeletClientOptions options) : options_(std::move(options)) {}

KubeletClient::~KubeletClient() = default;

Result<KubeletPodList> KubeletClient::List() {
  Result<v1::ListPodResourcesResponse> answer = ListProto();
  if (!answer.ok()) return answer.status();
  return FromProto(*answer);
}

Result<KubeletAllocatable> KubeletClient::GetAllocatable() {
  Result<v1::AllocatableResourcesResponse> answer = GetAllocatableProto();
  if (!answer.ok()) return answer.status();
  return FromProto(*answer);
}

Status KubeletClient::Connect() {
  const std::string& path = options_.socket_path;
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    const int err = errno;
    stub_.reset();
    channel_.reset();
    if (err == ENOENT) return NotFound("kubelet socket " + path + ": no such file");
    return Unavailable("kubelet socket " + path + ": " + std::strerror(err));
  }
  if (!S_ISSOCK(st.st_mode)) return Unavailable("kubelet socket " + path + ": not a socket");
  if (stub_ == nullptr || st.st_ino != socket_inode_ || st.st_dev != socket_device_) {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(options_.max_receive_bytes);
    // A kubelet restart is short; reconnect within a refresh period, not gRPC's 1 s..120 s.
    // GRPC_ARG_MIN_RECONNECT_BACKOFF_MS stays at gRPC's default: gRPC also takes it as the time a
    // connection attempt may take to get the server's SETTINGS frame, and at 100 ms a loaded
    // kubelet (or a loaded CI run's fixture) failed every attempt ("connection attempt timed out
    // before receiving SETTINGS frame"). The call's own deadline bounds the wait.
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
    channel_ = grpc::CreateCustomChannel("unix:" + path, grpc::InsecureChannelCredentials(), args);
    stub_ = v1::PodResourcesLister::NewStub(channel_);
    socket_inode_ = st.st_ino;
    socket_device_ = st.st_dev;
  }
  return Status::Ok();
}

Status KubeletClient::CallError(std::string_view call, const grpc::Status& status) const {
  std::string msg = "kubelet " + std::string(call) + " on " + options_.socket_path + ": " +
                    std::string(GrpcCodeName(status.error_code()));
  if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    msg += " (no answer within " + std::to_string(options_.deadline.count()) + " ms)";
  } else if (!status.error_message().empty()) {
    msg += ": " + status.error_message();
  }
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return Unavailable(std::move(msg));
    case grpc::StatusCode::UNIMPLEMENTED:
      return NotSupported(std::move(msg));
    default:
      return Internal(std::move(msg));
  }
}

template <typename Call>
grpc::Status KubeletClient::CallWithReconnect(Call&& call) {
  const auto deadline = std::chrono::system_clock::now() + options_.deadline;
  grpc::ClientContext first;
  first.set_deadline(deadline);
  grpc::Status status = call(&first);
  if (status.error_code() != grpc::StatusCode::UNAVAILABLE) return status;
  // A kubelet that answered UNAVAILABLE itself left the channel READY: that is its answer. A
  // connection that failed leaves it otherwise; Connect() saw the socket file, so the kubelet is
  // (or was just) there: wait for the channel's next connection instead.
  if (channel_->GetState(/*try_to_connect=*/false) == GRPC_CHANNEL_READY) return status;
  const auto retry_deadline = std::min(deadline, std::chrono::system_clock::now() + kReconnectWait);
  if (retry_deadline <= std::chrono::system_clock::now()) return status;
  grpc::ClientContext second;
  second.set_wait_for_ready(true);
  second.set_deadline(retry_deadline);
  grpc::Status retried = call(&second);
  // Out of time waiting to reconnect: the first failure says why better than "no answer".
  if (retried.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) return status;
  return retried;
}

Result<v1::ListPodResourcesResponse> KubeletClient::ListProto() {
  if (Status st = Connect(); !st.ok()) return st;
  v1::ListPodResourcesRequest request;
  v1::ListPodResourcesResponse response;
  grpc::Status status = CallWithReconnect([&](grpc::ClientContext* context) {
    response.Clear();
    return stub_->List(context, request, &response);
  });
  if (status.ok()) return response;
  return CallError("List", status);
}

Result<v1::AllocatableResourcesResponse> KubeletClient::GetAllocatableProto() {
  if (Status st = Connect(); !st.ok()) return st;
  v1::AllocatableResourcesRequest request;
  v1::AllocatableResourcesResponse response;
  grpc::Status status = CallWithReconnect([&](grpc::ClientContext* context) {
    response.Clear();
    return stub_->GetAllocatableResources(context, request, &response);
  });
  if (status.ok()) return response;
  return CallError("GetAllocatableResources", status);
}

}  // namespace nvmlx::attribute
