#include "attribute/kubelet_plugin.h"

#include <dlfcn.h>

#include <filesystem>
#include <utility>

namespace nvmlx::attribute {

std::vector<std::string> KubeletPluginCandidates() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  const std::filesystem::path dir = exe.parent_path();
  return {(dir / "lib" / kKubeletPluginFile).lexically_normal().string(),
          (dir / ".." / "lib" / "nvml-exporter" / kKubeletPluginFile).lexically_normal().string()};
}

Result<std::unique_ptr<PodResourcesLister>> LoadKubeletClient(const KubeletClientOptions& options,
                                                              const std::string& path) {
  std::string file = path;
  if (file.empty()) {
    std::string tried;
    std::error_code ec;
    for (const std::string& candidate : KubeletPluginCandidates()) {
      if (std::filesystem::exists(candidate, ec)) {
        file = candidate;
        break;
      }
      tried += (tried.empty() ? "" : ", ") + candidate;
    }
    if (file.empty()) {
      return InvalidArgument(std::string("-k needs the kubelet plugin ") + kKubeletPluginFile +
                             ", installed with nvml-exporter; not found (looked for " + tried +
                             ")");
    }
  }
  // RTLD_LOCAL: gRPC's and protobuf's symbols stay the plugin's. Never closed (see the header).
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    return InvalidArgument("kubelet plugin " + file + ": " +
                           (err != nullptr ? err : "dlopen failed"));
  }
  using Entry = const KubeletPluginV1* (*)();
  auto entry = reinterpret_cast<Entry>(dlsym(handle, kKubeletPluginSymbol));
  if (entry == nullptr) {
    return InvalidArgument("kubelet plugin " + file + ": no " + kKubeletPluginSymbol +
                           " (not an nvml-exporter kubelet plugin)");
  }
  const KubeletPluginV1* plugin = entry();
  if (plugin == nullptr || plugin->build == nullptr ||
      std::string_view(plugin->build) != kKubeletPluginBuild ||
      plugin->layout != kKubeletPluginLayout || plugin->create == nullptr) {
    return InvalidArgument("kubelet plugin " + file +
                           ": built for another nvml-exporter (plugin: " +
                           (plugin != nullptr && plugin->build != nullptr ? plugin->build : "?") +
                           "; this binary: " + kKubeletPluginBuild + ")");
  }
  return std::unique_ptr<PodResourcesLister>(plugin->create(options));
}

}  // namespace nvmlx::attribute
