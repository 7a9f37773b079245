#include "plan/field_plan.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <utility>

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
  return {OfScope(all.fast, scope), OfScope(all.slow, scope), OfScope(all.profiling, scope)};
}

}  // namespace

std::shared_ptr<const FieldPlan> FieldPlan::Build(std::vector<CollectorEntry> rows,
                                                  std::string_view source) {
  static std::atomic<uint64_t> next_version{1};
  std::shared_ptr<FieldPlan> plan(new FieldPlan());
  plan->version_ = next_version.fetch_add(1);
  for (CollectorEntry& row : rows) {
    if (row.field == nullptr) continue;  // a parsed row always has one
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
  whole.fast = MetricFields(kept, readable_device_field(fields::Cost::kFast));
  whole.slow = MetricFields(kept, readable_device_field(fields::Cost::kSlow));
  whole.profiling = MetricFields(kept, [](const fields::FieldDef& f) {
    return f.source == fields::Source::kProfiling && f.gpm_metric_id != 0;
  });
  plan->scopes_[static_cast<size_t>(Scope::kMigGpu)] = OfScope(whole, fields::MigScope::kGpu);
  plan->scopes_[static_cast<size_t>(Scope::kInstance)] =
      OfScope(whole, fields::MigScope::kInstance);
  plan->scopes_[static_cast<size_t>(Scope::kWhole)] = std::move(whole);
  return plan;
}

bool FieldPlan::NeedsXidWatcher() const {
  for (fields::Role role :
       {fields::Role::kLastXid, fields::Role::kXidCounts, fields::Role::kHealthStatus}) {
    if (Has(role) && fields::NeedsXidWatcher(role)) return true;
  }
  return false;
}

bool FieldPlan::SameRows(const FieldPlan& other) const {
  return std::equal(rows_.begin(), rows_.end(), other.rows_.begin(), other.rows_.end(),
                    [](const CollectorEntry& a, const CollectorEntry& b) {
                      return a.field == b.field && a.name == b.name && a.type == b.type &&
                             a.help == b.help;
                    });
}

}  // namespace nvmlx::plan
