#include "chip_plan.h"

#include <cstdio>

#include "fields/catalog.h"
#include "fields/pm_metrics.h"

namespace nvmlx::pmprobe {
namespace {

struct Row {
  std::string field;  // the DCGM field name, or "" for a metric given by hand
  std::string metric;
  std::string alone;  // "1 pass", "2 passes", or why not
  bool known = false;
  std::string plan;  // "kept", "second pass", "unknown"
};

std::string Passes(size_t n) { return std::to_string(n) + (n == 1 ? " pass" : " passes"); }

}  // namespace

int PrintChipPlan(const cupti::Library& lib, const std::string& chip,
                  std::vector<std::string> metrics) {
  std::vector<Row> rows;
  if (metrics.empty()) {
    for (const fields::PmFieldMetric& m : fields::PmFieldMetrics()) {
      const fields::FieldDef* f = fields::FindById(m.field_id);
      rows.push_back({f != nullptr ? std::string(f->name) : std::to_string(m.field_id),
                      std::string(m.metric), "", false, ""});
    }
  } else {
    for (std::string& m : metrics) rows.push_back({"", std::move(m), "", false, ""});
  }
  const std::vector<uint8_t> no_availability;
  std::vector<std::string> all, known;
  for (Row& r : rows) {
    all.push_back(r.metric);
    Result<cupti::Config> c = lib.BuildConfig(chip, no_availability, {r.metric});
    r.known = c.ok();
    r.alone = c.ok() ? Passes(c->passes) : c.status().message();
    if (c.ok()) known.push_back(r.metric);
  }
  if (known.empty()) {
    std::fprintf(stderr, "pm-probe: chip %s knows none of the metrics (or is not a chip name)\n",
                 chip.c_str());
    return 1;
  }
  // The reader's plan: all at once when that is one pass, else one by one in order.
  size_t plan_image = 0;
  Result<cupti::Config> together = lib.BuildConfig(chip, no_availability, all);
  if (together.ok() && together->passes == 1) {
    for (Row& r : rows) r.plan = "kept";
    plan_image = together->image.size();
  } else {
    std::vector<std::string> kept;
    for (Row& r : rows) {
      if (!r.known) {
        r.plan = "unknown to the chip";
        continue;
      }
      std::vector<std::string> trial = kept;
      trial.push_back(r.metric);
      Result<cupti::Config> c = lib.BuildConfig(chip, no_availability, trial);
      if (c.ok() && c->passes == 1) {
        kept = std::move(trial);
        r.plan = "kept";
        plan_image = c->image.size();
      } else {
        r.plan = c.ok() ? "left out: " + Passes(c->passes) + " with it" : c.status().message();
      }
    }
  }
  Result<cupti::Config> every = lib.BuildConfig(chip, no_availability, known);
  std::printf("### %s\n\n| field | metric | alone | in the one-pass plan |\n|---|---|---|---|\n",
              chip.c_str());
  size_t kept = 0;
  for (const Row& r : rows) {
    kept += r.plan == "kept" ? 1 : 0;
    std::printf("| %s | `%s` | %s | %s |\n", r.field.empty() ? "-" : r.field.c_str(),
                r.metric.c_str(), r.alone.c_str(), r.plan.c_str());
  }
  std::printf(
      "\n%zu of %zu kept in one pass (config image %zu bytes); every known metric "
      "together: %s.\n\n",
      kept, rows.size(), plan_image,
      every.ok() ? Passes(every->passes).c_str() : every.status().message().c_str());
  return 0;
}

}  // namespace nvmlx::pmprobe
