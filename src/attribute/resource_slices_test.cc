#include "attribute/resource_slices.h"

#include <gtest/gtest.h>

#include <string>

namespace nvmlx::attribute {
namespace {

// resource.k8s.io/v1: attributes directly on the device.
constexpr char kV1List[] = R"({
  "kind": "ResourceSliceList", "apiVersion": "resource.k8s.io/v1",
  "metadata": {"resourceVersion": "7", "continue": "page2"},
  "items": [
    {"metadata": {"name": "node1-gpu.nvidia.com-x"},
     "spec": {"driver": "gpu.nvidia.com", "nodeName": "node1",
              "pool": {"name": "node1", "generation": 1, "resourceSliceCount": 1},
              "devices": [
                {"name": "gpu-0", "attributes": {
                   "type": {"string": "gpu"}, "uuid": {"string": "GPU-aaaa"},
                   "index": {"int": 0}}},
                {"name": "gpu-1-mig-9-0-1", "attributes": {
                   "type": {"string": "mig"}, "uuid": {"string": "MIG-bbbb"},
                   "parentUUID": {"string": "GPU-pppp"}, "profile": {"string": "1g.18gb"}}},
                {"name": "gpu-1-mig-orphan", "attributes": {
                   "type": {"string": "mig"}, "uuid": {"string": "MIG-cccc"}}},
                {"name": "vfio-0", "attributes": {"type": {"string": "vfio"}}}]}},
    {"metadata": {"name": "other"},
     "spec": {"driver": "compute-domain.nvidia.com", "pool": {"name": "node1"},
              "devices": [{"name": "gpu-0", "attributes": {
                  "type": {"string": "gpu"}, "uuid": {"string": "GPU-zzzz"}}}]}}]})";

TEST(ResourceSlicesTest, ParsesV1GpuAndMigDevicesOfTheGpuDriver) {
  DraSlices slices;
  size_t skipped = 0;
  Result<std::string> next = ParseResourceSliceList(kV1List, "list", &slices, &skipped);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(*next, "page2");
  ASSERT_EQ(slices.by_pool_device.size(), 2u);
  const DraDevice& gpu = slices.by_pool_device.at("node1/gpu-0");
  EXPECT_FALSE(gpu.mig);
  EXPECT_EQ(gpu.uuid, "GPU-aaaa");  // not the other driver's GPU-zzzz
  const DraDevice& mig = slices.by_pool_device.at("node1/gpu-1-mig-9-0-1");
  EXPECT_TRUE(mig.mig);
  EXPECT_EQ(mig.uuid, "MIG-bbbb");
  EXPECT_EQ(mig.parent_uuid, "GPU-pppp");
  EXPECT_EQ(mig.profile, "1g.18gb");
  EXPECT_EQ(skipped, 2u);  // the MIG device without parentUUID, the unknown type
}

TEST(ResourceSlicesTest, ParsesV1beta1BasicDevices) {
  constexpr char kBeta[] = R"({"metadata": {}, "items": [
    {"spec": {"driver": "gpu.nvidia.com", "pool": {"name": "p"},
              "devices": [{"name": "gpu-3", "basic": {"attributes": {
                  "type": {"string": "gpu"}, "uuid": {"string": "GPU-3"}}}}]}}]})";
  DraSlices slices;
  Result<std::string> next = ParseResourceSliceList(kBeta, "list", &slices);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(*next, "");
  ASSERT_EQ(slices.by_pool_device.count("p/gpu-3"), 1u);
  EXPECT_EQ(slices.by_pool_device.at("p/gpu-3").uuid, "GPU-3");
}

TEST(ResourceSlicesTest, BadListsAreErrorsNamingWhere) {
  DraSlices slices;
  Result<std::string> r = ParseResourceSliceList("{", "ResourceSliceList (v1)", &slices);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("ResourceSliceList (v1): invalid JSON"), std::string::npos);
  r = ParseResourceSliceList(R"({"items": {}})", "L", &slices);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("items array"), std::string::npos);
  r = ParseResourceSliceList(R"({"items": [{"spec": {"driver": "gpu.nvidia.com"}}]})", "L",
                             &slices);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("L: items[0]: spec.pool.name missing"), std::string::npos);
  EXPECT_TRUE(slices.by_pool_device.empty());
}

}  // namespace
}  // namespace nvmlx::attribute
