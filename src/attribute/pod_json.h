// The Kubernetes API server's pod JSON, as the PodWatcher needs it: a PodList (GET
// /api/v1/pods) and one watch event per line (?watch=1), reduced to PodMeta (attribution.h):
// uid, namespace, name, the allowlisted labels with dcgm-exporter's sanitised names, and the
// container ids of every container status (runtime prefix "containerd://" etc. stripped), the
// pod's status.phase, and its spec.containers' GPU requests and limits (quantities rounded up,
// summed per GPU resource name: model::PodMeta says which and why).
//
// Label names: dcgm-exporter copies pod labels onto its series under the key with every
// character outside [a-zA-Z0-9_] replaced by '_' (utils.SanitizeLabelName) and no prefix; the
// allowlist regexes (--kubernetes-pod-label-allowlist-regex) are matched, unanchored, against
// the original key; no regex means every label. We also prefix '_' to a name that would start
// with a digit, which Prometheus would reject (dcgm-exporter emits it as is).
//
// Static pods: the kubelet's cgroups use the manifest hash as the pod uid, which the mirror pod
// carries in its kubernetes.io/config.mirror annotation; it is kept as mirror_uid so that their
// processes are attributed too.
//
// Pure functions (LabelFilter is immutable after Create): thread-safe. nlohmann exceptions are
// caught here; errors are Status values naming what was wrong.
#ifndef NVML_EXPORTER_ATTRIBUTE_POD_JSON_H_
#define NVML_EXPORTER_ATTRIBUTE_POD_JSON_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/attribution.h"
#include "util/status.h"

namespace re2 {
class RE2;
}

namespace nvmlx::attribute {

// dcgm-exporter's SanitizeLabelName ([^a-zA-Z0-9_] -> '_'), plus '_' before a leading digit.
std::string SanitizeLabelName(std::string_view name);

// Which pod labels to copy. Thread-safe after Create.
class LabelFilter {
 public:
  // enabled=false: no labels at all (--kubernetes-enable-pod-labels off). Patterns that RE2
  // cannot compile are skipped with one warning each, as dcgm-exporter does; if none compiles,
  // every label is admitted (also as dcgm-exporter does).
  static std::shared_ptr<const LabelFilter> Create(bool enabled,
                                                   const std::vector<std::string>& patterns);
  ~LabelFilter();
  bool enabled() const { return enabled_; }
  bool Admits(std::string_view key) const;

 private:
  LabelFilter() = default;
  bool enabled_ = false;
  std::vector<std::unique_ptr<re2::RE2>> patterns_;
};

// A pod as the watcher keeps it.
struct PodRecord {
  model::PodMeta meta;
  std::string mirror_uid;  // kubernetes.io/config.mirror of a static pod's mirror, else empty
};

// "containerd://<64 hex>" -> "<64 hex>"; anything without "://" is returned as is.
std::string StripRuntimePrefix(std::string_view container_id);

struct PodList {
  std::string resource_version;  // metadata.resourceVersion: where the watch starts
  std::string continue_token;    // metadata.continue: non-empty when more pages follow
  std::vector<PodRecord> pods;
};
Result<PodList> ParsePodList(std::string_view body, const LabelFilter& filter);

enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark, kError };
struct WatchEvent {
  WatchEventType type = WatchEventType::kError;
  std::string resource_version;  // of the object (pods, bookmarks)
  std::optional<PodRecord> pod;  // ADDED / MODIFIED / DELETED
  int error_code = 0;            // ERROR: the Status object's code (410 = Gone: re-list)
  std::string error_message;
};
Result<WatchEvent> ParseWatchEvent(std::string_view line, const LabelFilter& filter);

}  // namespace nvmlx::attribute

#endif  // NVML_EXPORTER_ATTRIBUTE_POD_JSON_H_
