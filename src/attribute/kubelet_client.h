// KubeletClient: calls PodResourcesLister.List and GetAllocatableResources (pod-resources v1) on
// the kubelet's unix socket.
// Part of the kubelet plugin (libnvmlx_kubelet.so, see kubelet_plugin.h): this header and its
// .cc are the only code of the daemon that includes gRPC or protobuf; the daemon links neither
// and reaches this class through PodResourcesLister (pod_resources.h).
//
// - One gRPC channel, reused across calls (the kubelet answers in ~1 ms over an open
//   connection), rebuilt when the socket file is replaced (a restarted kubelet creates a new
//   socket; we compare the inode) so that we never wait out gRPC's reconnect backoff.
// - A missing socket fails at once with NOT_FOUND, without a gRPC call (dcgm-exporter stats the
//   socket first as well).
// - Every call has a deadline; a kubelet that is slow past it counts as failed (UNAVAILABLE).
// - A call that fails UNAVAILABLE because its connection failed (the channel is not READY after
//   it; the socket file exists; seen under load as "tcp handshaker shutdown") is tried once more,
//   waiting for the channel to reconnect (100 ms backoff) for at most 1 s within the same
//   deadline, so that one dropped connection does not cost a refresh period of pod labels (or
//   the only page of --once). A socket nobody listens on still fails, 1 s later. A kubelet that
//   answers UNAVAILABLE itself (the channel stays READY) is not asked again.
// - The receive limit defaults to 64 MiB instead of gRPC's 4 MiB: List is node-wide and
//   includes every device of every pod, and 4 MiB is exceeded on dense nodes
//   (dcgm-exporter #509: 4753177 vs 4194304). A 110-pod node with 8 GPUs answers in ~50 KiB.
//
// Thread-safety: List() may be called from one thread at a time (the refresher's).
#ifndef NVML_EXPORTER_ATTRIBUTE_KUBELET_CLIENT_H_
#define NVML_EXPORTER_ATTRIBUTE_KUBELET_CLIENT_H_

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "attribute/pod_resources.grpc.pb.h"
#include "attribute/pod_resources.h"
#include "attribute/pod_resources.pb.h"
#include "attribute/pod_resources_proto.h"
#include "util/status.h"

namespace nvmlx::attribute {

class KubeletClient : public PodResourcesLister {
 public:
  explicit KubeletClient(KubeletClientOptions options);
  ~KubeletClient() override;
  KubeletClient(const KubeletClient&) = delete;
  KubeletClient& operator=(const KubeletClient&) = delete;

  // PodResourcesLister::List: ListProto() converted by FromProto().
  Result<KubeletPodList> List() override;
  // The answer as the kubelet sent it; errors as List().
  Result<v1::ListPodResourcesResponse> ListProto();
  // PodResourcesLister::GetAllocatable: GetAllocatableProto() converted by FromProto().
  Result<KubeletAllocatable> GetAllocatable() override;
  // The answer as the kubelet sent it; NOT_SUPPORTED for gRPC UNIMPLEMENTED, else as List().
  Result<v1::AllocatableResourcesResponse> GetAllocatableProto();

  const KubeletClientOptions& options() const { return options_; }

 private:
  // A stub on the socket, rebuilt when the socket file changed (see above).
  Status Connect();
  // A failed call's Status: the gRPC code named, UNAVAILABLE / DEADLINE_EXCEEDED -> UNAVAILABLE,
  // UNIMPLEMENTED -> NOT_SUPPORTED, anything else -> INTERNAL.
  Status CallError(std::string_view call, const grpc::Status& status) const;
  // Runs `call` (one RPC on stub_ with the context it is given) under the deadline, with the one
  // reconnecting retry described above; returns the status to report.
  template <typename Call>
  grpc::Status CallWithReconnect(Call&& call);

  KubeletClientOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::PodResourcesLister::Stub> stub_;
  ino_t socket_inode_ = 0;
  dev_t socket_device_ = 0;
};

}  // namespace nvmlx::attribute

#endif  // NVML_EXPORTER_ATTRIBUTE_KUBELET_CLIENT_H_
