// The Container Insights GPU metric table (fields/container_insights.h).
#include "fields/container_insights.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "fields/catalog.h"

namespace nvmlx::fields {
namespace {

const CiGpuMetric& Metric(std::string_view suffix) {
  for (const CiGpuMetric& m : ContainerInsightsGpuMetrics()) {
    if (m.suffix == suffix) return m;
  }
  ADD_FAILURE() << "no metric " << suffix;
  static CiGpuMetric none;
  return none;
}

TEST(ContainerInsightsTest, TheAgentsSevenMetricsFromCatalogFields) {
  std::set<std::string> fields;
  for (const CiGpuMetric& m : ContainerInsightsGpuMetrics()) {
    const FieldDef* f = FindById(m.field_id);
    ASSERT_NE(f, nullptr) << m.suffix;
    fields.insert(std::string(f->name));
  }
  EXPECT_EQ(fields, (std::set<std::string>{"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED_PERCENT",
                                           "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_TOTAL",
                                           "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE",
                                           "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"}));
  EXPECT_EQ(ContainerInsightsFieldNames().size(), 7u);
  EXPECT_EQ(Metric("gpu_memory_used").unit, "Bytes");
  EXPECT_EQ(Metric("gpu_temperature").unit, "None");
  EXPECT_EQ(Metric("gpu_tensor_core_utilization").unit, "Percent");
  EXPECT_TRUE(Metric("gpu_power_draw").gpu_wide);
  EXPECT_FALSE(Metric("gpu_memory_used").gpu_wide);
}

TEST(ContainerInsightsTest, ValuesScaledAsTheAgentScalesThem) {
  const CiGpuMetric& used = Metric("gpu_memory_used");
  const CiGpuMetric& percent = Metric("gpu_memory_utilization");
  const CiGpuMetric& tensor = Metric("gpu_tensor_core_utilization");
  std::vector<model::Sample> samples = {
      {used.field_id, int64_t{3}}, {percent.field_id, 0.25}, {tensor.field_id, 0.5}};
  std::sort(samples.begin(), samples.end(),
            [](const model::Sample& a, const model::Sample& b) { return a.field_id < b.field_id; });
  double v = 0;
  ASSERT_TRUE(CiGpuValue(used, samples, &v));
  EXPECT_EQ(v, 3.0 * 1024 * 1024);
  ASSERT_TRUE(CiGpuValue(percent, samples, &v));
  EXPECT_DOUBLE_EQ(v, 25.0);
  ASSERT_TRUE(CiGpuValue(tensor, samples, &v));
  EXPECT_DOUBLE_EQ(v, 0.5);  // unscaled, as the agent sends it
  EXPECT_FALSE(CiGpuValue(Metric("gpu_temperature"), samples, &v));
  EXPECT_FALSE(CiFramebufferBytes(samples, &v));
  std::vector<model::Sample> text = {{Metric("gpu_temperature").field_id, std::string("hot")}};
  EXPECT_FALSE(CiGpuValue(Metric("gpu_temperature"), text, &v));
}

}  // namespace
}  // namespace nvmlx::fields
