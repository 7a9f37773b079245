// HPC job mapping (--hpc-job-mapping-dir, dcgm-exporter's hpcMapper): a scheduler prolog writes,
// per GPU it hands to a job, a file named after the GPU ("<gpu index>", or "<gpu index>.<GPU
// instance id>" for a MIG instance) with one job id per line; the exporter labels that device's
// series hpc_job="<id>", one series per job.
//
// Differences from dcgm-exporter, which re-reads the directory inside every scrape and fails the
// whole scrape (HTTP 500) on an unreadable file:
//  - the directory is read on a background timer (HpcJobRefresher), never in a scrape;
//  - a bad line (not UTF-8, or with control characters: it would break the exposition) is
//    skipped and logged once with file:line; an unreadable file or directory keeps the last good
//    mapping, counts a source="hpc" error and is logged once per failure streak.
// Names that are not "<n>" or "<n>.<m>" are ignored, as dcgm-exporter's ^\d+(\.\d+)?$ does; a
// file naming a GPU we do not collect is ignored too. As in dcgm-exporter the whole line is the
// job id (blanks inside included); unlike it, blank lines are skipped (it labels them
// hpc_job=""), surrounding blanks and a CR trimmed, repeated ids within a file kept once.
//
// Thread-safety: ReadHpcJobDir is a pure function of the directory; HpcJobRefresher as
// PodResourcesRefresher (Latest() from any thread; a util::PeriodicWorker on an injectable clock).
#ifndef NVML_EXPORTER_ATTRIBUTE_HPC_JOBS_H_
#define NVML_EXPORTER_ATTRIBUTE_HPC_JOBS_H_

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "attribute/error_counters.h"
#include "model/snapshot.h"
#include "model/source_errors.h"
#include "util/clock.h"
#include "util/latest.h"
#include "util/periodic_worker.h"
#include "util/status.h"

namespace nvmlx::attribute {

struct HpcReadResult {
  std::shared_ptr<const model::HpcJobs> jobs;
  // "<file>:<line>: <what>" for each skipped line.
  std::vector<std::string> problems;
};

// NOT_FOUND when the directory does not exist; UNAVAILABLE when it or a mapping file cannot be
// read (the message names the path).
Result<HpcReadResult> ReadHpcJobDir(const std::string& dir,
                                    const std::vector<model::DeviceIdentity>& identities);

class HpcJobRefresher {
 public:
  static constexpr std::string_view kSource = "hpc";

  HpcJobRefresher(std::string dir, std::vector<model::DeviceIdentity> identities,
                  std::chrono::milliseconds period, std::shared_ptr<model::SourceErrors> errors,
                  util::Clock* clock = nullptr);  // null: the real clock
  ~HpcJobRefresher();
  HpcJobRefresher(const HpcJobRefresher&) = delete;
  HpcJobRefresher& operator=(const HpcJobRefresher&) = delete;

  bool RefreshOnce();
  // Refreshes every period from now on (run RefreshOnce first for the first page).
  void Start();
  void Stop();
  std::shared_ptr<const model::HpcJobs> Latest() const;

 private:
  const std::string dir_;
  const std::vector<model::DeviceIdentity> identities_;
  std::shared_ptr<model::SourceErrors> errors_;
  // Refreshing thread only.
  FailureStreak streak_;
  bool dir_seen_ = false;
  bool dir_missing_logged_ = false;
  std::set<std::string> logged_problems_;

  util::Latest<model::HpcJobs> latest_;
  util::PeriodicWorker worker_;  // last: stopped before the members above go
};

}  // namespace nvmlx::attribute

#endif  // NVML_EXPORTER_ATTRIBUTE_HPC_JOBS_H_
