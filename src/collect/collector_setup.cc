// Collector, part 4: creation. Every selected GPU is opened and identified on its own fast
// worker, all at once, then its readers are built and primed there too, so that a call hung in one
// GPU's set-up holds that GPU only: Create returns after the set-up deadline with that GPU stale
// and the others collected (hardening round two, row 5; docs/faults.md).
#include <algorithm>
#include <string>

#include "collect/collector.h"
#include "util/log.h"

namespace nvmlx::collect {
namespace {

using Clock = std::chrono::steady_clock;

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

// The identity of GPU `index`, read once: UUID, name, PCI bus id, minor number and the values of
// the CSV's label rows (a failing label is omitted with one warning).
model::DeviceIdentity ReadIdentity(const nvml::Library& lib, nvml::Device handle, unsigned index,
                                   bool replace_blanks,
                                   const std::vector<const fields::FieldDef*>& label_fields) {
  model::DeviceIdentity id;
  id.index = index;
  // A failing identity read leaves its label out of every series of the GPU (never `UUID=""`);
  // said once here, as it is read once.
  auto unreadable = [index](const char* label, const Status& st) {
    log::Error("GPU identity read failed; the label is left out of its series",
               {{"gpu", std::to_string(index)}, {"label", label}, {"err", st.ToString()}});
  };
  if (auto r = lib.Uuid(handle); r.ok()) {
    id.uuid = *r;
  } else {
    unreadable("UUID", r.status());
  }
  if (auto r = lib.Name(handle); r.ok()) {
    id.model_name = *r;
  } else {
    unreadable("modelName", r.status());
  }
  if (replace_blanks) id.model_name = ReplaceBlanks(id.model_name);
  if (auto r = lib.Pci(handle); r.ok()) {
    id.pci_bus_id = r->bus_id;
  } else {
    unreadable("pci_bus_id", r.status());
  }
  if (auto r = lib.MinorNumber(handle); r.ok()) id.minor_number = *r;
  fields::ReadContext ctx{lib, handle, {}, {}, {}};
  for (const fields::FieldDef* f : label_fields) {
    if (f->read == nullptr) continue;
    Result<model::Value> v = f->read(ctx);
    if (!v.ok()) {
      log::Warn("label field unavailable; label omitted", {{"gpu", std::to_string(index)},
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
  return id;
}

}  // namespace

Result<std::unique_ptr<Collector>> Collector::Create(const nvml::Library& lib,
                                                     CollectorOptions options) {
  std::unique_ptr<Collector> c(new Collector(lib, std::move(options)));
  if (c->options_.plan == nullptr) return InvalidArgument("Collector::Create: no field plan");
  c->plan_.Publish(c->options_.plan);
  Result<unsigned> count = lib.DeviceCount();
  if (!count.ok()) return count.status();
  if (Status st = c->CheckGpuSelector(*count); !st.ok()) return st;
  const config::DeviceSelector& sel = c->options_.devices;
  const bool instance_list =
      (sel.kind == config::DeviceSelector::Kind::kInstances && !sel.all) ||
      (sel.kind == config::DeviceSelector::Kind::kGpusAndInstances && !sel.instances_all);
  // 1. Every selected GPU opened and identified on its own worker, all at once. An instance list
  //    numbers the host's MIG instances GPU by GPU, so it needs every GPU's layout: it waits.
  std::vector<ProbedGpu> probed = c->ProbeGpus(*count, /*wait_for_all=*/instance_list);
  // 2. The entities, in GPU order.
  auto identities = std::make_shared<std::vector<model::DeviceIdentity>>();
  unsigned instance_count = 0;  // MIG instances seen so far on the host
  for (ProbedGpu& p : probed) c->AddGpu(std::move(p), &instance_count, identities.get());
  if (instance_list) {
    const std::vector<unsigned>& ids =
        sel.kind == config::DeviceSelector::Kind::kInstances ? sel.ids : sel.instance_ids;
    for (unsigned id : ids) {
      if (id >= instance_count) {
        return InvalidArgument("device selector names MIG instance " + std::to_string(id) +
                               " but only " + std::to_string(instance_count) +
                               " MIG instance(s) exist");
      }
    }
  }
  c->identities_ = std::move(identities);
  c->slow_.Resize(c->devices_.size());
  c->rounds_.Resize(c->groups_.size());
  c->StartXidWatcher();
  // 3. Each GPU's readers and their priming reads, on its fast worker, all at once.
  c->PrimeGroups();
  return c;
}

Status Collector::CheckGpuSelector(unsigned count) const {
  const config::DeviceSelector& sel = options_.devices;
  if (sel.all || (sel.kind != config::DeviceSelector::Kind::kGpus &&
                  sel.kind != config::DeviceSelector::Kind::kGpusAndInstances)) {
    return Status::Ok();
  }
  for (unsigned id : sel.ids) {
    if (id >= count) {
      return InvalidArgument("device selector names GPU " + std::to_string(id) + " but only " +
                             std::to_string(count) + " GPU(s) exist");
    }
  }
  return Status::Ok();
}

std::vector<Collector::ProbedGpu> Collector::ProbeGpus(unsigned count, bool wait_for_all) {
  const config::DeviceSelector& sel = options_.devices;
  std::vector<ProbedGpu> out;
  for (unsigned i = 0; i < count; ++i) {
    if (sel.kind == config::DeviceSelector::Kind::kGpus && !sel.SelectsGpu(i)) continue;
    ProbedGpu p;
    p.probe = std::make_shared<GpuProbe>();
    p.probe->index = i;
    p.fast = std::make_unique<DeviceWorker>("gpu " + std::to_string(i) + " fast reads", clock_);
    p.slow = std::make_unique<DeviceWorker>("gpu " + std::to_string(i) + " slow reads", clock_);
    out.push_back(std::move(p));
  }
  rounds_.Resize(out.size());
  const std::optional<uint64_t> round = rounds_.Begin(static_cast<int>(out.size()));
  std::vector<std::pair<unsigned, const DeviceWorker*>> workers;
  for (ProbedGpu& p : out) {
    std::shared_ptr<GpuProbe> probe = p.probe;  // the job's own: it may outlive Create
    const bool read_mig = sel.kind != config::DeviceSelector::Kind::kGpus;
    (void)p.fast->Post(
        [this, probe, read_mig] {
          Probe(probe.get(), read_mig);
          int expected = GpuProbe::kRunning;
          if (!probe->state.compare_exchange_strong(expected, GpuProbe::kDone))
            NoteLateProbe(*probe);
        },
        [this, round] { rounds_.FinishJob(*round); });
    workers.emplace_back(p.probe->index, p.fast.get());
  }
  AwaitSetUp(*round, "opening and identifying the GPU", workers, wait_for_all);
  for (ProbedGpu& p : out) {
    // Whichever comes first, the job's end or this, decides who owns the probe's results.
    int expected = GpuProbe::kRunning;
    p.claimed = !p.probe->state.compare_exchange_strong(expected, GpuProbe::kAbandoned);
  }
  return out;
}

void Collector::Probe(GpuProbe* probe, bool read_mig) {
  const unsigned i = probe->index;
  Result<nvml::Device> handle = lib_.DeviceByIndex(i);
  if (!handle.ok()) {
    probe->open = handle.status();
    return;
  }
  probe->handle = *handle;
  probe->identity = ReadIdentity(lib_, *handle, i, options_.replace_blanks_in_model_name,
                                 options_.plan->label_fields());
  if (!read_mig) return;
  // MIG: `g` looks at GPUs only; `f` and `i` split a MIG-enabled GPU into its instances.
  if (Result<bool> m = lib_.MigEnabled(*handle); !m.ok()) {
    log::Warn("cannot read the MIG mode; collecting the GPU as a whole",
              {{"gpu", std::to_string(i)}, {"err", m.status().ToString()}});
  } else if (*m) {
    probe->mig_on = true;
    probe->instances = DiscoverMig(lib_, *handle, i);
  }
}

void Collector::NoteLateProbe(const GpuProbe& probe) {
  // The entities were laid out without it: a GPU cannot join afterwards (MIG instances, the
  // attribution's device list and the Xid watcher are fixed at start), so it takes a restart.
  log::Warn(
      "GPU set-up finished after the start-up stopped waiting for it; the daemon restarts to "
      "collect it",
      {{"gpu", std::to_string(probe.index)},
       {"opened", probe.open.ok() ? "yes" : probe.open.ToString()}});
  if (options_.on_late_gpu) options_.on_late_gpu();
}

void Collector::AwaitSetUp(uint64_t round, const char* step,
                           const std::vector<std::pair<unsigned, const DeviceWorker*>>& workers,
                           bool wait_for_all) {
  const util::Clock::TimePoint start = clock_->Now();
  if (rounds_.AwaitJobs(round, clock_, start + read_deadline_)) return;
  // Past the read deadline: each GPU still setting up is named with the call it is in, once.
  // At the read deadline only a GPU inside an NVML call is an error: outside NVML the set-up is
  // in the profiling sources' own start (on an H100 at -c 1000, loading CUPTI ~0.3 s, then its
  // configuration and enable: ~0.8 s in all against the 0.5 s read deadline), which is slow, not
  // stuck; the set-up deadline still names it as an error if it never ends.
  auto name_stuck = [&](const char* what, bool outside_nvml_is_slow) {
    for (const auto& [gpu, w] : workers) {
      if (!w->BusySince()) continue;
      const char* call = w->CurrentCall();
      if (call == nullptr && outside_nvml_is_slow) {
        log::Info(
            "GPU set-up is still running at the read deadline, outside NVML (the profiling "
            "set-up); the start-up waits for it up to the set-up deadline",
            {{"gpu", std::to_string(gpu)}, {"step", step}});
        continue;
      }
      log::Error(what, {{"gpu", std::to_string(gpu)},
                        {"step", step},
                        {"call", call != nullptr ? call : "(between NVML calls)"}});
    }
  };
  name_stuck(
      "GPU set-up has not finished within the read deadline; the start-up waits for it up to the "
      "set-up deadline",
      /*outside_nvml_is_slow=*/true);
  const util::Clock::TimePoint until =
      start + std::max<util::Clock::Duration>(read_deadline_, kSetUpDeadline);
  if (rounds_.AwaitJobs(round, clock_, until)) return;
  if (wait_for_all) {
    log::Error(
        "the device selector lists MIG instances by number, which needs every GPU's layout: the "
        "start-up waits for the GPU's set-up to finish");
    (void)rounds_.AwaitJobs(round, clock_, util::Clock::TimePoint::max());
    return;
  }
  name_stuck(
      "GPU set-up did not finish within the set-up deadline; the GPU is published stale "
      "(gpu_up 0, /health failing) and the other GPUs are served",
      /*outside_nvml_is_slow=*/false);
}

void Collector::AddGpu(ProbedGpu p, unsigned* instance_count,
                       std::vector<model::DeviceIdentity>* identities) {
  const config::DeviceSelector& sel = options_.devices;
  const unsigned i = p.probe->index;
  if (!p.claimed) {
    // Still in its set-up: a GPU known by its index only, never read; its worker is busy.
    auto dev = std::make_unique<Device>();
    dev->index = i;
    AddGroup(std::move(p), {devices_.size()}, /*never_read=*/true);
    devices_.push_back(std::move(dev));
    model::DeviceIdentity id;
    id.index = i;
    identities->push_back(std::move(id));
    return;
  }
  // Ours for the rest of this function (AddGroup takes p, and the job may drop its own).
  const std::shared_ptr<GpuProbe> kept = p.probe;
  GpuProbe& probe = *kept;
  if (probe.open.code() == StatusCode::kGpuLost) {
    // Lost before we could open it (fell off the bus before start): an entity with no handle
    // and no readers, lost from the first snapshot, so that gpu_up says 0 and /health counts it
    // instead of the GPU vanishing from the page (hardening round two, row 6).
    log::Error("GPU is lost at start (fell off the bus?); reported as down, never read",
               {{"gpu", std::to_string(i)}, {"err", probe.open.ToString()}});
    auto dev = std::make_unique<Device>();
    dev->index = i;
    dev->lost.store(true);
    AddGroup(std::move(p), {devices_.size()}, /*never_read=*/false);
    devices_.push_back(std::move(dev));
    model::DeviceIdentity id;
    id.index = i;
    identities->push_back(std::move(id));
    return;
  }
  if (!probe.open.ok()) {
    // Counted but not reachable (NO_PERMISSION: a GPU this container may not open): skip it,
    // loudly.
    log::Error("cannot open GPU; it will not be collected",
               {{"gpu", std::to_string(i)}, {"err", probe.open.ToString()}});
    return;
  }
  const nvml::Device handle = probe.handle;
  model::DeviceIdentity id = std::move(probe.identity);
  bool mig_on = probe.mig_on;
  const std::vector<MigInstance>& instances = probe.instances;
  std::vector<const MigInstance*> chosen;
  for (const MigInstance& inst : instances) {
    // `i:<ids>` numbers the MIG instances of the host from 0, GPU by GPU in slot order.
    const unsigned ordinal = (*instance_count)++;
    if (sel.SelectsInstance(ordinal)) chosen.push_back(&inst);
  }
  if (sel.kind == config::DeviceSelector::Kind::kInstances && chosen.empty()) return;
  if (sel.kind == config::DeviceSelector::Kind::kGpusAndInstances && chosen.empty()) {
    // `g+i`: a GPU none of whose instances is chosen is collected as `g` collects it, or not.
    if (!sel.SelectsGpu(i)) return;
    mig_on = false;
  }
  // (`g+i` with chosen instances: the GPU is their parent, as under `f`, whether or not the g
  // part names it: an instance's series need their GPU's identity and GPU-wide fields.)
  const size_t gpu_position = devices_.size();
  model::DeviceIdentity parent_identity = id;
  AddEntity(handle, std::move(id), mig_on ? plan::Scope::kMigGpu : plan::Scope::kWhole, handle,
            std::nullopt, std::nullopt, identities);
  // Processes are listed per MIG instance on a MIG-enabled GPU (the parent's list is the
  // aggregate, and only for privileged users: docs/nvml.md §5).
  if (options_.process_metrics && !mig_on) {
    devices_.back()->processes = std::make_unique<ProcessReader>(lib_, handle);
  }
  for (const MigInstance* inst : chosen) {
    model::DeviceIdentity inst_id = parent_identity;
    inst_id.mig = inst->mig;
    AddEntity(inst->handle, std::move(inst_id), plan::Scope::kInstance, handle,
              inst->mig.gpu_instance_id, gpu_position, identities);
    if (options_.process_metrics) {
      devices_.back()->processes =
          std::make_unique<ProcessReader>(lib_, inst->handle, ProcessReader::Mode::kMemoryOnly);
    }
  }
  std::vector<size_t> group;
  for (size_t k = gpu_position; k < devices_.size(); ++k) group.push_back(k);
  AddGroup(std::move(p), std::move(group), /*never_read=*/false);
  if (mig_on) {
    log::Info("MIG enabled", {{"gpu", std::to_string(i)},
                              {"instances", std::to_string(instances.size())},
                              {"collected", std::to_string(chosen.size())}});
  }
}

void Collector::StartXidWatcher() {
  // (The health readers came with each GPU's plan: ApplyFastPlan.)
  if (!options_.plan->NeedsXidWatcher() && !options_.watch_faults) return;
  std::vector<XidWatcher::Gpu> gpus;
  for (size_t i = 0; i < devices_.size(); ++i) {
    if (devices_[i]->parent) continue;  // Xids are reported for the GPU
    // Lost at start, or still in its set-up: no handle to watch.
    if (devices_[i]->lost.load() || devices_[i]->handle == nullptr) continue;
    devices_[i]->xid_slot = gpus.size();
    gpus.push_back({devices_[i]->handle, (*identities_)[i].index});
  }
  xids_ = XidWatcher::Create(lib_, std::move(gpus), options_.xid_window, clock_);
  xids_->Start();
}

void Collector::AddGroup(ProbedGpu p, std::vector<size_t> devices, bool never_read) {
  Group g;
  g.devices = std::move(devices);
  g.fast = std::move(p.fast);
  g.slow = std::move(p.slow);
  g.never_read = never_read;
  groups_.push_back(std::move(g));
}

void Collector::PrimeGroups() {
  const std::optional<uint64_t> round = rounds_.Begin(static_cast<int>(groups_.size()));
  std::vector<std::pair<unsigned, const DeviceWorker*>> workers;
  for (size_t g = 0; g < groups_.size(); ++g) {
    Group& group = groups_[g];
    workers.emplace_back((*identities_)[group.devices.front()].index, group.fast.get());
    if (group.never_read) {
      rounds_.Skip(1);
      continue;
    }
    // The slow readers make no NVML call until they read: built here, before the slow worker's
    // first job.
    for (size_t i : group.devices) {
      if (!Lost(i)) ApplySlowPlan(i, *options_.plan);
    }
    const bool posted = group.fast->Post(
        [this, g] {
          for (size_t i : groups_[g].devices) {
            if (!Lost(i)) ApplyFastPlan(i, *options_.plan);
          }
          groups_[g].set_up->store(true);
        },
        [this, round] { rounds_.FinishJob(*round); });
    if (!posted) rounds_.Skip(1);  // (its probe is done: the worker is idle)
  }
  AwaitSetUp(*round, "building its readers (priming reads)", workers, /*wait_for_all=*/false);
}

void Collector::AddEntity(nvml::Device handle, model::DeviceIdentity identity, plan::Scope scope,
                          nvml::Device gpm_device, std::optional<unsigned> gpm_gpu_instance,
                          std::optional<size_t> parent,
                          std::vector<model::DeviceIdentity>* identities) {
  auto dev = std::make_unique<Device>();
  dev->handle = handle;
  dev->parent = parent;
  dev->scope = scope;
  dev->index = identity.index;
  dev->gpm_device = gpm_device;
  dev->gpm_gi = gpm_gpu_instance;
  dev->mig_gpu = scope != plan::Scope::kWhole;
  dev->pci_bus_id = identity.pci_bus_id;
  devices_.push_back(std::move(dev));
  identities->push_back(std::move(identity));
  // Its readers come once every GPU is laid out, on its GPU's workers (PrimeGroups).
}

}  // namespace nvmlx::collect
