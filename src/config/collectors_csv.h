// The collectors CSV (dcgm-exporter's -f / DCGM_EXPORTER_COLLECTORS): which fields to export,
// with which Prometheus type and help text.
//
// Accepts every file dcgm-exporter accepts (exactly 3 columns; '#' at column 0 starts a comment;
// RFC 4180 quoting as Go's encoding/csv with LazyQuotes=false; fields trimmed of ASCII spaces)
// and, beyond it, tabs around fields and '#' after leading whitespace as a comment. Errors name
// the file and 1-based line: `f.csv:7: unknown metric type "gauges" (expected ...)`.
//
// A field name nvml-exporter does not know (a newer dcgm-exporter release's, or a typo) is by
// default not an error: the row is kept with fields::UnknownNameField() as its field, one warning
// names it (`f.csv:7: unknown field "DCGM_FI_DEV_GPU_UTL" (did you mean DCGM_FI_DEV_GPU_UTIL?);
// skipping this row ...`), and the field plan leaves it out and lists it. With
// UnknownFields::kFatal it is the error dcgm-exporter gives (`f.csv:7: unknown field ...`).
//
// Pure functions over their inputs: thread-safe.
#ifndef NVML_EXPORTER_CONFIG_COLLECTORS_CSV_H_
#define NVML_EXPORTER_CONFIG_COLLECTORS_CSV_H_

#include <string>
#include <string_view>
#include <vector>

#include "config/options.h"
#include "fields/catalog.h"
#include "util/status.h"

namespace nvmlx::config {

enum class MetricType { kGauge, kCounter, kHistogram, kSummary, kLabel };
std::string_view MetricTypeName(MetricType t);  // "gauge", "counter", ... as written in the CSV

struct CollectorEntry {
  // Never null in a parsed result; fields::UnknownNameField() for a skipped unknown name.
  const fields::FieldDef* field = nullptr;
  std::string name;  // column 1 verbatim (trimmed): the metric name
  MetricType type = MetricType::kGauge;
  std::string help;  // column 3 (unquoted); may be empty
  int line = 0;      // 1-based line in the file, for messages
};

// `source` names the file in error messages. Non-fatal findings (a repeated metric name: the
// first row wins; an unknown type on a DCGM_EXP_* row, which dcgm-exporter does not check) are
// logged as warnings.
Result<std::vector<CollectorEntry>> ParseCollectorsCsv(
    std::string_view text, std::string_view source, UnknownFields unknown = UnknownFields::kSkip);
// The same, handing the warnings (`f.csv:9: duplicate field "X" (first at line 3); ignoring this
// row`) to the caller instead of the log. `warnings` may be null.
Result<std::vector<CollectorEntry>> ParseCollectorsCsv(
    std::string_view text, std::string_view source, std::vector<std::string>* warnings,
    UnknownFields unknown = UnknownFields::kSkip);
// Reads and parses a file; NOT_FOUND / permission errors name the path.
Result<std::vector<CollectorEntry>> LoadCollectorsCsv(const std::string& path,
                                                      UnknownFields unknown = UnknownFields::kSkip);

}  // namespace nvmlx::config

#endif  // NVML_EXPORTER_CONFIG_COLLECTORS_CSV_H_
