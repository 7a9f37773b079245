// SeriesModel: every series one collection gives, as data: the label sets (each a list of
// (name, value) in the exact order a renderer prints them) and the families in output order,
// each with its points (label set, value). BuildSeries (render/series.h) is the only code that
// fills one; the Prometheus text writer (render/prometheus.h) and the EMF writer
// (render/emf.h) only read it, so a label is added in one place and both outputs get it.
//
// Why label sets are separate from families: the label part is ~80% of a Prometheus line and a
// device's label set is shared by every family of that device, so the Prometheus writer renders
// each label set's text once; the EMF writer sends one document per label set.
//
// Which writer takes a point: SeriesPoint::writers. Some series exist on one output only (see
// BuildSeries): our own families (nvml_exporter_*) and dcgm-exporter's per-pod series are
// Prometheus-only; a shared GPU's per-pod-attribute copies of GPU_UTIL/FB_USED are EMF-only.
//
// Storage: the label names and values are string_views into the Snapshot and SeriesOptions the
// model was built from, or into the model's own arena (numbers, copies): a model is valid while
// those two live, and must not outlive them. Clear() keeps the capacity for the next build.
//
// Thread-safety: a plain value; concurrent reads are safe, writes need external sync.
#ifndef NVML_EXPORTER_RENDER_SERIES_MODEL_H_
#define NVML_EXPORTER_RENDER_SERIES_MODEL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/collectors_csv.h"

namespace nvmlx::render {

// Owned labels, for code that keeps or edits a label set (the EMF writer, its rules).
using Labels = std::vector<std::pair<std::string, std::string>>;

// Looks a label up by name in a group's labels (linear: a group has ~15).
const std::string* FindLabel(const Labels& labels, std::string_view name);

// One label of a model's label set: name, value (unescaped).
using LabelView = std::pair<std::string_view, std::string_view>;

// Which writers take a point (bit mask).
enum SeriesWriters : uint8_t {
  kToPrometheus = 1,
  kToEmf = 2,
  kToBoth = kToPrometheus | kToEmf,
};

// One value of one series.
struct SeriesPoint {
  // kInt: %d. kUint: an unsigned count (%d of the unsigned value). kDouble: Go's %f (6 decimals).
  // kMillis: an integer number of milliseconds shown as seconds with exactly 3 decimals.
  enum class Kind : uint8_t { kInt, kUint, kDouble, kMillis };

  uint32_t label_set = 0;  // index into SeriesModel's label sets
  Kind kind = Kind::kInt;
  uint8_t writers = kToBoth;
  union {
    int64_t int_value;    // kInt, kMillis
    uint64_t uint_value;  // kUint
    double double_value;  // kDouble
  };

  SeriesPoint() : int_value(0) {}
  static SeriesPoint Int(uint32_t set, int64_t v, uint8_t writers = kToBoth) {
    SeriesPoint p = Make(set, Kind::kInt, writers);
    p.int_value = v;
    return p;
  }
  static SeriesPoint Uint(uint32_t set, uint64_t v, uint8_t writers = kToPrometheus) {
    SeriesPoint p = Make(set, Kind::kUint, writers);
    p.uint_value = v;
    return p;
  }
  static SeriesPoint Double(uint32_t set, double v, uint8_t writers = kToBoth) {
    SeriesPoint p = Make(set, Kind::kDouble, writers);
    p.double_value = v;
    return p;
  }
  static SeriesPoint Millis(uint32_t set, int64_t ms, uint8_t writers = kToPrometheus) {
    SeriesPoint p = Make(set, Kind::kMillis, writers);
    p.int_value = ms;
    return p;
  }

  bool is_integer() const { return kind != Kind::kDouble; }
  // The value as a double (integers converted).
  double AsDouble() const {
    switch (kind) {
      case Kind::kDouble:
        return double_value;
      case Kind::kUint:
        return static_cast<double>(uint_value);
      case Kind::kMillis:
        return static_cast<double>(int_value) / 1000.0;
      case Kind::kInt:
        break;
    }
    return static_cast<double>(int_value);
  }

 private:
  static SeriesPoint Make(uint32_t set, Kind kind, uint8_t writers) {
    SeriesPoint p;
    p.label_set = set;
    p.kind = kind;
    p.writers = writers;
    return p;
  }
};

// One metric family: its HELP/TYPE and its points, in output order.
struct SeriesFamily {
  std::string_view name;
  std::string_view help;
  std::string_view type;  // "gauge", "counter"
  // The collectors row (name, type, field and unit) of a DCGM family; null for our own
  // families (nvml_exporter_*), which only the Prometheus page carries.
  const config::CollectorEntry* entry = nullptr;
  // Our own family that CloudWatch gets too (its points written kToEmf), in this CloudWatch unit;
  // empty: Prometheus only. The one such family is energy per pod (render/pod_energy.h).
  std::string_view emf_unit;
  std::vector<SeriesPoint> points;
};

class SeriesModel {
 public:
  SeriesModel() = default;
  SeriesModel(SeriesModel&&) = default;
  SeriesModel& operator=(SeriesModel&&) = default;
  SeriesModel(const SeriesModel&) = delete;
  SeriesModel& operator=(const SeriesModel&) = delete;

  // Families in output order (Prometheus: the page's order).
  std::vector<SeriesFamily> families;

  size_t label_set_count() const { return set_begin_.size(); }
  std::span<const LabelView> label_set(size_t i) const {
    const size_t end = i + 1 < set_begin_.size() ? set_begin_[i + 1] : labels_.size();
    return {labels_.data() + set_begin_[i], end - set_begin_[i]};
  }
  // Every label of every set, set after set (label_set(i) is a slice of it).
  size_t label_count() const { return labels_.size(); }

  // --- For the builder (render/series.cc, render/pod_families.cc). ---

  // Empties the model, keeping its buffers (the families' point vectors included: a model
  // rebuilt every collection allocates nothing once it has seen its largest page).
  void Clear();
  // Appends a family with no points (reusing a point vector Clear() kept).
  SeriesFamily& AddFamily();
  // Adds a label set and returns its index. `labels` must not point into this model's sets.
  uint32_t AddLabelSet(std::span<const LabelView> labels);
  // A copy of `s` in the model's arena (stable until Clear()).
  std::string_view Intern(std::string_view s);
  std::string_view InternInt(int64_t v);

 private:
  std::vector<std::vector<SeriesPoint>> spare_points_;  // emptied by Clear(), for AddFamily
  std::vector<LabelView> labels_;
  std::vector<uint32_t> set_begin_;  // set i is labels_[set_begin_[i], set_begin_[i + 1])
  // Arena: fixed chunks, never reallocated, so views into them stay valid as it grows.
  struct Chunk {
    std::unique_ptr<char[]> data;
    size_t size = 0;
  };
  std::vector<Chunk> chunks_;
  size_t chunk_ = 0;  // the chunk being filled
  size_t used_ = 0;   // bytes used in chunks_[chunk_]
};

}  // namespace nvmlx::render

#endif  // NVML_EXPORTER_RENDER_SERIES_MODEL_H_
