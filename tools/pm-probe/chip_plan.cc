#include "chip_plan.h"

#include <algorithm>
#include <cstdio>

#include "fields/catalog.h"
#include "fields/pm_metrics.h"
#include "fields/pm_plan.h"

namespace nvmlx::pmprobe {
namespace {

struct Row {
  std::string field;  // the DCGM field name, or "-" for a metric given by hand
  const fields::PmFieldMetric* metric = nullptr;
  std::string alone;  // "1 pass", "2 passes", or why not
  bool known = false;
  std::string plan;  // "configuration N" or why not
};

std::string Passes(size_t n) { return std::to_string(n) + (n == 1 ? " pass" : " passes"); }

}  // namespace

int PrintChipPlan(const cupti::Library& lib, const std::string& chip,
                  std::vector<std::string> metrics) {
  // Metrics given by hand share passes like the exporter's shared ones (no field, no pin).
  std::vector<fields::PmFieldMetric> by_hand;
  by_hand.reserve(metrics.size());
  for (const std::string& m : metrics) by_hand.push_back({0, m, 1.0});
  std::vector<Row> rows;
  if (metrics.empty()) {
    for (const fields::PmFieldMetric& m : fields::PmFieldMetrics()) {
      const fields::FieldDef* f = fields::FindById(m.field_id);
      rows.push_back(
          {f != nullptr ? std::string(f->name) : std::to_string(m.field_id), &m, "", false, ""});
    }
  } else {
    for (const fields::PmFieldMetric& m : by_hand) rows.push_back({"-", &m, "", false, ""});
  }
  const std::vector<uint8_t> no_availability;
  auto pass_count = [&](const std::vector<std::string>& names) -> Result<size_t> {
    Result<cupti::Config> c = lib.BuildConfig(chip, no_availability, names);
    if (!c.ok()) return c.status();
    return c->passes;
  };
  std::vector<const fields::PmFieldMetric*> wanted;
  std::vector<std::string> known;
  for (Row& r : rows) {
    wanted.push_back(r.metric);
    Result<size_t> alone = pass_count({std::string(r.metric->metric)});
    r.known = alone.ok();
    r.alone = alone.ok() ? Passes(*alone) : alone.status().message();
    if (alone.ok()) known.emplace_back(r.metric->metric);
  }
  if (known.empty()) {
    std::fprintf(stderr, "pm-probe: chip %s knows none of the metrics (or is not a chip name)\n",
                 chip.c_str());
    return 1;
  }
  // The reader's plan (fields/pm_plan.h): shared configurations, then the pipes alone.
  const fields::PmPlan plan = fields::PlanPmConfigurations(wanted, {}, chip, pass_count);
  for (size_t c = 0; c < plan.configurations.size(); ++c) {
    for (const fields::PmFieldMetric* m : plan.configurations[c]) {
      for (Row& r : rows) {
        if (r.metric == m) r.plan = "configuration " + std::to_string(c + 1);
      }
    }
  }
  for (const fields::PmPlan::Dropped& d : plan.dropped) {
    for (Row& r : rows) {
      if (r.metric == d.metric) r.plan = "not served: " + d.why;
    }
  }
  Result<size_t> every = pass_count(known);
  std::printf("### %s\n\n| field | metric | alone | in the exporter's plan |\n|---|---|---|---|\n",
              chip.c_str());
  size_t served = 0;
  for (const Row& r : rows) {
    served += r.plan.rfind("configuration", 0) == 0 ? 1 : 0;
    std::printf("| %s | `%s` | %s | %s |\n", r.field.c_str(), std::string(r.metric->metric).c_str(),
                r.alone.c_str(), r.plan.c_str());
  }
  std::printf("\n%zu of %zu served in %zu configuration%s (", served, rows.size(),
              plan.configurations.size(), plan.configurations.size() == 1 ? "" : "s");
  for (size_t c = 0; c < plan.configurations.size(); ++c) {
    std::printf("%s%zu: %zu metric%s", c == 0 ? "" : "; ", c + 1, plan.configurations[c].size(),
                plan.configurations[c].size() == 1 ? "" : "s");
  }
  std::printf("); every known metric together: %s.\n\n",
              every.ok() ? Passes(*every).c_str() : every.status().message().c_str());
  return 0;
}

}  // namespace nvmlx::pmprobe
