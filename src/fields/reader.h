// Reads a fixed set of fields from one device: one batched nvmlDeviceGetFieldValues call for the
// fields that have NVML field ids, one dedicated call (memoised per collection) for the rest.
//
// A DeviceReader is built once per (device, field set) and is immutable afterwards; Read() may be
// called from one thread at a time per instance. Read() is const and keeps no state between calls
// except the previous raw sample of rate fields (FieldDef::rate: the NVLink bandwidth fields,
// total and per link), which lives in a mutable member covered by that one-thread rule;
// distinct instances are fully independent.
#ifndef NVML_EXPORTER_FIELDS_READER_H_
#define NVML_EXPORTER_FIELDS_READER_H_

#include <cstdint>
#include <vector>

#include "fields/catalog.h"
#include "model/sample.h"

namespace nvmlx::fields {

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
  // Samples come out in ascending field id. A rate field gives neither a Sample nor an error on
  // the first Read() (baseline only), nor when its counter went backwards (driver reload).
  // After a GPU_IS_LOST answer the remaining dedicated calls of this Read() are skipped and
  // reported with that same status, so a GPU that fell off the bus is not hammered.
  void Read(std::vector<model::Sample>* samples, std::vector<FieldError>* errors) const;

  const std::vector<const FieldDef*>& fields() const { return fields_; }

 private:
  const nvml::Library& lib_;
  nvml::Device device_;
  std::vector<const FieldDef*> fields_;   // ascending id
  std::vector<const FieldDef*> batched_;  // nvml_field_id > 0
  std::vector<const FieldDef*> direct_;   // read != nullptr

  // The batched request: one element per distinct (fieldId, scopeId); copied on each Read().
  std::vector<nvmlFieldValue_t> request_;
  // Parallel to fields_: index into request_ (-1: dedicated call), partner index for rates.
  std::vector<int> slot_;
  std::vector<int> partner_slot_;
  struct RateState {
    bool has_prev = false;
    bool driver_time = false;  // timestamps from nvmlFieldValue_t (true) or steady_clock
    uint64_t sum = 0;
    int64_t time_us = 0;
  };
  mutable std::vector<RateState> rate_state_;  // parallel to fields_; see the class comment
};

}  // namespace nvmlx::fields

#endif  // NVML_EXPORTER_FIELDS_READER_H_
