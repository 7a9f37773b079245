// ProfilingSource: what serves the DCGM_FI_PROF_* fields of one GPU, one window per collection.
// Two implementations: GpmReader (NVML GPM, Hopper and later) and PmSamplingReader (CUPTI PM
// sampling, Turing and later; docs/pm-sampling.md). The collector picks one per GPU
// (SelectProfilingSource below, --profiling-source) and reads it on that GPU's fast worker.
//
// Contract shared by both: each Read() appends every field it serves as the average over the
// window since the previous Read(), in the catalog's units (ratios 0-1, bytes/s), ascending field
// id; a field that failed becomes a FieldError; a failed whole read is the returned Status and
// nothing is appended. Thread-safety: one thread at a time per instance; instances independent.
#ifndef NVML_EXPORTER_COLLECT_PROFILING_SOURCE_H_
#define NVML_EXPORTER_COLLECT_PROFILING_SOURCE_H_

#include <chrono>
#include <cstdint>
#include <string_view>
#include <vector>

#include "fields/reader.h"
#include "model/sample.h"
#include "util/status.h"

namespace nvmlx::collect {

// --profiling-source.
enum class ProfilingChoice {
  kAuto,        // GPM where the GPU has it, else PM sampling when CUPTI is loaded
  kGpm,         // GPM only
  kPmSampling,  // PM sampling only (on Hopper too: how it is validated against GPM)
  kNone,        // no DCGM_FI_PROF_* fields
};

class ProfilingSource {
 public:
  using Clock = std::chrono::steady_clock;
  virtual ~ProfilingSource() = default;
  virtual Status Read(std::vector<model::Sample>* samples,
                      std::vector<fields::FieldError>* errors) = 0;
  // The earliest time at which a Read() gives values for a full window (the collector's early
  // second round at start-up waits for it).
  virtual Clock::time_point ReadyAt() const = 0;
  // When --once should read so that its window holds data.
  virtual Clock::time_point OnceReadyAt() const = 0;
  // The fields it serves (ascending id).
  virtual const std::vector<const fields::FieldDef*>& fields() const = 0;
  virtual std::string_view name() const = 0;  // "gpm", "pm_sampling"
  // PM sampling only: sampling runs (false: paused, or lost and waiting to retry), and how many
  // times it was lost (enable refused, decode failed). GPM: always true and 0.
  virtual bool active() const { return true; }
  virtual uint64_t losses() const { return 0; }
  // PM sampling only: for each served field, the fraction of the last window in which it was
  // measured (below 1 when configurations alternate), and how many configurations alternate.
  // GPM: nothing appended, one.
  virtual void Coverage(std::vector<model::FieldCoverage>* /*out*/) const {}
  virtual size_t configurations() const { return 1; }
};

}  // namespace nvmlx::collect

#endif  // NVML_EXPORTER_COLLECT_PROFILING_SOURCE_H_
