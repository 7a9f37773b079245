// Snapshot: everything one collection saw, immutable once published. The renderers read it;
// nothing on the scrape path touches NVML.
//
// Thread-safety: built by the collector thread, then published as shared_ptr<const Snapshot>;
// after that it is never mutated, so any number of threads may read it concurrently.
#ifndef NVML_EXPORTER_COLLECT_SNAPSHOT_H_
#define NVML_EXPORTER_COLLECT_SNAPSHOT_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fields/reader.h"

namespace nvmlx::collect {

// Read once at start-up, per selected GPU.
struct DeviceIdentity {
  unsigned index = 0;      // NVML index: the `gpu` label and device="nvidia<index>"
  std::string uuid;        // "GPU-…"
  std::string pci_bus_id;  // "00000000:00:06.0"
  std::string model_name;  // nvmlDeviceGetName, after --replace-blanks-in-model-name
  unsigned minor_number = 0;
  // Values of the CSV's `label` rows for this device (field id -> string), e.g.
  // DCGM_FI_DRIVER_VERSION -> "580.159.04". Missing when the read failed.
  std::vector<std::pair<int, std::string>> label_values;
};

// How often one Xid was seen on a GPU within the window (DCGM_EXP_XID_ERRORS_COUNT).
struct XidCount {
  int64_t xid = 0;
  int64_t count = 0;
};

struct DeviceSnapshot {
  const DeviceIdentity* identity = nullptr;  // points into Snapshot::identities
  bool up = true;                            // false: GPU lost / every read failed
  std::vector<fields::Sample> samples;       // ascending field id; failed fields are absent
  // DCGM_FI_DEV_XID_ERRORS (the last Xid) is a sample of `samples` like any field. The windowed
  // counts are not a single value: xid_watched says whether they are known at all (false: Xid
  // events could not be registered on this GPU, or the field is not enabled).
  bool xid_watched = false;
  std::vector<XidCount> xid_counts;  // ascending xid; empty: none in the window
};

struct Snapshot {
  std::chrono::system_clock::time_point time;  // when the collection started
  double collect_seconds = 0;                  // how long it took
  std::shared_ptr<const std::vector<DeviceIdentity>> identities;
  std::vector<DeviceSnapshot> devices;  // in identity order
  int64_t xid_window_ms = 0;            // the window of DeviceSnapshot::xid_counts
};

}  // namespace nvmlx::collect

#endif  // NVML_EXPORTER_COLLECT_SNAPSHOT_H_
