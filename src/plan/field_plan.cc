#include "plan/field_plan.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <string>
#include <utility>

#include "config/yaml_config.h"
#include "util/log.h"

namespace nvmlx::plan {
namespace {

using config::CollectorEntry;
using config::MetricType;

bool IsLabel(const CollectorEntry& row) { return row.type == MetricType::kLabel; }

// The metric rows' fields that `keep` accepts, each once, in file order.
template <typename Keep>
std::vector<const fields::FieldDef*> MetricFields(const std::vector<CollectorEntry>& rows,
                                                  Keep keep) {
  std::vector<const fields::FieldDef*> out;
  for (const CollectorEntry& row : rows) {
    if (IsLabel(row) || !keep(*row.field)) continue;
    if (std::find(out.begin(), out.end(), row.field) == out.end()) out.push_back(row.field);
  }
  return out;
}

std::vector<const fields::FieldDef*> OfScope(const std::vector<const fields::FieldDef*>& all,
                                             fields::MigScope scope) {
  std::vector<const fields::FieldDef*> out;
  for (const fields::FieldDef* f : all) {
    if (fields::MigScopeOf(*f) == scope) out.push_back(f);
  }
  return out;
}

EntityFields OfScope(const EntityFields& all, fields::MigScope scope) {
  EntityFields out{
      OfScope(all.fast, scope), OfScope(all.slow, scope), OfScope(all.profiling, scope), {}};
  for (const PeriodicFields& p : all.periodic) {
    PeriodicFields mine{p.every, OfScope(p.fields, scope)};
    if (!mine.fields.empty()) out.periodic.push_back(std::move(mine));
  }
  return out;
}

using Every = std::map<const fields::FieldDef*, std::chrono::milliseconds>;

// The cadence of each row a group matches, once config::CheckWatchGroups has passed them (no
// row in two groups, no group without a row). Only cadences longer than the interval are kept:
// a faster one could not make the page fresher than its collections.
Result<Every> MatchGroups(const std::vector<CollectorEntry>& rows, std::string_view source,
                          const Cadences& cadences) {
  if (Status st = config::CheckWatchGroups(cadences.groups, rows, source); !st.ok()) return st;
  Every every;
  for (const config::Options::WatchGroup& group : cadences.groups) {
    if (group.every <= cadences.interval) continue;
    for (const CollectorEntry& row : rows) {
      const bool matched = std::any_of(
          group.patterns.begin(), group.patterns.end(),
          [&row](const std::string& p) { return config::MatchFieldPattern(p, row.name); });
      if (matched) every[row.field] = group.every;
    }
  }
  return every;
}

bool IsPeriodicDeviceField(const fields::FieldDef& f) {
  return f.source == fields::Source::kDevice && (f.read != nullptr || f.nvml_field_id != 0);
}

// The device fields read at a watch group's cadence, one set per cadence (ascending), each set
// by field id; `*every_out` gets each such field's cadence. Other matched fields keep their own
// cadence, with a warning.
std::vector<PeriodicFields> PeriodicOf(
    const std::vector<CollectorEntry>& kept, const Every& every, std::string_view source,
    std::vector<std::pair<const fields::FieldDef*, std::chrono::milliseconds>>* every_out) {
  std::vector<PeriodicFields> out;
  for (const auto& [field, cadence] : every) {
    const bool kept_metric = std::any_of(kept.begin(), kept.end(), [f = field](const auto& r) {
      return r.field == f && !IsLabel(r);
    });
    if (!kept_metric) continue;  // a label (read once at start), or not collected (warned)
    if (fields::RoleOf(*field) != fields::Role::kSample || !IsPeriodicDeviceField(*field)) {
      log::Warn("watch group cadence has no effect on this field: it is not a device read",
                {{"file", std::string(source)}, {"field", std::string(field->name)}});
      continue;
    }
    every_out->emplace_back(field, cadence);
    auto slot = std::find_if(out.begin(), out.end(),
                             [c = cadence](const PeriodicFields& p) { return p.every == c; });
    if (slot == out.end()) slot = out.insert(out.end(), PeriodicFields{cadence, {}});
    slot->fields.push_back(field);
  }
  std::sort(out.begin(), out.end(),
            [](const PeriodicFields& a, const PeriodicFields& b) { return a.every < b.every; });
  for (PeriodicFields& p : out) {
    std::sort(p.fields.begin(), p.fields.end(),
              [](const fields::FieldDef* a, const fields::FieldDef* b) { return a->id < b->id; });
  }
  return out;
}

}  // namespace

std::shared_ptr<const FieldPlan> FieldPlan::Build(std::vector<CollectorEntry> rows,
                                                  std::string_view source) {
  Result<std::shared_ptr<const FieldPlan>> plan = Build(std::move(rows), source, Cadences{});
  return std::move(plan).value();  // without watch groups nothing can fail
}

Result<std::shared_ptr<const FieldPlan>> FieldPlan::Build(std::vector<CollectorEntry> rows,
                                                          std::string_view source,
                                                          const Cadences& cadences) {
  Result<Every> every = MatchGroups(rows, source, cadences);
  if (!every.ok()) return every.status();
  static std::atomic<uint64_t> next_version{1};
  std::shared_ptr<FieldPlan> plan(new FieldPlan());
  plan->version_ = next_version.fetch_add(1);
  for (CollectorEntry& row : rows) {
    if (row.field == nullptr) continue;  // a parsed row always has one
    if (fields::IsUnknownName(*row.field)) {
      // The parser has already warned, naming file:line; the page lists it.
      plan->unknown_names_.push_back(row.name);
      continue;
    }
    const std::string_view why = fields::UncollectedReason(*row.field, IsLabel(row));
    if (!why.empty()) {
      // As DCGM's "metric not enabled": said once, instead of a family that never has series.
      log::Warn("skipping collectors row: metric not enabled", {{"file", std::string(source)},
                                                                {"line", std::to_string(row.line)},
                                                                {"field", row.name},
                                                                {"reason", std::string(why)}});
      continue;
    }
    plan->rows_.push_back(std::move(row));
  }
  const std::vector<CollectorEntry>& kept = plan->rows_;

  std::vector<const CollectorEntry*> metric_rows;
  for (const CollectorEntry& row : kept) {
    if (IsLabel(row)) {
      plan->label_rows_.push_back(&row);
      plan->label_fields_.push_back(row.field);
      continue;
    }
    metric_rows.push_back(&row);
    plan->has_[static_cast<size_t>(fields::RoleOf(*row.field))] = true;
  }
  std::stable_sort(
      metric_rows.begin(), metric_rows.end(),
      [](const CollectorEntry* a, const CollectorEntry* b) { return a->field->id < b->field->id; });
  for (const CollectorEntry* row : metric_rows) {
    const bool seen = std::any_of(plan->families_.begin(), plan->families_.end(),
                                  [row](const Family& f) { return f.row->name == row->name; });
    if (!seen) {
      plan->families_.push_back(
          {row, fields::RoleOf(*row->field), fields::PodShareOf(*row->field)});
    }
  }
  std::vector<const CollectorEntry*>& labels = plan->label_rows_;
  std::stable_sort(
      labels.begin(), labels.end(),
      [](const CollectorEntry* a, const CollectorEntry* b) { return a->name < b->name; });
  labels.erase(std::unique(labels.begin(), labels.end(),
                           [](const CollectorEntry* a, const CollectorEntry* b) {
                             return a->name == b->name;
                           }),
               labels.end());

  auto readable_device_field = [](fields::Cost cost) {
    return [cost](const fields::FieldDef& f) {
      return f.source == fields::Source::kDevice && f.cost == cost &&
             (f.read != nullptr || f.nvml_field_id != 0);
    };
  };
  EntityFields whole;
  whole.periodic = PeriodicOf(kept, *every, source, &plan->every_);
  auto each_collection = [&plan](auto keep) {
    return [keep, &plan](const fields::FieldDef& f) {
      return keep(f) && plan->EveryOf(&f) == std::chrono::milliseconds{0};
    };
  };
  whole.fast = MetricFields(kept, each_collection(readable_device_field(fields::Cost::kFast)));
  whole.slow = MetricFields(kept, each_collection(readable_device_field(fields::Cost::kSlow)));
  whole.profiling = MetricFields(kept, [](const fields::FieldDef& f) {
    return f.source == fields::Source::kProfiling && f.gpm_metric_id != 0;
  });
  plan->scopes_[static_cast<size_t>(Scope::kMigGpu)] = OfScope(whole, fields::MigScope::kGpu);
  plan->scopes_[static_cast<size_t>(Scope::kInstance)] =
      OfScope(whole, fields::MigScope::kInstance);
  plan->scopes_[static_cast<size_t>(Scope::kWhole)] = std::move(whole);
  return std::shared_ptr<const FieldPlan>(std::move(plan));
}

std::chrono::milliseconds FieldPlan::EveryOf(const fields::FieldDef* field) const {
  for (const auto& [f, every] : every_) {
    if (f == field) return every;
  }
  return std::chrono::milliseconds{0};
}

bool FieldPlan::NeedsXidWatcher() const {
  for (int r = 0; r < fields::kRoleCount; ++r) {
    const auto role = static_cast<fields::Role>(r);
    if (Has(role) && fields::NeedsXidWatcher(role)) return true;
  }
  return false;
}

bool FieldPlan::SameRows(const FieldPlan& other) const {
  // The skipped names too: a reload that only adds or drops one changes the page's list.
  if (unknown_names_ != other.unknown_names_) return false;
  return std::equal(rows_.begin(), rows_.end(), other.rows_.begin(), other.rows_.end(),
                    [](const CollectorEntry& a, const CollectorEntry& b) {
                      return a.field == b.field && a.name == b.name && a.type == b.type &&
                             a.help == b.help;
                    });
}

}  // namespace nvmlx::plan
