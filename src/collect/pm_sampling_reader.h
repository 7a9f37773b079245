// PmSamplingReader: the DCGM_FI_PROF_* fields of one GPU from CUPTI's PM sampling
// (docs/pm-sampling.md), for GPUs without GPM (Turing, Ampere, Ada) or when forced by
// --profiling-source=pm-sampling.
//
// Create() maps the requested fields to metrics (fields/pm_metrics.h) and plans the
// configurations that hold them (fields/pm_plan.h): the fields that share one pass, then a
// configuration for each that needs its own (the tensor, FP32 and FP64 pipe counters) or did not
// fit; fields no configuration holds are dropped with one warning each. With one configuration the
// session runs continuously. With more, the reader alternates: each configuration is live for
// `dwell` collections (enough for three samples), then the session is stopped and the next one
// started, as DCGM multiplexes its metric groups. Each Read() decodes the samples the live
// configuration completed since the previous Read() and appends, for every field, the
// duration-weighted mean over the last time its configuration was live; coverage() says which
// fraction of this window each field was measured (0: the value is the one measured when its
// configuration was last live). Pinned fields (PmSamplingOptions::pinned) are in every
// configuration, so they are measured without gaps.
//
// Switching less where the values allow it: a pipe field (tensor, FP32, FP64) is never above SM
// activity or GR engine activity (fields::PmFieldMetric::bounded_by). When the live configuration
// measured such a bound at or below fields::kPmIdleBoundPercent in every window of its dwell, the
// configuration holding only bounded fields is not switched to: its fields are served as 0 and
// count as measured (coverage) while the bound stays there. An idle GPU thus keeps one session
// and pays no switch (each costs 0.1-0.2 s of the driver's CPU on GH100; docs/pm-sampling.md §6);
// the first window whose bound rises ends the hold, and the alternation resumes at the end of
// that dwell.
//
// Steady hold (PmSamplingOptions::steady_hold, off at 0): under a load that does not change, a
// configuration holding only bounded fields is not switched to either, for up to steady_hold
// after it last completed samples, while every bound the live configuration measures keeps its
// dwell mean within fields::kPmSteadyBoundPoints of the mean it had in the dwell just before that
// configuration was last switched to (Slot::reference). Its fields keep serving the values
// measured then, with coverage 0 (not measured in the window). A bound that moves, a value
// lost, or the hold running out makes the configuration live at the end of that dwell. A
// configuration started other than by a regular switch (the first start, after a loss, on
// resume), or whose fields were held at 0 by an idle bound since, has no reference and is not
// steady-held until it is switched to again.
//
// A configuration that completes no sample for `stall_after` (at least 5 sampling intervals) of
// its live time has stalled, as the H200 did with the tensor-pipe counter beside others; a failed
// call (another profiler holds the counters: HARDWARE_BUSY; a decode error) is a loss too. A lost
// configuration is logged once per streak and counted (losses()), its fields are absent, and it
// is tried again after a backoff (1 s doubling to 60 s) while the other configurations go on.
// While *paused is true (SIGUSR1; SIGUSR2 resumes) the session is released so that another
// profiler can take the counters; Read() appends nothing.
//
// Thread-safety: one thread at a time (the GPU's fast worker). The Library outlives the reader;
// *paused is read atomically.
#ifndef NVML_EXPORTER_COLLECT_PM_SAMPLING_READER_H_
#define NVML_EXPORTER_COLLECT_PM_SAMPLING_READER_H_

#include <atomic>
#include <chrono>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collect/profiling_source.h"
#include "cupti/cupti.h"

namespace nvmlx::collect {

struct PmSamplingOptions {
  std::chrono::milliseconds interval{500};            // the hardware sampling interval
  std::chrono::milliseconds collect_interval{30000};  // sizes the counter-data image
  // Alternating: the least time a configuration stays live (--pm-sampling-dwell; it is at least
  // three sampling intervals, in whole collections either way). Each switch stops one session
  // and configures the next, ~0.1 s of CPU on the H100, so this bounds the CPU alternation takes.
  std::chrono::milliseconds min_dwell{0};
  // A session's first samples are left out of the values (cupti::PmSampler::Options::
  // settle_samples): on an H100 the PCIe counters read ~0 in the first two 500 ms samples of
  // every session, i.e. the first window after each switch, while GPM read 30 GB/s
  // (docs/validation/h200-pm-sampling.md run 9).
  uint32_t settle_samples = 2;
  const std::atomic<bool>* paused = nullptr;  // null: never paused
  // No completed sample for this long (or 5 intervals, if longer): the session has stalled.
  std::chrono::milliseconds stall_after{2000};
  std::chrono::milliseconds backoff_min{1000};
  std::chrono::milliseconds backoff_max{60000};
  // Field ids measured in every configuration, without gaps (--pm-sampling-pin).
  std::vector<int> pinned;
  // Alternating: the longest a configuration of bounded fields is skipped while its bounds stay
  // steady (--pm-sampling-steady-hold; the class comment). 0: off, every dwell switches.
  std::chrono::milliseconds steady_hold{0};
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
  void Coverage(std::vector<model::FieldCoverage>* out) const override;
  size_t configurations() const override { return slots_.size(); }

  const std::string& chip() const { return chip_; }
  // Per field (fields() order), its metric.
  const std::vector<std::string>& metrics() const { return metrics_; }
  // Per configuration, the indices into fields() it measures.
  std::vector<std::vector<size_t>> configuration_fields() const;
  size_t dwell() const { return dwell_; }
  // Sessions started so far (a switch starts one): how often the reader switched.
  uint64_t sessions_started() const { return sessions_started_; }

 private:
  // A field's window means over one dwell (GPM units): their mean, and the standard error of
  // that mean (the windows' standard deviation over the square root of their number; 0 for one
  // window). NaN mean: not measured in that dwell.
  struct DwellStat {
    double mean = std::numeric_limits<double>::quiet_NaN();
    double std_error = 0;
  };
  // A field's window means (GPM units) while its configuration was live this dwell: the largest
  // (the idle hold's test; NaN: none yet) and what DwellStat needs (the steady hold's).
  struct DwellWindows {
    double max = std::numeric_limits<double>::quiet_NaN();
    double sum = 0;
    double sum_squares = 0;
    size_t count = 0;
    void Add(double mean);
    DwellStat Stat() const;
  };

  // One configuration of the alternation and its own loss state.
  struct Slot {
    std::vector<size_t> fields;  // indices into fields_
    cupti::PmSampler::Options sampler;
    // Built at its first session and kept: building it is most of a session start's CPU time
    // (docs/validation/h200-pm-sampling.md), and alternating starts one every dwell_.
    std::shared_ptr<const cupti::PmHost> host;
    Clock::time_point retry_at{};
    std::chrono::milliseconds backoff{0};
    Clock::duration quiet{0};  // live time since its last completed sample
    bool in_loss_streak = false;
    // Per field index: its dwell's statistics in the dwell that ended when this slot was last
    // switched to; a NaN mean where none (not measured then, or the slot started otherwise).
    std::vector<DwellStat> reference;
    Clock::time_point measured_at{};  // its last decode that completed samples
  };

  PmSamplingReader(const cupti::Library& lib, const PmSamplingOptions& options)
      : lib_(lib), options_(options) {}
  // Starts the first configuration from `from` on whose backoff has passed; none: no session.
  void StartFrom(size_t from, Clock::time_point now);
  // Decodes the live configuration's samples into last_values_ / coverage_.
  void DecodeLive(Clock::time_point now, Clock::duration window,
                  std::vector<fields::FieldError>* errors);
  void NoteLoss(size_t slot, const Status& why, Clock::time_point now);
  void Release();
  std::string SlotName(size_t slot) const;
  // At the end of a dwell: the configuration to make live next, from the one after live_ on,
  // passing those whose backoff has not passed, those held at 0 by an idle bound (HoldByBound)
  // and those held by steady bounds (HoldSteady); live_ when none.
  size_t NextToMeasure(Clock::time_point now);
  // Whether the live configuration measured an idle bound of field `index` this dwell.
  bool BoundIdle(size_t index) const;
  // Slot s holds only fields with an idle bound: they are served as 0 (held_) and true.
  bool HoldByBound(size_t slot);
  // Slot s holds only bounded fields, all with values measured less than steady_hold ago, and
  // every bound of them the live configuration measured this dwell stayed within
  // kPmSteadyBoundPoints of the slot's reference, or within twice the two dwell means' combined
  // standard error where that is larger (a bound that swings within each dwell, as a pulsing
  // load's does, moves its dwell mean by more than 10 points from dwell to dwell without its
  // load changing); at least one bound per field.
  bool HoldSteady(size_t slot, Clock::time_point now) const;
  // Every field's statistics this dwell.
  std::vector<DwellStat> DwellStats() const;
  // A new dwell: no bound measured yet.
  void ResetDwell();

  const cupti::Library& lib_;
  PmSamplingOptions options_;
  unsigned gpu_ = 0;
  std::string chip_;
  std::vector<const fields::FieldDef*> fields_;  // ascending id, one metric each
  std::vector<std::string> metrics_;             // per field
  std::vector<double> to_gpm_units_;             // per field
  std::vector<Slot> slots_;
  size_t dwell_ = 1;  // collections a configuration stays live when they alternate
  size_t live_ = 0;   // the slot of sampler_
  size_t live_reads_ = 0;
  std::unique_ptr<cupti::PmSampler> sampler_;
  Clock::time_point started_at_{};  // the first session's start
  Clock::time_point period_at_{};   // the live session's start, or its last decode
  Clock::time_point last_read_at_{};
  bool logged_pause_ = false;
  std::vector<std::optional<model::Value>> last_values_;  // per field: the last measured mean
  std::vector<double> coverage_;                          // per field, the last window
  // Per field: the indices of the fields bounding it (fields::PmFieldMetric::bounded_by) that
  // are served; its window means this dwell; whether it is held at 0 by an idle bound.
  std::vector<std::vector<size_t>> bounds_;
  std::vector<DwellWindows> dwell_windows_;
  std::vector<bool> held_;
  uint64_t sessions_started_ = 0;
  uint64_t release_cpu_ns_ = 0;  // the last Release()'s CPU time, reported with the next start
  std::atomic<bool> active_{false};
  std::atomic<uint64_t> losses_{0};
};

}  // namespace nvmlx::collect

#endif  // NVML_EXPORTER_COLLECT_PM_SAMPLING_READER_H_
