// Sample: one field value read from one device, as plain data. The field reader (fields/) makes
// them, the collector puts them into a Snapshot (model/snapshot.h), the renderers read them.
//
// Thread-safety: plain values with no shared state; a published Snapshot's samples are never
// mutated, so any number of threads may read them.
#ifndef NVML_EXPORTER_MODEL_SAMPLE_H_
#define NVML_EXPORTER_MODEL_SAMPLE_H_

#include <cstdint>
#include <string>
#include <variant>

namespace nvmlx::model {

// The value of one DCGM field: the alternative matches the field's fields::ValueKind
// (kInt64, kDouble, kString).
using Value = std::variant<int64_t, double, std::string>;

struct Sample {
  int field_id = 0;  // DCGM field id (fields/field_ids.h, fields/catalog.h)
  Value value;
};

}  // namespace nvmlx::model

#endif  // NVML_EXPORTER_MODEL_SAMPLE_H_
