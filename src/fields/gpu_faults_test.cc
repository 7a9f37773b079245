#include "fields/gpu_faults.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace nvmlx::fields {
namespace {

TEST(GpuFaultsTest, TableIsAscendingAndUnique) {
  int64_t last = -1;
  std::set<std::string_view> reasons;
  for (const XidFault& f : XidFaults()) {
    EXPECT_GT(f.xid, last);
    last = f.xid;
    EXPECT_TRUE(reasons.insert(f.reason).second) << f.reason;
    EXPECT_EQ(f.reason.substr(0, 3), "Xid") << f.reason;
    EXPECT_FALSE(f.advice.empty());
  }
}

// The catalog's immediate actions decide: a reset or a reboot is critical, an application
// restart or nothing is an Event only.
TEST(GpuFaultsTest, CriticalFollowsTheCatalogsImmediateAction) {
  for (const XidFault& f : XidFaults()) {
    const bool reset_or_reboot = f.action == "RESET_GPU" || f.action == "RESTART_BM" ||
                                 f.action == "WORKFLOW_XID_48" || f.action == "WORKFLOW_NVLINK_ERR";
    EXPECT_EQ(f.critical, reset_or_reboot) << f.xid;
  }
  ASSERT_TRUE(FaultOfXid(95).has_value());
  EXPECT_TRUE(FaultOfXid(95)->critical);
  EXPECT_EQ(FaultOfXid(95)->reason, "XidUncontainedEccError");
  ASSERT_TRUE(FaultOfXid(94).has_value());
  EXPECT_FALSE(FaultOfXid(94)->critical);
  EXPECT_EQ(FaultOfXid(79)->action, "RESTART_BM");
  // Application faults are for the metrics only.
  EXPECT_FALSE(FaultOfXid(13).has_value());
  EXPECT_FALSE(FaultOfXid(31).has_value());
  EXPECT_FALSE(FaultOfXid(0).has_value());
  EXPECT_FALSE(FaultOfXid(100000).has_value());
}

// docs/faults.md §5.2 is this table, row for row.
TEST(GpuFaultsTest, TheDocumentedTableIsThisOne) {
  std::ifstream in(NVMLX_SOURCE_DIR "/docs/faults.md");
  ASSERT_TRUE(in.good());
  std::stringstream doc;
  doc << in.rdbuf();
  for (const XidFault& f : XidFaults()) {
    const std::string row = "| " + std::to_string(f.xid) + " | `" + std::string(f.reason) + "` | " +
                            std::string(f.action) + " | " + (f.critical ? "yes" : "no") + " |";
    EXPECT_NE(doc.str().find(row), std::string::npos) << "docs/faults.md lacks: " << row;
  }
}

}  // namespace
}  // namespace nvmlx::fields
