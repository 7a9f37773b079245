// An independent checker of CloudWatch Embedded Metric Format documents, written from the
// specification (docs/emf.md §1-§2), not from our renderer: every test applies it to
// every document the renderer or the daemon produces.
//
// Checks: one JSON object and nothing else, no raw newline; `_aws` an object with only
// Timestamp (integer ms, positive; within [now-14 d, now+2 h] when `now_ms` is given),
// CloudWatchMetrics (non-empty array), LogGroupName/LogStreamName (strings); each directive has
// exactly Namespace (1..256 of [a-zA-Z0-9._#:/-], not AWS/), Dimensions (array of >= 1 arrays
// of 0..30 unique strings) and Metrics (1..100 objects of Name, optional Unit from the allowed
// list, optional StorageResolution 1 or 60); every dimension key is a root member holding a
// string of 1..1024 ASCII characters, not blank, key 1..250 characters not starting with ':';
// every metric Name is a root member holding a finite number in CloudWatch's range (or an array
// of at most 100 such numbers), not a dimension too, and one name has one StorageResolution; at
// most 100 distinct metrics per document; size at most `max_bytes`.
//
// Pure functions: thread-safe.
#ifndef NVML_EXPORTER_TEST_EMF_EMF_VALIDATOR_H_
#define NVML_EXPORTER_TEST_EMF_EMF_VALIDATOR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nvmlx::testing {

struct EmfCheckOptions {
  size_t max_bytes = 256 * 1024;
  std::optional<int64_t> now_ms;  // set: check the Timestamp window
};

// Every problem found (empty: valid).
std::vector<std::string> ValidateEmf(std::string_view document, const EmfCheckOptions& options);

}  // namespace nvmlx::testing

#endif  // NVML_EXPORTER_TEST_EMF_EMF_VALIDATOR_H_
