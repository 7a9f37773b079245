// The live page's files (src/live/page/), compiled into the binary by cmake/embed_assets.cmake:
// the page needs no file on disk and nothing from the network (no CDN, no web fonts).
//
// Thread-safety: constant data.
#ifndef NVML_EXPORTER_LIVE_PAGE_ASSETS_H_
#define NVML_EXPORTER_LIVE_PAGE_ASSETS_H_

#include <span>
#include <string_view>

namespace nvmlx::live {

struct PageAsset {
  std::string_view name;          // file name: "index.html", "live.css", "live.js"
  std::string_view content_type;  // from the extension
  std::string_view body;
};

// Every file of src/live/page/, sorted by name.
std::span<const PageAsset> PageAssets();

}  // namespace nvmlx::live

#endif  // NVML_EXPORTER_LIVE_PAGE_ASSETS_H_
