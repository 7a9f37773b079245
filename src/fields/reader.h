// Reads a fixed set of fields from one device: one batched nvmlDeviceGetFieldValues call for the
// fields that have NVML field ids, one dedicated call (memoised per collection) for the rest.
//
// A DeviceReader is built once per (device, field set) and is immutable afterwards; Read() may be
// called from one thread at a time per instance (it is const and keeps no state between calls,
// so distinct instances are fully independent).
#ifndef NVML_EXPORTER_FIELDS_READER_H_
#define NVML_EXPORTER_FIELDS_READER_H_

#include <vector>

#include "fields/catalog.h"

namespace nvmlx::fields {

struct Sample {
  int field_id = 0;
  Value value;
};

struct FieldError {
  int field_id = 0;
  Status status;  // from the NVML seam, naming the function
};

class DeviceReader {
 public:
  // `fields` must have Source::kDevice (others are ignored). Order is kept in the output.
  DeviceReader(const nvml::Library& lib, nvml::Device device, std::vector<const FieldDef*> fields);

  // Appends one Sample per field read successfully, and one FieldError per field that failed
  // (the series is then omitted, as dcgm-exporter does with DCGM's blank values).
  // Samples come out in ascending field id.
  void Read(std::vector<Sample>* samples, std::vector<FieldError>* errors) const;

  const std::vector<const FieldDef*>& fields() const { return fields_; }

 private:
  const nvml::Library& lib_;
  nvml::Device device_;
  std::vector<const FieldDef*> fields_;    // ascending id
  std::vector<const FieldDef*> batched_;   // nvml_field_id > 0
  std::vector<const FieldDef*> direct_;    // read != nullptr
};

}  // namespace nvmlx::fields

#endif  // NVML_EXPORTER_FIELDS_READER_H_
