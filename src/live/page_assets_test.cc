#include "live/page_assets.h"

#include <gtest/gtest.h>

#include <string>

namespace nvmlx::live {
namespace {

// The page loads nothing from outside the exporter (no CDN, no web fonts), so it works offline
// and under the web config's TLS and auth: every reference is relative.
TEST(PageAssets, AllFilesCompiledInAndSelfContained) {
  ASSERT_EQ(PageAssets().size(), 3u);
  for (const PageAsset& a : PageAssets()) {
    SCOPED_TRACE(std::string(a.name));
    EXPECT_FALSE(a.body.empty());
    // The SVG namespace is a name, not a fetch; any other absolute URL would be one.
    std::string body(a.body);
    const std::string svg_ns = "http://www.w3.org/2000/svg";
    for (std::size_t at; (at = body.find(svg_ns)) != std::string::npos;)
      body.erase(at, svg_ns.size());
    EXPECT_EQ(body.find("http://"), std::string::npos);
    EXPECT_EQ(body.find("https://"), std::string::npos);
    EXPECT_EQ(body.find("@import"), std::string::npos);
    EXPECT_EQ(body.find("url("), std::string::npos);
    EXPECT_EQ(body.find('\0'), std::string::npos);
  }
  EXPECT_EQ(PageAssets()[0].name, "index.html");
  EXPECT_EQ(PageAssets()[0].content_type, "text/html; charset=utf-8");
  EXPECT_EQ(PageAssets()[1].name, "live.css");
  EXPECT_EQ(PageAssets()[2].content_type, "text/javascript; charset=utf-8");
  const std::string_view html = PageAssets()[0].body;
  // The old link list stays reachable from the page.
  for (const char* link :
       {"href=\"metrics\"", "href=\"health\"", "href=\"ready\"", "href=\"api/v1/snapshot\"",
        "href=\"api/v1/history\"", "src=\"live/live.js\"", "href=\"live/live.css\"", "viewport"}) {
    EXPECT_NE(html.find(link), std::string_view::npos) << link;
  }
}

}  // namespace
}  // namespace nvmlx::live
