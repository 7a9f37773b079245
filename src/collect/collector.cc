#include "collect/collector.h"

#include <algorithm>
#include <string>
#include <thread>

#include "util/log.h"

namespace nvmlx::collect {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kXidErrorsField = 230;  // DCGM_FI_DEV_XID_ERRORS
constexpr int kXidCountField = 9001;  // DCGM_EXP_XID_ERRORS_COUNT

// dcgm-exporter's -rbmn: collapse runs of whitespace, then spaces become '-'.
std::string ReplaceBlanks(const std::string& name) {
  std::string out;
  bool in_blank = false;
  for (char c : name) {
    if (c == ' ' || c == '\t' || c == '\n') {
      in_blank = true;
      continue;
    }
    if (in_blank && !out.empty()) out.push_back('-');
    in_blank = false;
    out.push_back(c);
  }
  return out;
}

// Fields of the given cost among the enabled metric rows (label rows are read at start-up).
std::vector<const fields::FieldDef*> MetricFields(const std::vector<config::CollectorEntry>& rows,
                                                  fields::Cost cost) {
  std::vector<const fields::FieldDef*> out;
  for (const auto& row : rows) {
    if (row.type == config::MetricType::kLabel) continue;
    const fields::FieldDef* f = row.field;
    if (f->source != fields::Source::kDevice || f->cost != cost) continue;
    if (f->read == nullptr && f->nvml_field_id == 0) continue;
    if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
  }
  return out;
}

// The enabled metric rows that GPM computes (DCGM_FI_PROF_* with a GPM metric id).
std::vector<const fields::FieldDef*> GpmFields(const std::vector<config::CollectorEntry>& rows) {
  std::vector<const fields::FieldDef*> out;
  for (const auto& row : rows) {
    if (row.type == config::MetricType::kLabel) continue;
    const fields::FieldDef* f = row.field;
    if (f->source != fields::Source::kProfiling || f->gpm_metric_id == 0) continue;
    if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
  }
  return out;
}

void MergeSorted(std::vector<fields::Sample>* into, const std::vector<fields::Sample>& more) {
  into->insert(into->end(), more.begin(), more.end());
  std::stable_sort(
      into->begin(), into->end(),
      [](const fields::Sample& a, const fields::Sample& b) { return a.field_id < b.field_id; });
}

}  // namespace

Collector::Collector(CollectorOptions options) : options_(std::move(options)) {}

Collector::~Collector() {
  Stop();
  if (xids_ != nullptr) xids_->Stop();
}

Result<std::unique_ptr<Collector>> Collector::Create(const nvml::Library& lib,
                                                     CollectorOptions options) {
  std::unique_ptr<Collector> c(new Collector(std::move(options)));
  Result<unsigned> count = lib.DeviceCount();
  if (!count.ok()) return count.status();
  const config::DeviceSelector& sel = c->options_.devices;
  if (!sel.all) {
    for (unsigned id : sel.ids) {
      if (id >= *count) {
        return InvalidArgument("device selector names GPU " + std::to_string(id) + " but only " +
                               std::to_string(*count) + " GPU(s) exist");
      }
    }
  }
  const auto fast_fields = MetricFields(c->options_.entries, fields::Cost::kFast);
  const auto slow_fields = MetricFields(c->options_.entries, fields::Cost::kSlow);
  const auto gpm_fields = GpmFields(c->options_.entries);
  std::vector<const fields::FieldDef*> label_fields;
  for (const auto& row : c->options_.entries) {
    if (row.type == config::MetricType::kLabel) {
      label_fields.push_back(row.field);
      continue;
    }
    if (row.field->id == kXidErrorsField) c->xid_last_enabled_ = true;
    if (row.field->id == kXidCountField) c->xid_counts_enabled_ = true;
  }

  auto identities = std::make_shared<std::vector<DeviceIdentity>>();
  for (unsigned i = 0; i < *count; ++i) {
    if (!sel.SelectsGpu(i)) continue;
    Result<nvml::Device> handle = lib.DeviceByIndex(i);
    if (!handle.ok()) {
      // Counted but not reachable (NO_PERMISSION, GPU_IS_LOST at start): skip it, loudly.
      log::Error("cannot open GPU; it will not be collected",
                 {{"gpu", std::to_string(i)}, {"err", handle.status().ToString()}});
      continue;
    }
    DeviceIdentity id;
    id.index = i;
    if (auto r = lib.Uuid(*handle); r.ok()) id.uuid = *r;
    if (auto r = lib.Name(*handle); r.ok()) id.model_name = *r;
    if (c->options_.replace_blanks_in_model_name) id.model_name = ReplaceBlanks(id.model_name);
    if (auto r = lib.Pci(*handle); r.ok()) id.pci_bus_id = r->bus_id;
    if (auto r = lib.MinorNumber(*handle); r.ok()) id.minor_number = *r;
    fields::ReadContext ctx{lib, *handle, {}, {}, {}};
    for (const fields::FieldDef* f : label_fields) {
      if (f->read == nullptr) continue;
      Result<fields::Value> v = f->read(ctx);
      if (!v.ok()) {
        log::Warn("label field unavailable; label omitted", {{"gpu", std::to_string(i)},
                                                             {"field", std::string(f->name)},
                                                             {"err", v.status().ToString()}});
        continue;
      }
      std::string text;
      if (const auto* s = std::get_if<std::string>(&*v)) {
        text = *s;
      } else if (const auto* n = std::get_if<int64_t>(&*v)) {
        text = std::to_string(*n);
      } else {
        text = std::to_string(std::get<double>(*v));
      }
      id.label_values.emplace_back(f->id, std::move(text));
    }
    auto dev = std::make_unique<Device>();
    dev->handle = *handle;
    dev->fast = std::make_unique<fields::DeviceReader>(lib, *handle, fast_fields);
    dev->slow = std::make_unique<fields::DeviceReader>(lib, *handle, slow_fields);
    // Rate fields (NVLINK_BANDWIDTH_TOTAL) need a previous raw sample: take it now, so the very
    // first collection (and --once) already has them. Errors surface on the real reads.
    std::vector<fields::Sample> ignored_samples;
    std::vector<fields::FieldError> ignored_errors;
    dev->fast->Read(&ignored_samples, &ignored_errors);
    // Takes GPM's priming sample too (or warns once per field when the GPU has no GPM).
    dev->gpm = GpmReader::Create(lib, *handle, i, gpm_fields);
    if (c->options_.process_metrics) dev->processes = std::make_unique<ProcessReader>(lib, *handle);
    c->devices_.push_back(std::move(dev));
    identities->push_back(std::move(id));
  }
  c->identities_ = std::move(identities);
  c->slow_latest_.resize(c->devices_.size());
  if (c->xid_last_enabled_ || c->xid_counts_enabled_) {
    std::vector<XidWatcher::Gpu> gpus;
    for (size_t i = 0; i < c->devices_.size(); ++i) {
      gpus.push_back({c->devices_[i]->handle, (*c->identities_)[i].index});
    }
    c->xids_ = XidWatcher::Create(lib, std::move(gpus), c->options_.xid_window);
    c->xids_->Start();
  }
  return c;
}

void Collector::NoteErrors(size_t device, const std::vector<fields::FieldError>& errors) {
  for (const auto& e : errors) {
    const std::string gpu = std::to_string((*identities_)[device].index);
    if (e.status.code() == StatusCode::kGpuLost) {
      if (!devices_[device]->lost.exchange(true)) {
        log::Error(
            "GPU is lost (fell off the bus?); its series stop, other GPUs continue",
            {{"gpu", gpu}, {"UUID", (*identities_)[device].uuid}, {"err", e.status.ToString()}});
      }
      continue;
    }
    std::lock_guard<std::mutex> lock(log_mu_);
    if (logged_.emplace(device, e.field_id).second) {
      const fields::FieldDef* f = fields::FindById(e.field_id);
      log::Warn("field read failed; series omitted (logged once per GPU and field)",
                {{"gpu", gpu},
                 {"field", f != nullptr ? std::string(f->name) : std::to_string(e.field_id)},
                 {"err", e.status.ToString()}});
    }
  }
}

void Collector::NoteGpmFailure(size_t device, const Status& status) {
  const std::string gpu = std::to_string((*identities_)[device].index);
  if (status.code() == StatusCode::kGpuLost) {
    NoteErrors(device, {fields::FieldError{0, status}});
    return;
  }
  std::lock_guard<std::mutex> lock(log_mu_);
  if (logged_.emplace(device, 0).second) {
    log::Warn("GPM sampling failed; DCGM_FI_PROF_* series omitted (logged once per GPU)",
              {{"gpu", gpu}, {"err", status.ToString()}});
  }
}

void Collector::NoteProcessFailure(size_t device, const Status& status) {
  if (status.code() == StatusCode::kGpuLost) {
    NoteErrors(device, {fields::FieldError{-1, status}});
    return;
  }
  std::lock_guard<std::mutex> lock(log_mu_);
  if (logged_.emplace(device, -1).second) {
    log::Warn("per-process read failed; processes of this GPU degraded (logged once per GPU)",
              {{"gpu", std::to_string((*identities_)[device].index)}, {"err", status.ToString()}});
  }
}

void Collector::ReadSlow() {
  for (size_t i = 0; i < devices_.size(); ++i) {
    if (devices_[i]->lost.load()) continue;
    std::vector<fields::Sample> samples;
    std::vector<fields::FieldError> errors;
    devices_[i]->slow->Read(&samples, &errors);
    NoteErrors(i, errors);
    std::lock_guard<std::mutex> lock(slow_mu_);
    slow_latest_[i] = std::move(samples);
  }
}

std::shared_ptr<const Snapshot> Collector::Collect(bool read_slow_inline) {
  auto snap = std::make_shared<Snapshot>();
  snap->time = std::chrono::system_clock::now();
  const auto start = Clock::now();
  if (read_slow_inline) ReadSlow();
  snap->identities = identities_;
  snap->devices.resize(devices_.size());
  for (size_t i = 0; i < devices_.size(); ++i) {
    DeviceSnapshot& ds = snap->devices[i];
    ds.identity = &(*identities_)[i];
    if (devices_[i]->lost.load()) {
      ds.up = false;
      continue;
    }
    std::vector<fields::FieldError> errors;
    devices_[i]->fast->Read(&ds.samples, &errors);
    NoteErrors(i, errors);
    if (devices_[i]->gpm != nullptr && !devices_[i]->lost.load()) {
      std::vector<fields::Sample> prof;
      std::vector<fields::FieldError> prof_errors;
      Status st = devices_[i]->gpm->Read(&prof, &prof_errors);
      NoteErrors(i, prof_errors);
      if (!st.ok()) NoteGpmFailure(i, st);
      MergeSorted(&ds.samples, prof);
    }
    if (devices_[i]->processes != nullptr && !devices_[i]->lost.load()) {
      if (Status st = devices_[i]->processes->Read(&ds.processes); !st.ok()) {
        NoteProcessFailure(i, st);
      }
    }
    if (devices_[i]->lost.load()) {
      ds.up = false;
      ds.samples.clear();
      ds.processes.clear();
      continue;
    }
    if (xids_ != nullptr) {
      int64_t last = 0;
      std::vector<XidCount> counts;
      if (xids_->Read(i, &last, &counts)) {
        if (xid_last_enabled_) MergeSorted(&ds.samples, {fields::Sample{kXidErrorsField, last}});
        if (xid_counts_enabled_) {
          ds.xid_watched = true;
          ds.xid_counts = std::move(counts);
        }
      }
    }
    std::lock_guard<std::mutex> lock(slow_mu_);
    MergeSorted(&ds.samples, slow_latest_[i]);
  }
  snap->xid_window_ms = options_.xid_window.count();
  if (options_.attribution) snap->attribution = options_.attribution();
  snap->collect_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return snap;
}

std::shared_ptr<const Snapshot> Collector::CollectOnce() {
  // GPM values are window averages: give the window since the priming sample a useful length.
  Clock::time_point ready = Clock::now();
  for (const auto& d : devices_) {
    if (d->gpm != nullptr) {
      ready = std::max(ready, d->gpm->ReadyAt() - GpmReader::kMinWindow + kOnceGpmWindow);
    }
  }
  std::this_thread::sleep_until(ready);
  return Collect(true);
}

void Collector::Start(PublishFn publish) {
  publish_ = std::move(publish);
  {
    std::lock_guard<std::mutex> lock(stop_mu_);
    stopping_ = false;
  }
  // The first snapshot carries slow fields too, so the first scrape is complete.
  publish_(Collect(true));
  fast_thread_ = std::thread([this] { FastLoop(); });
  slow_thread_ = std::thread([this] { SlowLoop(); });
}

void Collector::Stop() {
  {
    std::lock_guard<std::mutex> lock(stop_mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (fast_thread_.joinable()) fast_thread_.join();
  if (slow_thread_.joinable()) slow_thread_.join();
}

void Collector::FastLoop() {
  // Ticks on a fixed schedule (not "sleep interval after work"), so the collection rate does not
  // drift with the time the reads take. A round that overruns skips the ticks it missed.
  auto next = Clock::now() + options_.interval;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(stop_mu_);
      if (stop_cv_.wait_until(lock, next, [this] { return stopping_; })) return;
    }
    publish_(Collect(false));
    next += options_.interval;
    const auto now = Clock::now();
    if (next < now) {
      const auto behind = (now - next) / options_.interval + 1;
      log::Debug("collection overran its interval; skipping ticks",
                 {{"skipped", std::to_string(behind)}});
      next += behind * options_.interval;
    }
  }
}

void Collector::SlowLoop() {
  auto next = Clock::now() + options_.interval;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(stop_mu_);
      if (stop_cv_.wait_until(lock, next, [this] { return stopping_; })) return;
    }
    ReadSlow();
    next += options_.interval;
    const auto now = Clock::now();
    if (next < now) next = now + options_.interval / 2;
  }
}

}  // namespace nvmlx::collect
