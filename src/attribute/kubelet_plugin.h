// The kubelet plugin, libnvmlx_kubelet.so: the pod-resources gRPC client (KubeletClient) with
// gRPC, protobuf and abseil behind it, loaded with dlopen only when -k asks for the kubelet.
//
// Why a plugin: linked into the daemon, those libraries cost ~7 MiB of resident memory in every
// process, -k or not (their pages touched by relocation and static initialisers, abseil's ~40
// libraries, upb); docs/benchmarks.md "Resident memory" has the breakdown. The daemon links
// none of them and talks to the plugin through PodResourcesLister (pod_resources.h).
//
// The boundary: the plugin exports one C symbol, kKubeletPluginSymbol, a function returning a
// KubeletPluginV1. Its `create` builds a KubeletClient and hands it over as a
// PodResourcesLister the caller owns. C++ types cross the boundary (std::string, Result,
// the structs of pod_resources.h): the plugin is built from the same tree as the daemon and
// ships beside it; `build` (compiler and layout sizes) is compared on load so that a plugin
// of another build is refused instead of crashing.
//
// The plugin is never unloaded (dlclose): gRPC keeps threads and exit handlers in it.
//
// Thread-safety: LoadKubeletClient may be called from any thread; the lister it returns is
// used by one thread at a time (the refresher's).
#ifndef NVML_EXPORTER_ATTRIBUTE_KUBELET_PLUGIN_H_
#define NVML_EXPORTER_ATTRIBUTE_KUBELET_PLUGIN_H_

#include <memory>
#include <string>
#include <vector>

#include "attribute/pod_resources.h"
#include "util/status.h"

namespace nvmlx::attribute {

inline constexpr char kKubeletPluginFile[] = "libnvmlx_kubelet.so";
inline constexpr char kKubeletPluginSymbol[] = "nvmlx_kubelet_plugin_v1";

#define NVMLX_KUBELET_PLUGIN_STR2(x) #x
#define NVMLX_KUBELET_PLUGIN_STR(x) NVMLX_KUBELET_PLUGIN_STR2(x)
// What must match between daemon and plugin: the interface version (2: PodResourcesLister
// gained GetAllocatable), the compiler, and the sizes of the types that cross.
inline constexpr char kKubeletPluginBuild[] =
    "nvmlx-kubelet-plugin/2 " __VERSION__
    " cxx11abi=" NVMLX_KUBELET_PLUGIN_STR(_GLIBCXX_USE_CXX11_ABI);
inline constexpr size_t kKubeletPluginLayout =
    sizeof(KubeletPodList) * 1000000 + sizeof(KubeletPod) * 10000 + sizeof(KubeletContainer) * 100 +
    sizeof(KubeletClientOptions) + sizeof(Result<KubeletPodList>) +
    sizeof(Result<KubeletAllocatable>);

struct KubeletPluginV1 {
  const char* build;  // the plugin's kKubeletPluginBuild
  size_t layout;      // the plugin's kKubeletPluginLayout
  // A new KubeletClient; no connection is made before its first List().
  PodResourcesLister* (*create)(const KubeletClientOptions& options);
};

// Where the plugin is looked for, in order: <binary's folder>/lib/ (the build tree and
// `make bundle`), <binary's folder>/../lib/nvml-exporter/ (the image, an install).
std::vector<std::string> KubeletPluginCandidates();

// Loads the plugin from `path` (empty: the first of KubeletPluginCandidates() that exists) and
// creates a client. INVALID_ARGUMENT (a configuration error: exit code 2) when there is no
// plugin, it cannot be loaded, or it is of another build; the message names the paths tried.
Result<std::unique_ptr<PodResourcesLister>> LoadKubeletClient(const KubeletClientOptions& options,
                                                              const std::string& path = "");

}  // namespace nvmlx::attribute

#endif  // NVML_EXPORTER_ATTRIBUTE_KUBELET_PLUGIN_H_
