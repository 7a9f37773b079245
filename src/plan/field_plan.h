// FieldPlan: one load of the collectors list (start-up or reload), as every stage uses it. It
// holds the rows that are collected (those nothing collects dropped, each with one "metric not
// enabled" warning), the families in page order, the label rows, what each kind of entity reads
// (fast, slow and profiling fields, split for MIG), and which special families it has (the
// fields/field_roles.h table: the last Xid, the windowed counts, health, P2P), so that no stage
// branches on a field id.
//
// Its life: built whole, once per load, by the daemon (app/), never changed after; handed to
// the collector, which stamps the plan of each round on that round's Snapshot
// (Snapshot::plan). Every renderer (the series model, hence Prometheus and EMF) and the live
// page read the snapshot's plan, so a snapshot is always rendered with the plan it was collected
// under, and a reload never changes what a render in flight points into. A plan is freed when
// the last snapshot (and the collector and daemon) holding it lets go.
//
// Thread-safety: immutable after Build; shared as shared_ptr<const FieldPlan> by any number of
// threads. The pointers it hands out (rows, families, fields) stay valid as long as the plan.
#ifndef NVML_EXPORTER_PLAN_FIELD_PLAN_H_
#define NVML_EXPORTER_PLAN_FIELD_PLAN_H_

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/collectors_csv.h"
#include "config/options.h"
#include "fields/catalog.h"
#include "fields/field_roles.h"
#include "util/status.h"

namespace nvmlx::plan {

// The cadences of one load: the collection interval and the watch groups (dcgm-exporter's YAML
// `collection.watchGroups` / `collections`, config/yaml_config.h): the fields whose collectors-row
// names match a group's patterns (Go path.Match globs) are read every `every`.
struct Cadences {
  std::chrono::milliseconds interval{0};
  std::vector<config::Options::WatchGroup> groups;
};

// Device fields read every `every` (longer than the collection interval) and held in between.
struct PeriodicFields {
  std::chrono::milliseconds every{0};
  std::vector<const fields::FieldDef*> fields;
  bool operator==(const PeriodicFields&) const = default;
};

// What one entity reads. `fast`, `slow` and `profiling` are read every collection; each
// `periodic` set at its own cadence (ascending `every`), on the slow worker.
struct EntityFields {
  std::vector<const fields::FieldDef*> fast;       // cheap per-device reads
  std::vector<const fields::FieldDef*> slow;       // fields::Cost::kSlow reads (own thread)
  std::vector<const fields::FieldDef*> profiling;  // DCGM_FI_PROF_* (GPM or PM sampling)
  std::vector<PeriodicFields> periodic;            // watch groups slower than the interval
  bool operator==(const EntityFields&) const = default;
};

// Which part of a GPU an entity is (collect/mig.h): a GPU as a whole, a MIG-enabled GPU's
// GPU-wide part, or one of its MIG instances.
enum class Scope { kWhole, kMigGpu, kInstance };

// One metric family of the page, in page order.
struct Family {
  const config::CollectorEntry* row = nullptr;  // points into FieldPlan::rows()
  fields::Role role = fields::Role::kSample;
  fields::PodShare pod_share = fields::PodShare::kNone;
  int field_id() const { return row->field->id; }
};

class FieldPlan {
 public:
  // The plan of a parsed collectors list. Rows nothing collects (fields::UncollectedReason) are
  // left out, each with one warning naming `source`, the row's line and the reason. Each plan
  // gets a version of its own (ascending), which the collector's readers compare.
  static std::shared_ptr<const FieldPlan> Build(std::vector<config::CollectorEntry> rows,
                                                std::string_view source = "");
  // The same, with watch groups. A device field a group matches is read at the group's cadence
  // when that is longer than the interval (else every collection, as the page cannot be fresher
  // than its collections); fields that are not device reads (profiling windows, Xids, clock
  // events, health, P2P, labels) keep their own cadence, with one warning each. Errors are
  // config::CheckWatchGroups's (INVALID_ARGUMENT naming the group's file:line), on which
  // dcgm-exporter refuses to start: a group that matches no row of `rows`, a row two groups match.
  static Result<std::shared_ptr<const FieldPlan>> Build(std::vector<config::CollectorEntry> rows,
                                                        std::string_view source,
                                                        const Cadences& cadences);

  FieldPlan(const FieldPlan&) = delete;
  FieldPlan& operator=(const FieldPlan&) = delete;

  uint64_t version() const { return version_; }
  // The collected rows, metric and label, in file order.
  const std::vector<config::CollectorEntry>& rows() const { return rows_; }
  // The metric rows by ascending field id (file order for equal ids), a repeated name once (its
  // first row: a second HELP/TYPE block under one name would be invalid).
  const std::vector<Family>& families() const { return families_; }
  // The label rows by name (byte-wise, as Go's sort.Strings), a repeated name once.
  const std::vector<const config::CollectorEntry*>& label_rows() const { return label_rows_; }
  // The label rows' fields in file order: read once per GPU at start-up.
  const std::vector<const fields::FieldDef*>& label_fields() const { return label_fields_; }
  // What an entity of `scope` reads.
  const EntityFields& For(Scope scope) const { return scopes_[static_cast<size_t>(scope)]; }
  // Whether some metric row has this role (kSample: any plain field).
  bool Has(fields::Role role) const { return has_[static_cast<size_t>(role)]; }
  // The names of the rows left out because no DCGM release we know has them (fields::
  // IsUnknownName; --collectors-unknown-fields=skip), in file order, a repeated name once.
  const std::vector<std::string>& unknown_names() const { return unknown_names_; }
  // Whether a family needs the Xid watcher (NVML events): the last Xid, the counts, health.
  bool NeedsXidWatcher() const;
  // Same rows as `other` (field, name, type and help, in order, and the same unknown names): a
  // reload that changes nothing.
  bool SameRows(const FieldPlan& other) const;
  // How often `field` is read: its watch group's cadence, or 0 for every collection.
  std::chrono::milliseconds EveryOf(const fields::FieldDef* field) const;

 private:
  FieldPlan() = default;

  uint64_t version_ = 0;
  std::vector<config::CollectorEntry> rows_;
  std::vector<std::string> unknown_names_;
  std::vector<Family> families_;
  std::vector<const config::CollectorEntry*> label_rows_;
  std::vector<const fields::FieldDef*> label_fields_;
  std::array<EntityFields, 3> scopes_;
  std::array<bool, fields::kRoleCount> has_{};
  // Fields read at a watch group's cadence (longer than the interval), with it.
  std::vector<std::pair<const fields::FieldDef*, std::chrono::milliseconds>> every_;
};

}  // namespace nvmlx::plan

#endif  // NVML_EXPORTER_PLAN_FIELD_PLAN_H_
