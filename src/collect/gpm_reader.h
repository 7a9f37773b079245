// GpmReader: the DCGM_FI_PROF_* fields of one GPU, from NVML GPM (docs/nvml.md §3); one of the
// two ProfilingSources (collect/profiling_source.h).
//
// GPM metrics are averages between two samples, so the reader keeps two sample buffers that
// alternate: each Read() fills the older one with a fresh sample and computes every field from
// (previous, current), i.e. the average over the window since the previous collection, the way
// DCGM pairs its newest sample with one a watch interval older. Create() takes the priming
// sample, so the first collection one interval later already has values.
//
// GPM refreshes its counters every 100 ms: a Read() less than kMinWindow after the previous
// sample takes no sample and repeats the values of the last window instead (so a fast -c or the
// immediate first publish neither reads noise nor makes the series flap).
//
// Thread-safety: one thread at a time per instance (the collector's fast loop); instances are
// independent. The Library must outlive the reader.
#ifndef NVML_EXPORTER_COLLECT_GPM_READER_H_
#define NVML_EXPORTER_COLLECT_GPM_READER_H_

#include <array>
#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include "collect/profiling_source.h"
#include "fields/reader.h"
#include "nvml/nvml.h"

namespace nvmlx::collect {

class GpmReader : public ProfilingSource {
 public:
  static constexpr std::chrono::milliseconds kMinWindow{100};

  // The fields of `fields` that have a GPM metric (others are ignored). Returns null when there
  // are none, or, after one warning per field ("metric not enabled", as DCGM logs it), when the
  // device does not support GPM or its sample buffers cannot be allocated. `gpu` is the NVML
  // index, for the log lines only.
  // With `gpu_instance_id`, `device` is the parent GPU of a MIG instance and the samples are
  // taken for that GPU instance (nvmlGpmMigSampleGet: DCGM's GPU_I entity level).
  static std::unique_ptr<GpmReader> Create(const nvml::Library& lib, nvml::Device device,
                                           unsigned gpu,
                                           const std::vector<const fields::FieldDef*>& fields,
                                           std::optional<unsigned> gpu_instance_id = std::nullopt);

  // Takes one sample and appends the fields computed from the previous one (ascending field
  // id); a field whose metric failed becomes a FieldError. The first successful sample only
  // primes. A failure of a whole GPM call (sample or metrics) is the returned Status: no values
  // this time, and the previous good sample stays the baseline.
  Status Read(std::vector<model::Sample>* samples,
              std::vector<fields::FieldError>* errors) override;

  // The earliest time at which a Read() measures a full window (and does not repeat).
  Clock::time_point ReadyAt() const override { return last_sample_time_ + kMinWindow; }
  // --once: a window of kOnceWindow after the priming sample.
  Clock::time_point OnceReadyAt() const override { return ReadyAt() - kMinWindow + kOnceWindow; }
  static constexpr std::chrono::milliseconds kOnceWindow{150};
  const std::vector<const fields::FieldDef*>& fields() const override { return fields_; }
  std::string_view name() const override { return "gpm"; }

 private:
  GpmReader(const nvml::Library& lib, nvml::Device device, std::optional<unsigned> gi)
      : lib_(lib), device_(device), gpu_instance_id_(gi) {}
  Status TakeSample(const nvml::GpmSample& sample) const;

  const nvml::Library& lib_;
  nvml::Device device_;
  std::optional<unsigned> gpu_instance_id_;
  std::vector<const fields::FieldDef*> fields_;  // ascending id, gpm_metric_id > 0
  // Distinct GPM metric ids, ascending, and for each field its index in metric_ids_.
  std::vector<unsigned> metric_ids_;
  std::vector<size_t> field_metric_;
  std::array<nvml::GpmSample, 2> samples_;
  int current_ = 0;  // index of the latest good sample (when has_previous_)
  bool has_previous_ = false;
  Clock::time_point last_sample_time_{};
  std::vector<model::Sample> last_values_;  // repeated when a Read() comes too soon
};

}  // namespace nvmlx::collect

#endif  // NVML_EXPORTER_COLLECT_GPM_READER_H_
