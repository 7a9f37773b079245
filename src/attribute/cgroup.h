// cgroup parsing: which Kubernetes pod and container a host process belongs to, from the text of
// /proc/<pid>/cgroup (docs/nvml.md §4).
//
// Handles cgroup v1 (many "N:controllers:path" lines) and v2 (one "0::path" line), the systemd
// and cgroupfs cgroup drivers, containerd ("cri-containerd-<id>.scope", bare "<id>"), CRI-O
// ("crio-<id>"), Docker / cri-dockerd ("docker-<id>.scope"), all QoS classes (Guaranteed pods
// have no QoS segment), systemd's underscores in slice names, and paths relative to a private
// cgroup namespace ("/../../kubepods-…"). It looks for the pod segment anywhere in the path
// rather than matching a prefix, for exactly that last reason.
//
// A path without a pod segment (host processes, plain Docker "/docker/<id>", systemd services)
// has no owner. A pod-level process (no container segment below the pod) has a pod uid and an
// empty container id. CRI-O's conmon ("crio-conmon-<id>.scope") is not the container: empty id.
//
// Pure functions over their inputs: thread-safe. Never throws, whatever the input (fuzzed).
#ifndef NVML_EXPORTER_ATTRIBUTE_CGROUP_H_
#define NVML_EXPORTER_ATTRIBUTE_CGROUP_H_

#include <optional>
#include <string_view>

#include "model/attribution.h"

namespace nvmlx::attribute {

// One cgroup path ("/kubepods.slice/…/cri-containerd-<id>.scope"). nullopt: not a pod's cgroup.
std::optional<model::ProcessOwner> ParseCgroupPath(std::string_view path);

// The whole /proc/<pid>/cgroup text. Every line's path is tried; the first that names a pod and a
// container wins, else the first that names a pod. Malformed lines are skipped.
std::optional<model::ProcessOwner> ParseCgroupFile(std::string_view text);

}  // namespace nvmlx::attribute

#endif  // NVML_EXPORTER_ATTRIBUTE_CGROUP_H_
