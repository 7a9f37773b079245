#include "fields/xid_text.h"

#include <gtest/gtest.h>

namespace nvmlx::fields {
namespace {

TEST(XidTextTest, CatalogTextsAsDcgmExporterPrintsThem) {
  EXPECT_EQ(XidDescription(0), "No Error");
  EXPECT_EQ(XidDescription(1), "Invalid or corrupted push buffer stream");
  EXPECT_EQ(XidDescription(5), "Unused");
  EXPECT_EQ(XidDescription(48), "Double Bit ECC Error");
  EXPECT_EQ(XidDescription(79), "GPU has fallen off the bus");
  EXPECT_EQ(XidDescription(87), "Reserved");
  EXPECT_EQ(XidDescription(119), "GSP RPC Timeout");
  EXPECT_EQ(XidDescription(142), "Robust Channel NVENVC3 Error");  // sic, as NVIDIA spells it
  EXPECT_EQ(XidDescription(168),
            "Reduced GPU Memory Capacity (Errors found in write protection region)");
  EXPECT_EQ(XidDescription(172), "Uncorrectable SRAM Error");
}

TEST(XidTextTest, OutsideTheCatalogIsUnknown) {
  EXPECT_EQ(XidDescription(173), "Unknown Error");
  EXPECT_EQ(XidDescription(999), "Unknown Error");  // NVML's "unknown Xid"
  EXPECT_EQ(XidDescription(-1), "Unknown Error");
}

TEST(XidTextTest, EveryCatalogCodeHasAText) {
  for (int64_t xid = 0; xid <= 172; ++xid) {
    EXPECT_FALSE(XidDescription(xid).empty()) << xid;
    EXPECT_NE(XidDescription(xid), "Unknown Error") << xid;
  }
}

}  // namespace
}  // namespace nvmlx::fields
