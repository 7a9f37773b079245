// The Kubernetes, HPC and runtime container attribution flag group (config/option_flags.h).
#include <string>

#include "config/option_flags.h"

namespace nvmlx::config::flags {
namespace {

// clang-format off
constexpr FlagSpec kKubernetes[] = {
  {"kubernetes", "k", "DCGM_EXPORTER_KUBERNETES", Kind::kBool, "false", true, "",
   "Label GPU series with the pod, namespace and container holding the GPU (kubelet "
   "pod-resources API)."},
  {"kubernetes-gpu-id-type", "", "DCGM_EXPORTER_KUBERNETES_GPU_ID_TYPE", Kind::kString, "uid",
   true, "TYPE", "How the device plugin names GPUs: uid (GPU UUID) or device-name (nvidia0; GKE)."},
  {"pod-resources-kubelet-socket", "", "DCGM_POD_RESOURCES_KUBELET_SOCKET", Kind::kString,
   "/var/lib/kubelet/pod-resources/kubelet.sock", true, "PATH",
   "The kubelet's pod-resources socket."},
  {"nvidia-resource-names", "", "NVIDIA_RESOURCE_NAMES", Kind::kList, "", true, "NAME,...",
   "Extended resource names to attribute besides nvidia.com/gpu and nvidia.com/mig-*."},
  {"kubernetes-virtual-gpus", "", "KUBERNETES_VIRTUAL_GPUS", Kind::kBool, "false", true, "",
   "Shared GPUs (time-slicing, MPS): one series per sharing pod, with a vgpu label; with -k, "
   "GPU_UTIL and FB_USED also per pod from NVML per-process data and /proc/<pid>/cgroup."},
  {"hpc-job-mapping-dir", "", "DCGM_HPC_JOB_MAPPING_DIR", Kind::kString, "", true, "DIR",
   "Directory of files named <gpu> or <gpu>.<gi> listing job ids: adds hpc_job labels."},
  // Runtime container labels (hosts without Kubernetes).
  {"container-labels", "", "DCGM_EXPORTER_CONTAINER_LABELS", Kind::kBool, "false", true, "",
   "Without -k: one more copy of each GPU series per running container of a Docker-compatible "
   "engine given that GPU, labelled container=\"<name>\"."},
  {"container-runtime-socket", "", "DCGM_CONTAINER_RUNTIME_SOCKET", Kind::kString, "", true,
   "PATH", "The engine's API socket for --container-labels, e.g. /var/run/docker.sock."},
  // Process and pod attribution.
  {"kubernetes-process-metrics", "", "NVML_EXPORTER_KUBERNETES_PROCESS_METRICS", Kind::kBool,
   "false", true, "",
   "Per-pod GPU usage from NVML per-process data, /proc/<pid>/cgroup and the API server."},
  {"host-proc-root", "", "NVML_EXPORTER_HOST_PROC_ROOT", Kind::kString, "/proc", true, "DIR",
   "The host's /proc (NVML reports host PIDs), e.g. /host/proc without hostPID."},
  {"kubernetes-api-server", "", "NVML_EXPORTER_KUBERNETES_API_SERVER", Kind::kString, "", true,
   "URL", "API server https://host[:port] (default: in-cluster, $KUBERNETES_SERVICE_HOST)."},
  {"kubernetes-token-file", "", "NVML_EXPORTER_KUBERNETES_TOKEN_FILE", Kind::kString, "", true,
   "FILE", "Bearer token for the API server (default: the service account's)."},
  {"kubernetes-ca-file", "", "NVML_EXPORTER_KUBERNETES_CA_FILE", Kind::kString, "", true, "FILE",
   "CA bundle for the API server (default: the service account's ca.crt)."},

  {"kubernetes-node-conditions", "", "NVML_EXPORTER_KUBERNETES_NODE_CONDITIONS", Kind::kBool,
   "false", true, "",
   "GPU faults on this node's Node ($NODE_NAME): conditions GpuHealthy, GpuXidCritical, "
   "GpuLost and an Event per fault (needs patch on nodes/status, create/patch on events)."},

  {"kubernetes-node-conditions-hold", "", "NVML_EXPORTER_KUBERNETES_NODE_CONDITIONS_HOLD",
   Kind::kDuration, "10m0s", true, "DUR",
   "How long GpuXidCritical and GpuHealthy stay in their problem state after the last critical "
   "Xid or failing health check."},
  {"state-dir", "", "NVML_EXPORTER_STATE_DIR", Kind::kString, "", true, "DIR",
   "Keep the energy per pod counters here (pod-energy.json) so that they go on across restarts "
   "(a hostPath); empty: they start from 0."},

  {"kubernetes-enable-pod-labels", "", "DCGM_EXPORTER_KUBERNETES_ENABLE_POD_LABELS", Kind::kBool,
   "false", true, "", "Copy pod labels (sanitised names) onto per-pod and device series."},
  {"kubernetes-enable-pod-uid", "", "DCGM_EXPORTER_KUBERNETES_ENABLE_POD_UID", Kind::kBool,
   "false", true, "", "Add the pod_uid label to the per-pod series."},
  {"kubernetes-pod-label-allowlist-regex", "",
   "DCGM_EXPORTER_KUBERNETES_POD_LABEL_ALLOWLIST_REGEX", Kind::kList, "", true, "RE,...",
   "Copy only pod labels whose key matches one of these RE2 regexes (default: all)."},
};
// clang-format on

// --container-labels as dcgm-exporter checks it (validateConfig): ignored under -k, with a
// warning; otherwise it needs a socket (there is no default and no probing).
Status ConvertContainerLabels(const RawFlags& raw, Options* o) {
  const Raw& on = raw.Get("container-labels");
  NVMLX_RETURN_IF_ERROR(ToBool(on, &o->container_labels));
  const Raw& socket = raw.Get("container-runtime-socket");
  ToText(socket, &o->container_runtime_socket);
  if (!o->container_labels) return Status::Ok();
  if (o->kubernetes) {
    o->startup_warnings.push_back(
        {"container-labels",
         "--container-labels" +
             (on.from_flag ? std::string() : " (" + on.origin + "=" + on.last() + ")") +
             " ignored: with -k the container label comes from the kubelet"});
    return Status::Ok();
  }
  if (o->container_runtime_socket.find_first_not_of(" \t") == std::string::npos) {
    return InvalidArgument(
        on.origin +
        " requires --container-runtime-socket or DCGM_CONTAINER_RUNTIME_SOCKET (the "
        "Docker-compatible engine's socket, e.g. /var/run/docker.sock)");
  }
  return Status::Ok();
}

Status ConvertKubernetes(const RawFlags& raw, Options* o) {
  NVMLX_RETURN_IF_ERROR(ToBool(raw.Get("kubernetes"), &o->kubernetes));
  if (const Raw& r = raw.Get("kubernetes-gpu-id-type"); r.set) {
    if (r.last() == "uid") {
      o->kubernetes_gpu_id_type = KubernetesGpuIdType::kUid;
    } else if (r.last() == "device-name") {
      o->kubernetes_gpu_id_type = KubernetesGpuIdType::kDeviceName;
    } else {
      return InvalidArgument(r.origin + ": " + Quote(r.last()) +
                             " is not a GPU id type (expected uid or device-name)");
    }
  }
  NVMLX_RETURN_IF_ERROR(
      ToNonEmpty(raw.Get("pod-resources-kubelet-socket"), &o->pod_resources_socket));
  ToList(raw.Get("nvidia-resource-names"), &o->nvidia_resource_names);
  NVMLX_RETURN_IF_ERROR(ToBool(raw.Get("kubernetes-virtual-gpus"), &o->kubernetes_virtual_gpus));
  ToText(raw.Get("hpc-job-mapping-dir"), &o->hpc_job_mapping_dir);
  NVMLX_RETURN_IF_ERROR(ConvertContainerLabels(raw, o));
  NVMLX_RETURN_IF_ERROR(
      ToBool(raw.Get("kubernetes-process-metrics"), &o->kubernetes_process_metrics));
  NVMLX_RETURN_IF_ERROR(ToNonEmpty(raw.Get("host-proc-root"), &o->host_proc_root));
  NVMLX_RETURN_IF_ERROR(
      ToBool(raw.Get("kubernetes-enable-pod-labels"), &o->kubernetes_enable_pod_labels));
  NVMLX_RETURN_IF_ERROR(
      ToBool(raw.Get("kubernetes-enable-pod-uid"), &o->kubernetes_enable_pod_uid));
  // urfave's StringSlice: every occurrence, each split at commas.
  for (const std::string& v : raw.Get("kubernetes-pod-label-allowlist-regex").values) {
    size_t pos = 0;
    while (pos <= v.size()) {
      size_t comma = v.find(',', pos);
      if (comma == std::string::npos) comma = v.size();
      if (comma > pos) {
        o->kubernetes_pod_label_allowlist_regex.push_back(v.substr(pos, comma - pos));
      }
      pos = comma + 1;
    }
  }
  ToText(raw.Get("kubernetes-api-server"), &o->kubernetes_api_server);
  ToText(raw.Get("kubernetes-token-file"), &o->kubernetes_token_file);
  ToText(raw.Get("kubernetes-ca-file"), &o->kubernetes_ca_file);
  NVMLX_RETURN_IF_ERROR(
      ToBool(raw.Get("kubernetes-node-conditions"), &o->kubernetes_node_conditions));
  ToText(raw.Get("state-dir"), &o->state_dir);
  NVMLX_RETURN_IF_ERROR(
      ToTimeout(raw.Get("kubernetes-node-conditions-hold"), &o->kubernetes_node_conditions_hold));
  return Status::Ok();
}

}  // namespace

FlagGroup KubernetesFlags() { return {kKubernetes, &ConvertKubernetes}; }

}  // namespace nvmlx::config::flags
