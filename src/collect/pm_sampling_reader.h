// PmSamplingReader: the DCGM_FI_PROF_* fields of one GPU from CUPTI's PM sampling
// (docs/pm-sampling.md), for GPUs without GPM (Turing, Ampere, Ada) or when forced by
// --profiling-source=pm-sampling.
//
// Create() maps the requested fields to metrics (fields/pm_metrics.h), asks the host API for a
// configuration of one pass (fields that would need a second pass, or whose metric the chip lacks,
// are dropped with one warning each), and starts sampling every `interval`. Each Read() decodes
// the samples completed since the previous Read() and appends their duration-weighted mean: the
// average over the window since the previous collection, as GpmReader's. A Read() that finds no
// completed sample repeats the last window's values (as GpmReader does within 100 ms), for at
// most `stall_after` (at least 5 sampling intervals): a session that completes no sample for
// longer has stalled and is treated as a loss, below. The H200 showed such a stall (records
// stopped completing under load with two SM cycle counters configured; a new session worked).
//
// Losing the counters is expected (docs/pm-sampling.md §5): another profiler (Nsight Compute,
// DCGM) holds them and Enable answers HARDWARE_BUSY, or a decode fails (CUPTI_ERROR_UNKNOWN was
// seen at a 10 ms interval). Then the session is stopped and disabled, the loss logged once per
// streak and counted (losses()), the fields are absent, and a new session is tried after a
// backoff (1 s doubling to 60 s). While *paused is true (SIGUSR1; SIGUSR2 resumes) the session is
// released so that another profiler can take the counters; Read() appends nothing.
//
// Thread-safety: one thread at a time (the GPU's fast worker). The Library outlives the reader;
// *paused is read atomically.
#ifndef NVML_EXPORTER_COLLECT_PM_SAMPLING_READER_H_
#define NVML_EXPORTER_COLLECT_PM_SAMPLING_READER_H_

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "collect/profiling_source.h"
#include "cupti/cupti.h"

namespace nvmlx::collect {

struct PmSamplingOptions {
  std::chrono::milliseconds interval{500};            // the hardware sampling interval
  std::chrono::milliseconds collect_interval{30000};  // sizes the counter-data image
  const std::atomic<bool>* paused = nullptr;          // null: never paused
  // No completed sample for this long (or 5 intervals, if longer): the session has stalled.
  std::chrono::milliseconds stall_after{2000};
  std::chrono::milliseconds backoff_min{1000};
  std::chrono::milliseconds backoff_max{60000};
};

class PmSamplingReader : public ProfilingSource {
 public:
  // Null (after one warning per field) when no requested field can be served: none mapped, the
  // chip unknown to CUPTI, or no single-pass configuration. A GPU whose counters are busy at
  // start still gets a reader: it retries.
  static std::unique_ptr<PmSamplingReader> Create(
      const cupti::Library& lib, size_t cuda_index, unsigned gpu,
      const std::vector<const fields::FieldDef*>& fields, const PmSamplingOptions& options);
  ~PmSamplingReader() override;

  Status Read(std::vector<model::Sample>* samples,
              std::vector<fields::FieldError>* errors) override;
  Clock::time_point ReadyAt() const override;
  Clock::time_point OnceReadyAt() const override;
  const std::vector<const fields::FieldDef*>& fields() const override { return fields_; }
  std::string_view name() const override { return "pm_sampling"; }
  bool active() const override { return active_.load(); }
  uint64_t losses() const override { return losses_.load(); }

  const std::string& chip() const { return chip_; }
  const std::vector<std::string>& metrics() const { return metrics_; }

 private:
  PmSamplingReader(const cupti::Library& lib, const PmSamplingOptions& options)
      : lib_(lib), options_(options) {}
  // Starts a session; on failure notes the loss and schedules the retry.
  void TryStart(Clock::time_point now);
  void NoteLoss(const Status& why, Clock::time_point now);

  const cupti::Library& lib_;
  PmSamplingOptions options_;
  unsigned gpu_ = 0;
  cupti::PmSampler::Options sampler_options_;
  std::string chip_;
  std::vector<const fields::FieldDef*> fields_;  // ascending id, one metric each
  std::vector<std::string> metrics_;             // per field
  std::vector<double> to_gpm_units_;             // per field
  std::unique_ptr<cupti::PmSampler> sampler_;
  Clock::time_point started_at_{};
  Clock::time_point last_sample_at_{};  // the last window with samples, or the session's start
  Clock::time_point retry_at_{};
  std::chrono::milliseconds backoff_{0};
  bool in_loss_streak_ = false;
  bool logged_pause_ = false;
  std::vector<model::Sample> last_values_;
  std::atomic<bool> active_{false};
  std::atomic<uint64_t> losses_{0};
};

}  // namespace nvmlx::collect

#endif  // NVML_EXPORTER_COLLECT_PM_SAMPLING_READER_H_
