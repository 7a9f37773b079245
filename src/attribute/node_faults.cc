#include "attribute/node_faults.h"

#include <algorithm>
#include <ctime>
#include <utility>

#include "fields/gpu_faults.h"
#include "fields/xid_text.h"

namespace nvmlx::attribute {
namespace {

constexpr int kHealthFail = 20;  // DCGM's DCGM_HEALTH_RESULT_FAIL (collect/health.h)

// "GPU-…", or "gpu<index>" when the UUID could not be read: the key of one GPU's faults.
std::string GpuKey(const model::DeviceIdentity& id) {
  return id.uuid.empty() ? "gpu" + std::to_string(id.index) : id.uuid;
}

// "GPU 0 (GPU-…)" for messages.
std::string GpuName(const model::DeviceIdentity& id) {
  std::string out = "GPU " + std::to_string(id.index);
  if (!id.uuid.empty()) out += " (" + id.uuid + ")";
  return out;
}

// "pods on it: ns/a, ns/b" (the GPU's and its MIG instances'), or that none holds it.
std::string PodsOn(const model::Snapshot& snap, unsigned gpu_index) {
  std::vector<std::string> pods;
  if (snap.attribution.devices != nullptr) {
    for (const model::DeviceSnapshot& ds : snap.devices) {
      if (ds.identity == nullptr || ds.identity->index != gpu_index) continue;
      const auto& by_device = snap.attribution.devices->pods_by_device;
      auto it = by_device.find(ds.identity->DeviceKey());
      if (it == by_device.end()) continue;
      for (const model::PodRef& p : it->second) pods.push_back(p.namespace_name + "/" + p.pod);
    }
  }
  std::sort(pods.begin(), pods.end());
  pods.erase(std::unique(pods.begin(), pods.end()), pods.end());
  if (pods.empty()) return "no pod holds it";
  std::string out = "pods on it: ";
  for (size_t k = 0; k < pods.size(); ++k) out += (k == 0 ? "" : ", ") + pods[k];
  return out;
}

std::string Duration(std::chrono::milliseconds d) {
  const auto m = std::chrono::duration_cast<std::chrono::minutes>(d);
  const auto s = std::chrono::duration_cast<std::chrono::seconds>(d - m);
  return std::to_string(m.count()) + "m" + std::to_string(s.count()) + "s";
}

bool IsGpu(const model::DeviceSnapshot& ds) {
  return ds.identity != nullptr && !ds.identity->mig.has_value();
}

}  // namespace

bool NodeCondition::Problem() const {
  return type == fields::kConditionGpuHealthy ? status == "False" : status == "True";
}

void NodeFaultTracker::Adopt(const std::vector<FoundCondition>& found) {
  for (const FoundCondition& c : found) {
    // (What this process saw already, if newer, wins.)
    const Latest held{c.last_heartbeat, c.reason, c.message};
    if (c.type == fields::kConditionGpuXidCritical && c.status == "True" &&
        (!critical_ || critical_->at < held.at)) {
      critical_ = held;
    }
    if (c.type == fields::kConditionGpuLost && c.status == "True") adopted_lost_ = c.message;
    if (c.type == fields::kConditionGpuHealthy && c.status == "False" &&
        (!unhealthy_ || unhealthy_->at < held.at)) {
      unhealthy_ = held;
    }
  }
}

NodeFaultTracker::Outcome NodeFaultTracker::Observe(const model::Snapshot& snap, WallTime now) {
  Outcome out;
  for (size_t i = 0; i < snap.devices.size(); ++i) {
    if (IsGpu(snap.devices[i])) ObserveXids(snap, i, now, &out.events);
  }
  out.conditions.push_back(HealthCondition(snap, now));
  out.conditions.push_back(XidCondition(now));
  out.conditions.push_back(LostCondition(snap, &out.events));
  return out;
}

void NodeFaultTracker::ObserveXids(const model::Snapshot& snap, size_t i, WallTime now,
                                   std::vector<NodeEvent>* events) {
  const model::DeviceSnapshot& ds = snap.devices[i];
  const std::string key = GpuKey(*ds.identity);
  std::map<int64_t, int64_t>& seen = seen_[key];
  for (const model::XidCount& x : ds.fault_xids) {
    int64_t& before = seen[x.xid];
    const int64_t fresh = x.count - before;
    if (fresh <= 0) continue;
    before = x.count;
    const std::optional<fields::XidFault> fault = fields::FaultOfXid(x.xid);
    if (!fault) continue;
    std::string what = GpuName(*ds.identity) + ": Xid " + std::to_string(x.xid) + " (" +
                       std::string(fields::XidDescription(x.xid)) + ")";
    const std::string advice = "NVIDIA's Xid catalog: " + std::string(fault->action) + ", " +
                               std::string(fault->advice) + "; " + PodsOn(snap, ds.identity->index);
    events->push_back({key + "/" + std::to_string(x.xid), std::string(fault->reason),
                       what + ", " + std::to_string(fresh) + " time(s); " + advice, fresh});
    if (fault->critical) critical_ = Latest{now, std::string(fault->reason), what + "; " + advice};
  }
}

NodeCondition NodeFaultTracker::XidCondition(WallTime now) const {
  const std::string type(fields::kConditionGpuXidCritical);
  if (critical_ && now - critical_->at < hold_) {
    return {type, "True", critical_->reason,
            critical_->message + " (held for " + Duration(hold_) + " after the last one)"};
  }
  return {type, "False", "NoCriticalXid", "no critical Xid in the last " + Duration(hold_)};
}

NodeCondition NodeFaultTracker::HealthCondition(const model::Snapshot& snap, WallTime now) {
  const std::string type(fields::kConditionGpuHealthy);
  std::string failing;
  for (const model::DeviceSnapshot& ds : snap.devices) {
    if (!IsGpu(ds) || ds.health.empty()) continue;
    health_seen_ = true;
    // Any watch that fails (DCGM's ALL watch is one of them, for the Xids and the bus, not a
    // summary of the others).
    std::string checks;
    for (const model::HealthResult& h : ds.health) {
      if (h.value < kHealthFail) continue;
      checks +=
          (checks.empty() ? "" : ", ") + std::string(h.watch) + " " + std::string(h.error_code);
    }
    if (checks.empty()) continue;
    failing += (failing.empty() ? "" : "; ") + GpuName(*ds.identity) + " fails " + checks;
  }
  if (!failing.empty()) unhealthy_ = Latest{now, "GpuHealthCheckFailed", failing};
  if (unhealthy_ && now - unhealthy_->at < hold_) {
    return {type, "False", unhealthy_->reason,
            unhealthy_->message + " (held for " + Duration(hold_) + " after the last failure)"};
  }
  if (!health_seen_) {
    return {type, "Unknown", "GpuHealthWatchOff",
            "the GPUs' health checks are not collected: add DCGM_EXP_GPU_HEALTH_STATUS to the "
            "collectors file"};
  }
  return {type, "True", "GpuHealthChecksPass", "every GPU passes its health checks"};
}

NodeCondition NodeFaultTracker::LostCondition(const model::Snapshot& snap,
                                              std::vector<NodeEvent>* events) {
  const std::string type(fields::kConditionGpuLost);
  const std::optional<fields::XidFault> off_bus = fields::FaultOfXid(79);
  std::string lost;
  size_t gpus = 0;
  for (const model::DeviceSnapshot& ds : snap.devices) {
    if (!IsGpu(ds)) continue;
    ++gpus;
    if (!ds.lost) continue;
    lost += (lost.empty() ? "" : ", ") + GpuName(*ds.identity);
    if (!lost_.insert(GpuKey(*ds.identity)).second) continue;
    // Named lost on the Node before this process started (its message lists each lost GPU by
    // GpuName, "GPU 1 (GPU-…),"): its Event went out then.
    if (adopted_lost_.find(GpuName(*ds.identity) + (" lost")) != std::string::npos ||
        adopted_lost_.find(GpuName(*ds.identity) + ",") != std::string::npos) {
      continue;
    }
    events->push_back({GpuKey(*ds.identity) + "/lost", "GpuLost",
                       GpuName(*ds.identity) +
                           " fell off the bus or stopped answering (Xid 79 or GPU_IS_LOST); "
                           "NVIDIA's Xid catalog: " +
                           std::string(off_bus->action) + ", " + std::string(off_bus->advice) +
                           "; " + PodsOn(snap, ds.identity->index),
                       1});
  }
  if (!lost.empty()) {
    return {type, "True", "GpuFellOffTheBus",
            lost + " lost; " + std::string(off_bus->advice) +
                " (NVIDIA's Xid catalog: " + std::string(off_bus->action) + ")"};
  }
  return {type, "False", "AllGpusPresent", "all " + std::to_string(gpus) + " GPU(s) answer"};
}

}  // namespace nvmlx::attribute
