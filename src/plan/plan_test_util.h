// Test helpers for every stage that takes a field plan (collector, series, EMF, live page tests):
// a collectors row naming a catalog field, and the plan of some rows. Test code only.
//
// Thread-safety: pure functions.
#ifndef NVML_EXPORTER_PLAN_PLAN_TEST_UTIL_H_
#define NVML_EXPORTER_PLAN_PLAN_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/collectors_csv.h"
#include "fields/catalog.h"
#include "model/snapshot.h"
#include "plan/field_plan.h"

namespace nvmlx::plan::testing {

// The row a collectors file line "<name>, <type>, <help>" gives, for the catalog field `name`.
inline config::CollectorEntry Row(std::string_view name,
                                  config::MetricType type = config::MetricType::kGauge,
                                  std::string help = "") {
  config::CollectorEntry e;
  e.field = fields::FindByName(name);
  EXPECT_NE(e.field, nullptr) << name;
  e.name = std::string(name);
  e.type = type;
  e.help = std::move(help);
  return e;
}

// The reader of a hand-made FieldDef in a render test: with it the plan keeps the def's rows as
// it keeps every readable field's. Never called (render tests render hand-built snapshots).
inline Result<model::Value> UnusedRead(fields::ReadContext&) {
  return Internal("a render test's field is not read");
}

// The sample of field `id` in a collected entity, or null.
inline const model::Sample* FindIn(const model::DeviceSnapshot& d, int id) {
  return model::FindSample(d.samples, id);
}

// The plan of `rows`, as the daemon builds it from a file.
inline std::shared_ptr<const FieldPlan> PlanOf(std::vector<config::CollectorEntry> rows) {
  return FieldPlan::Build(std::move(rows), "test.csv");
}

}  // namespace nvmlx::plan::testing

#endif  // NVML_EXPORTER_PLAN_PLAN_TEST_UTIL_H_
