// Sample: one field value read from one device, as plain data. The field reader (fields/) makes
// them, the collector puts them into a Snapshot (model/snapshot.h), the renderers read them.
//
// Thread-safety: plain values with no shared state; a published Snapshot's samples are never
// mutated, so any number of threads may read them.
#ifndef NVML_EXPORTER_MODEL_SAMPLE_H_
#define NVML_EXPORTER_MODEL_SAMPLE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace nvmlx::model {

// The value of one DCGM field: the alternative matches the field's fields::ValueKind
// (kInt64, kDouble, kString).
using Value = std::variant<int64_t, double, std::string>;

struct Sample {
  int field_id = 0;  // DCGM field id (fields/catalog.h)
  Value value;
};

// PM sampling's alternation (docs/pm-sampling.md §3): the fraction of a collection window in which
// a profiling field was measured (1 when its configuration was live throughout; 0 when the value
// served is the one measured when its configuration was last live).
struct FieldCoverage {
  int field_id = 0;
  double ratio = 0;
  size_t configuration = 0;  // which of the GPU's configurations measures it
};

// The sample of `field_id` in `samples`, which are in ascending field id (the reader's and the
// snapshot's order); null when absent.
inline const Sample* FindSample(const std::vector<Sample>& samples, int field_id) {
  auto it = std::lower_bound(samples.begin(), samples.end(), field_id,
                             [](const Sample& s, int id) { return s.field_id < id; });
  return it != samples.end() && it->field_id == field_id ? &*it : nullptr;
}

}  // namespace nvmlx::model

#endif  // NVML_EXPORTER_MODEL_SAMPLE_H_
