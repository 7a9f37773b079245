// Runtime container labels (--container-labels, dcgm-exporter 4.8.3's containerMapper): on a host
// without Kubernetes, which running container of a Docker-compatible engine (Docker, Podman's
// compatibility socket) uses which GPU, so that each GPU series gets one more copy per container
// with container="<name>" (render/series.h). docs/upstream/container-labels.md has what upstream
// does, with its sources.
//
// The engine is asked over its unix socket (--container-runtime-socket) with its Engine HTTP API:
// GET /containers/json (the running containers), then GET /containers/<id>/json for each not
// inspected by an earlier refresh (its name, NVIDIA_VISIBLE_DEVICES and GPU device requests:
// InspectCache); one refresh is bounded by one deadline
// (2 s, as upstream) and every answer by 10 MiB. A container gone between the two calls (404) is
// skipped; any other failure fails the refresh.
//
// Differences from dcgm-exporter, which asks the engine inside a collection (cached for one
// collect interval) and never counts a failure:
//  - ContainerLabelRefresher asks on its own thread every period, never in a collection or a
//    scrape;
//  - a failed refresh keeps the last good map, counts
//    nvml_exporter_attribution_errors_total{source="container_runtime"} and logs once per failure
//    streak (attribute/error_counters.h);
//  - new-style MIG device UUIDs (MIG-<uuid>) are resolved too, besides MIG-GPU-<uuid>/<gi>/<ci>.
//
// Thread-safety: the parsing functions are pure. EngineClient: one thread makes the requests,
// Stop() from any thread. ContainerLabelRefresher as HpcJobRefresher (Latest() from any thread; a
// util::PeriodicWorker on an injectable clock).
#ifndef NVML_EXPORTER_ATTRIBUTE_CONTAINER_RUNTIME_H_
#define NVML_EXPORTER_ATTRIBUTE_CONTAINER_RUNTIME_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "attribute/error_counters.h"
#include "model/attribution.h"
#include "model/snapshot.h"
#include "model/source_errors.h"
#include "util/clock.h"
#include "util/latest.h"
#include "util/periodic_worker.h"
#include "util/status.h"

namespace nvmlx::attribute {

// Upstream's bounds: one refresh (the list and every inspect) within 2 s, each answer at most
// 10 MiB, a label value at most 128 bytes.
inline constexpr std::chrono::milliseconds kEngineRefreshTimeout{2000};
inline constexpr size_t kMaxEngineAnswer = size_t{10} << 20;
inline constexpr size_t kMaxContainerLabelBytes = 128;
// Our bound: each container labels its own copy of every series of its GPU, so N containers on
// one GPU make N + 1 copies of that GPU's series (5000 containers sharing GPU 0 made 5002 copies:
// 27 % of a core, 172 MB). A GPU is seldom shared by more than a few containers (MPS allows 48
// clients, time-slicing a handful of replicas); 16 covers every sharing setup we know, and past
// that the copies cost more than they tell. The containers left out are counted
// (nvml_exporter_container_labels_dropped) and logged once per streak.
inline constexpr size_t kMaxContainerLabelsPerDevice = 16;

// One entry of GET /containers/json.
struct ListedContainer {
  std::string id;
  std::string first_name;  // Names[0] as the engine spells it ("/trainer"), or empty
  int64_t created = 0;     // Created: Unix seconds; 0 when absent
};

// What GET /containers/<id>/json says of one container, reduced to what the label needs.
struct InspectedContainer {
  std::string label;                    // the container label value; empty: not labelled
  std::vector<std::string> gpu_tokens;  // device ids as given (GPU-…, MIG-…, 0, nvidia1)
  bool all_gpus = false;                // --gpus all, or NVIDIA_VISIBLE_DEVICES=all
};

// INVALID_ARGUMENT naming what is wrong when `body` is not a JSON array of objects; entries
// without an Id are skipped.
Result<std::vector<ListedContainer>> ParseContainerList(std::string_view body);
// INVALID_ARGUMENT when `body` is not a JSON object. GPUs: the NVIDIA device requests (driver
// "nvidia" or capability "gpu"): their DeviceIDs, else Count -1 (all), else a count alone
// (nothing: the API does not say which GPUs the engine chose); without such requests the first
// NVIDIA_VISIBLE_DEVICES= entry of Config.Env (none, void and empty items skipped; all: all).
Result<InspectedContainer> ParseContainerInspect(std::string_view body,
                                                 const ListedContainer& listed);
// The label value: surrounding blanks trimmed, control characters as '_', at most
// kMaxContainerLabelBytes without splitting a UTF-8 sequence (invalid UTF-8 bytes as '_').
std::string SanitizeContainerLabel(std::string_view name);

// The device keys (model/attribution.h) of `identities` that `c` uses: GPU-<uuid> as is (when we
// collect that GPU), a GPU index (optionally "nvidia"-prefixed) as that GPU, MIG-GPU-<uuid>/<gi>/…
// as the MIG instances of that GPU instance, MIG-<uuid> as that MIG device; all: every GPU. A
// whole GPU brings its MIG instances (their series match their GPU's UUID upstream). Each key
// once, in identities' order.
std::vector<std::string> DeviceKeysOf(const InspectedContainer& c,
                                      const std::vector<model::DeviceIdentity>& identities);

struct EngineAnswer {
  unsigned status = 0;
  std::string body;
};

// The Engine API's GETs over its unix socket, one connection per request ("Connection: close").
class EngineClient {
 public:
  explicit EngineClient(std::string socket_path);
  EngineClient(const EngineClient&) = delete;
  EngineClient& operator=(const EngineClient&) = delete;

  // GET `target`. UNAVAILABLE naming the socket and the step when connecting, sending or reading
  // fails, the deadline passes, the body exceeds kMaxEngineAnswer, or Stop() was called. Any
  // HTTP status comes back as an answer.
  Result<EngineAnswer> Get(const std::string& target,
                           std::chrono::steady_clock::time_point deadline);
  // From any thread, final: the running request (and every later one) ends soon with
  // UNAVAILABLE.
  void Stop() { stop_.store(true); }
  const std::string& socket_path() const { return socket_path_; }

 private:
  const std::string socket_path_;
  std::atomic<bool> stop_{false};
};

// What earlier refreshes learnt of each container, by id and listed name: a container's GPUs are
// fixed when it is created (its device requests and environment cannot change), so one inspection
// serves for its life; a rename (same id, another name) is inspected again. Without it every
// refresh inspected every running container: 5000 of them cost a fifth of a core and could not
// finish within the 2 s refresh timeout. Entries of containers no longer listed are dropped, so
// it holds at most what the engine last listed. Used by one refreshing thread.
struct InspectCache {
  struct Entry {
    std::string first_name;  // the listed name it was inspected under
    std::string label;       // empty: not labelled
    std::vector<std::string> device_keys;
  };
  std::unordered_map<std::string, Entry> by_id;
};

// One refresh: list, inspect each container not in `cache` (null: every one), resolve. Each device
// keeps at most `max_per_device` labels, the oldest containers' (by Created; the engine's list
// order among equals), so that a new container never takes the place of one already shown and the
// series do not flap; the rest are counted in RuntimeContainers::dropped. Errors say which call
// failed and why; what was inspected before an error stays in the cache, so that a refresh cut by
// the timeout makes progress for the next one.
Result<std::shared_ptr<model::RuntimeContainers>> FetchRuntimeContainers(
    EngineClient* client, const std::vector<model::DeviceIdentity>& identities,
    std::chrono::milliseconds timeout, size_t max_per_device = kMaxContainerLabelsPerDevice,
    InspectCache* cache = nullptr);

struct ContainerLabelOptions {
  std::string socket_path;
  std::chrono::milliseconds period{30000};
  std::chrono::milliseconds timeout = kEngineRefreshTimeout;
  size_t max_per_device = kMaxContainerLabelsPerDevice;
  std::shared_ptr<model::SourceErrors> errors;  // may be null (tests)
  util::Clock* clock = nullptr;                 // null: the real clock
};

class ContainerLabelRefresher {
 public:
  static constexpr std::string_view kSource = "container_runtime";

  ContainerLabelRefresher(ContainerLabelOptions options,
                          std::vector<model::DeviceIdentity> identities);
  ~ContainerLabelRefresher();
  ContainerLabelRefresher(const ContainerLabelRefresher&) = delete;
  ContainerLabelRefresher& operator=(const ContainerLabelRefresher&) = delete;

  // One refresh on the calling thread; false when it failed (the last good map stays).
  bool RefreshOnce();
  // Refreshes every period from now on (run RefreshOnce first for the first page).
  void Start();
  // Final: also ends a refresh in progress (within 50 ms) and every later one.
  void Stop();
  // Null until the first refresh succeeds.
  std::shared_ptr<const model::RuntimeContainers> Latest() const;

 private:
  const ContainerLabelOptions options_;
  const std::vector<model::DeviceIdentity> identities_;
  EngineClient client_;
  // Refreshing thread only.
  FailureStreak streak_;
  bool capped_ = false;  // the last refresh left containers out (one warning per streak)
  InspectCache cache_;

  util::Latest<model::RuntimeContainers> latest_;
  util::PeriodicWorker worker_;  // last: stopped before the members above go
};

}  // namespace nvmlx::attribute

#endif  // NVML_EXPORTER_ATTRIBUTE_CONTAINER_RUNTIME_H_
