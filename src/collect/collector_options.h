// CollectorOptions: how a Collector (collect/collector.h) collects: what (the plan, the
// selected GPUs), how often, its deadlines and windows, and its hooks. A plain value, copied into
// the Collector at Create and read-only from then on (any thread may read it).
#ifndef NVML_EXPORTER_COLLECT_COLLECTOR_OPTIONS_H_
#define NVML_EXPORTER_COLLECT_COLLECTOR_OPTIONS_H_

#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "collect/pm_sampling_reader.h"
#include "collect/profiling_source.h"
#include "config/device_selector.h"
#include "fields/catalog.h"
#include "model/snapshot.h"
#include "plan/field_plan.h"
#include "util/clock.h"

namespace nvmlx::collect {

struct CollectorOptions {
  std::chrono::milliseconds interval{30000};
  // What to read (plan/field_plan.h): required. Its label fields are read once, at Create.
  std::shared_ptr<const plan::FieldPlan> plan;
  config::DeviceSelector devices;
  bool replace_blanks_in_model_name = false;
  // -x: the window of DCGM_EXP_XID_ERRORS_COUNT.
  std::chrono::milliseconds xid_window{300000};
  // --clock-events-count-window-size: the window of DCGM_EXP_CLOCK_EVENTS_COUNT.
  std::chrono::milliseconds clock_events_window{300000};
  // Returns the latest attribution (attribute/), attached to each snapshot. Must be cheap and
  // non-blocking (it copies a few shared_ptrs); called on the fast loop. Empty: none.
  std::function<model::Attribution()> attribution;
  // Fill DeviceSnapshot::processes (NVML compute processes and per-process utilization) on the
  // fast loop, for process attribution. A failure degrades only the processes (logged once per
  // GPU).
  bool process_metrics = false;
  // Ticks the fast loop and times the read deadline and the Xid and clock-event windows (null: the
  // real clock). Must outlive the Collector.
  util::Clock* clock = nullptr;
  // How long the fast loop waits for a GPU's reads before publishing without it (stale); also
  // how long a slow read may run before the GPU's slow values count as stale. 0: the default,
  // half the interval, at most 5 s.
  std::chrono::milliseconds read_deadline{0};
  // --profiling-source: which source serves DCGM_FI_PROF_* per GPU (collect/profiling_source.h).
  ProfilingChoice profiling = ProfilingChoice::kAuto;
  // CUPTI for PM sampling, loaded on first need (a GPU without GPM, or a forced PM source), so
  // that GPUs GPM serves cost nothing; returns null when it cannot be loaded (it warns once).
  // Empty: no PM sampling. What it returns must outlive the Collector. Called from the GPUs' fast
  // workers, at start and on a reload, possibly at once: it must be thread-safe (and memoise).
  std::function<const cupti::Library*()> cupti;
  // For tests: builds each GPU's profiling source (`gpu`: its NVML index) instead of GPM or PM
  // sampling (`profiling` is then ignored); called on the GPU's fast worker. Empty: none.
  std::function<std::unique_ptr<ProfilingSource>(
      unsigned gpu, const std::vector<const fields::FieldDef*>& fields)>
      profiling_source;
  // PM sampling's interval and backoff (collect_interval and paused are set by the Collector).
  PmSamplingOptions pm_sampling;
  // The node's fault watch (--kubernetes-node-conditions): the Xid watcher runs whatever the
  // plan, and each GPU's snapshot carries its Xid totals (DeviceSnapshot::fault_xids).
  bool watch_faults = false;
  // Called (on that GPU's worker) when a GPU whose set-up outlasted the set-up deadline finishes
  // it: such a GPU can only be collected by a new start (the daemon re-executes). Empty: it stays
  // unread, and its set-up's end is only logged.
  std::function<void()> on_late_gpu;
};

}  // namespace nvmlx::collect

#endif  // NVML_EXPORTER_COLLECT_COLLECTOR_OPTIONS_H_
