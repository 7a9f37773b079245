// The entry point of libnvmlx_kubelet.so (kubelet_plugin.h): the one symbol the plugin
// exports (kubelet_plugin.map hides every other one).
#include "attribute/kubelet_client.h"
#include "attribute/kubelet_plugin.h"

namespace {

nvmlx::attribute::PodResourcesLister* Create(const nvmlx::attribute::KubeletClientOptions& o) {
  return new nvmlx::attribute::KubeletClient(o);
}

constexpr nvmlx::attribute::KubeletPluginV1 kPlugin{
    nvmlx::attribute::kKubeletPluginBuild, nvmlx::attribute::kKubeletPluginLayout, &Create};

}  // namespace

extern "C" __attribute__((visibility("default"))) const nvmlx::attribute::KubeletPluginV1*
nvmlx_kubelet_plugin_v1() {
  return &kPlugin;
}
