#include "fields/pm_plan.h"

#include <algorithm>

#include "fields/catalog.h"

namespace nvmlx::fields {
namespace {

std::vector<std::string> Names(const std::vector<const PmFieldMetric*>& ms) {
  std::vector<std::string> out;
  out.reserve(ms.size());
  for (const PmFieldMetric* m : ms) out.emplace_back(m->metric);
  return out;
}

std::string FieldName(const PmFieldMetric* m) {
  const FieldDef* f = FindById(m->field_id);
  return f != nullptr ? std::string(f->name) : std::string(m->metric);
}

std::string Passes(size_t n) { return std::to_string(n) + (n == 1 ? " pass" : " passes"); }

// Why `set` is not one pass: the host API's refusal, or its pass count.
std::string WhyNot(const Result<size_t>& r, const std::string& chip, const std::string& beside) {
  if (!r.ok()) return "not available on " + chip + ": " + r.status().ToString();
  return "would need " + Passes(*r) + " on " + chip + beside + " (PM sampling takes one)";
}

// `wanted` in the order given, each metric once, less those known to stall `chip`'s sampler
// (dropped into `plan` with the reason, pinned or not: they would only stall).
std::vector<const PmFieldMetric*> Candidates(const std::vector<const PmFieldMetric*>& wanted,
                                             const std::string& chip, PmPlan* plan) {
  std::vector<const PmFieldMetric*> order;
  for (const PmFieldMetric* m : wanted) {
    if (std::find(order.begin(), order.end(), m) != order.end()) continue;
    if (std::string stall = PmKnownStall(*m, chip); !stall.empty()) {
      plan->dropped.push_back({m, std::move(stall)});
      continue;
    }
    order.push_back(m);
  }
  return order;
}

}  // namespace

PmPlan PlanPmConfigurations(const std::vector<const PmFieldMetric*>& wanted,
                            const std::vector<int>& pinned, const std::string& chip,
                            const PassCountFn& passes) {
  PmPlan plan;
  const std::vector<const PmFieldMetric*> order = Candidates(wanted, chip, &plan);
  auto is_pinned = [&](const PmFieldMetric* m) {
    return std::find(pinned.begin(), pinned.end(), m->field_id) != pinned.end();
  };
  auto one_pass = [&](const std::vector<const PmFieldMetric*>& set, Result<size_t>* r) {
    *r = passes(Names(set));
    return r->ok() && **r == 1;
  };
  auto drop = [&](const PmFieldMetric* m, std::string why) {
    plan.dropped.push_back({m, std::move(why)});
  };

  // A pinned counter that is only configured alone takes the GPU for itself.
  std::vector<const PmFieldMetric*> base;  // pinned, shared: in every configuration
  const PmFieldMetric* solo = nullptr;
  for (const PmFieldMetric* m : order) {
    if (!is_pinned(m)) continue;
    Result<size_t> r = Status::Ok();
    if (m->own_configuration) {
      if (solo != nullptr) {
        drop(m, "pinned beside " + FieldName(solo) +
                    ", and both are only measured in a configuration of their own");
      } else if (one_pass({m}, &r)) {
        solo = m;
      } else {
        drop(m, WhyNot(r, chip, " alone"));
      }
      continue;
    }
    std::vector<const PmFieldMetric*> trial = base;
    trial.push_back(m);
    if (one_pass(trial, &r)) {
      base = std::move(trial);
    } else {
      drop(m, WhyNot(r, chip, base.empty() ? " alone" : " beside the pinned fields before it"));
    }
  }
  if (solo != nullptr) {
    plan.configurations.push_back({solo});
    for (const PmFieldMetric* m : order) {
      if (m == solo || std::any_of(plan.dropped.begin(), plan.dropped.end(),
                                   [&](const PmPlan::Dropped& d) { return d.metric == m; })) {
        continue;
      }
      drop(m, "pinned " + FieldName(solo) +
                  " is measured in a configuration of its own, without gaps, so nothing else is "
                  "measured on this GPU");
    }
    return plan;
  }

  // Shared metrics: as many configurations as they need, each the pinned ones plus what fits.
  std::vector<const PmFieldMetric*> rest;
  for (const PmFieldMetric* m : order) {
    if (!m->own_configuration && !is_pinned(m)) rest.push_back(m);
  }
  const std::string beside_pinned = base.empty() ? "" : " beside the pinned fields";
  while (!rest.empty()) {
    std::vector<const PmFieldMetric*> config = base;
    std::vector<const PmFieldMetric*> left;
    std::vector<const PmFieldMetric*> all = base;
    all.insert(all.end(), rest.begin(), rest.end());
    Result<size_t> r = Status::Ok();
    if (one_pass(all, &r)) {
      config = std::move(all);
    } else {
      for (const PmFieldMetric* m : rest) {
        std::vector<const PmFieldMetric*> trial = config;
        trial.push_back(m);
        if (one_pass(trial, &r)) {
          config = std::move(trial);
        } else if (!r.ok() && r.status().code() == StatusCode::kNotFound) {
          drop(m, WhyNot(r, chip, ""));  // the chip lacks it: no configuration will hold it
        } else {
          left.push_back(m);
        }
      }
    }
    if (config.size() == base.size()) {  // nothing fits even alone (beside the pinned ones)
      for (const PmFieldMetric* m : left) {
        std::vector<const PmFieldMetric*> alone = base;
        alone.push_back(m);
        Result<size_t> why = passes(Names(alone));
        drop(m, WhyNot(why, chip, base.empty() ? " alone" : beside_pinned));
      }
      break;
    }
    plan.configurations.push_back(std::move(config));
    rest = std::move(left);
  }
  if (plan.configurations.empty() && !base.empty()) plan.configurations.push_back(base);

  // Counters measured only alone: a configuration each, unless pinned fields are in every one.
  for (const PmFieldMetric* m : order) {
    if (!m->own_configuration || is_pinned(m)) continue;
    if (!base.empty()) {
      drop(m,
           "the pinned fields are in every configuration, and this counter is only measured "
           "alone (docs/pm-sampling.md §3)");
      continue;
    }
    Result<size_t> r = Status::Ok();
    if (one_pass({m}, &r)) {
      plan.configurations.push_back({m});
    } else {
      drop(m, WhyNot(r, chip, " alone"));
    }
  }
  return plan;
}

}  // namespace nvmlx::fields
