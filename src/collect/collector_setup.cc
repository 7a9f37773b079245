// Collector::Create's steps (collect/collector_setup.h): probing the GPUs, laying out their
// entities and groups, the Xid watcher, and priming each group's readers.
#include "collect/collector_setup.h"

#include <algorithm>
#include <string>

#include "util/log.h"

namespace nvmlx::collect {
namespace {

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

Result<std::vector<std::unique_ptr<GpuGroup>>> CollectorSetUp::LayOut(unsigned count) {
  if (Status st = CheckGpuSelector(count); !st.ok()) return st;
  const config::DeviceSelector& sel = ctx_.options.devices;
  const bool instance_list =
      (sel.kind == config::DeviceSelector::Kind::kInstances && !sel.all) ||
      (sel.kind == config::DeviceSelector::Kind::kGpusAndInstances && !sel.instances_all);
  // 1. Every selected GPU opened and identified on its own worker, all at once. An instance list
  //    numbers the host's MIG instances GPU by GPU, so it needs every GPU's layout: it waits.
  std::vector<ProbedGpu> probed = ProbeGpus(count, /*wait_for_all=*/instance_list);
  // 2. The entities, in GPU order.
  Groups groups;
  unsigned instance_count = 0;  // MIG instances seen so far on the host
  for (ProbedGpu& p : probed) AddGpu(std::move(p), &instance_count, &groups);
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
  return groups;
}

Status CollectorSetUp::CheckGpuSelector(unsigned count) const {
  const config::DeviceSelector& sel = ctx_.options.devices;
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

std::vector<CollectorSetUp::ProbedGpu> CollectorSetUp::ProbeGpus(unsigned count,
                                                                 bool wait_for_all) {
  const config::DeviceSelector& sel = ctx_.options.devices;
  std::vector<ProbedGpu> out;
  for (unsigned i = 0; i < count; ++i) {
    if (sel.kind == config::DeviceSelector::Kind::kGpus && !sel.SelectsGpu(i)) continue;
    ProbedGpu p;
    p.probe = std::make_shared<GpuProbe>();
    p.probe->index = i;
    p.fast = std::make_unique<DeviceWorker>("gpu " + std::to_string(i) + " fast reads", ctx_.clock);
    p.slow = std::make_unique<DeviceWorker>("gpu " + std::to_string(i) + " slow reads", ctx_.clock);
    out.push_back(std::move(p));
  }
  // A set-up round counts jobs only (no answers): the board is sized for the groups later.
  const std::optional<uint64_t> round = rounds_.Begin(static_cast<int>(out.size()));
  std::vector<std::pair<unsigned, const DeviceWorker*>> workers;
  for (ProbedGpu& p : out) {
    std::shared_ptr<GpuProbe> probe = p.probe;  // the job's own: it may outlive Create
    const bool read_mig = sel.kind != config::DeviceSelector::Kind::kGpus;
    // The job holds no pointer to this CollectorSetUp: it may end after Create returned.
    const GroupContext* ctx = &ctx_;
    RoundBoard* rounds = &rounds_;
    (void)p.fast->Post(
        [ctx, probe, read_mig] {
          Probe(*ctx, probe.get(), read_mig);
          int expected = GpuProbe::kRunning;
          if (!probe->state.compare_exchange_strong(expected, GpuProbe::kDone)) {
            NoteLateProbe(*ctx, *probe);
          }
        },
        [rounds, round] { rounds->FinishJob(*round); });
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

void CollectorSetUp::Probe(const GroupContext& ctx, GpuProbe* probe, bool read_mig) {
  const nvml::Library& lib = ctx.lib;
  const unsigned i = probe->index;
  Result<nvml::Device> handle = lib.DeviceByIndex(i);
  if (!handle.ok()) {
    probe->open = handle.status();
    return;
  }
  probe->handle = *handle;
  probe->identity = ReadIdentity(lib, *handle, i, ctx.options.replace_blanks_in_model_name,
                                 ctx.options.plan->label_fields());
  if (!read_mig) return;
  // MIG: `g` looks at GPUs only; `f` and `i` split a MIG-enabled GPU into its instances.
  if (Result<bool> m = lib.MigEnabled(*handle); !m.ok()) {
    log::Warn("cannot read the MIG mode; collecting the GPU as a whole",
              {{"gpu", std::to_string(i)}, {"err", m.status().ToString()}});
  } else if (*m) {
    probe->mig_on = true;
    probe->instances = DiscoverMig(lib, *handle, i);
  }
}

void CollectorSetUp::NoteLateProbe(const GroupContext& ctx, const GpuProbe& probe) {
  // The entities were laid out without it: a GPU cannot join afterwards (MIG instances, the
  // attribution's device list and the Xid watcher are fixed at start), so it takes a restart.
  log::Warn(
      "GPU set-up finished after the start-up stopped waiting for it; the daemon restarts to "
      "collect it",
      {{"gpu", std::to_string(probe.index)},
       {"opened", probe.open.ok() ? "yes" : probe.open.ToString()}});
  if (ctx.options.on_late_gpu) ctx.options.on_late_gpu();
}

void CollectorSetUp::AwaitSetUp(
    uint64_t round, const char* step,
    const std::vector<std::pair<unsigned, const DeviceWorker*>>& workers, bool wait_for_all) {
  util::Clock* clock = ctx_.clock;
  const util::Clock::TimePoint start = clock->Now();
  if (rounds_.AwaitJobs(round, clock, start + read_deadline_)) return;
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
  if (rounds_.AwaitJobs(round, clock, until)) return;
  if (wait_for_all) {
    log::Error(
        "the device selector lists MIG instances by number, which needs every GPU's layout: the "
        "start-up waits for the GPU's set-up to finish");
    (void)rounds_.AwaitJobs(round, clock, util::Clock::TimePoint::max());
    return;
  }
  name_stuck(
      "GPU set-up did not finish within the set-up deadline; the GPU is published stale "
      "(gpu_up 0, /health failing) and the other GPUs are served",
      /*outside_nvml_is_slow=*/false);
}

void CollectorSetUp::AddPlaceholder(ProbedGpu p, bool lost, Groups* groups) {
  const unsigned i = p.probe->index;
  EntityFixed fixed;
  fixed.index = i;
  model::DeviceIdentity id;
  id.index = i;
  const size_t position = ctx_.entities.Add(std::move(fixed), std::move(id), lost);
  // Never read: its set-up is still running (its worker is busy). Lost: read by nothing, but its
  // rounds still publish it (down).
  AddGroup(std::move(p), {position}, /*never_read=*/!lost, groups);
}

void CollectorSetUp::AddGpu(ProbedGpu p, unsigned* instance_count, Groups* groups) {
  const config::DeviceSelector& sel = ctx_.options.devices;
  const unsigned i = p.probe->index;
  if (!p.claimed) {
    // Still in its set-up: a GPU known by its index only, never read; its worker is busy.
    AddPlaceholder(std::move(p), /*lost=*/false, groups);
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
    AddPlaceholder(std::move(p), /*lost=*/true, groups);
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
  Entities& entities = ctx_.entities;
  const size_t gpu_position = entities.size();
  model::DeviceIdentity parent_identity = id;
  AddEntity(handle, std::move(id), mig_on ? plan::Scope::kMigGpu : plan::Scope::kWhole, handle,
            std::nullopt, std::nullopt);
  // Processes are listed per MIG instance on a MIG-enabled GPU (the parent's list is the
  // aggregate, and only for privileged users: docs/nvml.md §5).
  if (ctx_.options.process_metrics && !mig_on) {
    entities.fast(gpu_position).processes = std::make_unique<ProcessReader>(ctx_.lib, handle);
  }
  for (const MigInstance* inst : chosen) {
    model::DeviceIdentity inst_id = parent_identity;
    inst_id.mig = inst->mig;
    AddEntity(inst->handle, std::move(inst_id), plan::Scope::kInstance, handle,
              inst->mig.gpu_instance_id, gpu_position);
    if (ctx_.options.process_metrics) {
      entities.fast(entities.size() - 1).processes =
          std::make_unique<ProcessReader>(ctx_.lib, inst->handle, ProcessReader::Mode::kMemoryOnly);
    }
  }
  std::vector<size_t> group;
  for (size_t k = gpu_position; k < entities.size(); ++k) group.push_back(k);
  AddGroup(std::move(p), std::move(group), /*never_read=*/false, groups);
  if (mig_on) {
    log::Info("MIG enabled", {{"gpu", std::to_string(i)},
                              {"instances", std::to_string(instances.size())},
                              {"collected", std::to_string(chosen.size())}});
  }
}

std::unique_ptr<XidWatcher> CollectorSetUp::StartXidWatcher() {
  // (The health readers come with each GPU's plan: FastReads::Prime.)
  if (!ctx_.options.plan->NeedsXidWatcher() && !ctx_.options.watch_faults) return nullptr;
  Entities& entities = ctx_.entities;
  std::vector<XidWatcher::Gpu> gpus;
  for (size_t i = 0; i < entities.size(); ++i) {
    if (entities.fixed(i).parent) continue;  // Xids are reported for the GPU
    // Lost at start, or still in its set-up: no handle to watch.
    if (entities.Lost(i) || entities.fixed(i).handle == nullptr) continue;
    entities.mutable_fixed(i).xid_slot = gpus.size();
    gpus.push_back({entities.fixed(i).handle, entities.identity(i).index});
  }
  std::unique_ptr<XidWatcher> xids =
      XidWatcher::Create(ctx_.lib, std::move(gpus), ctx_.options.xid_window, ctx_.clock);
  xids->Start();
  return xids;
}

void CollectorSetUp::AddGroup(ProbedGpu p, std::vector<size_t> devices, bool never_read,
                              Groups* groups) {
  groups->push_back(std::make_unique<GpuGroup>(ctx_, std::move(devices), std::move(p.fast),
                                               std::move(p.slow), never_read));
}

void CollectorSetUp::PrimeGroups(const Groups& groups) {
  const std::optional<uint64_t> round = rounds_.Begin(static_cast<int>(groups.size()));
  std::vector<std::pair<unsigned, const DeviceWorker*>> workers;
  for (const std::unique_ptr<GpuGroup>& group : groups) {
    workers.emplace_back(ctx_.entities.identity(group->devices().front()).index,
                         &group->fast_worker());
    if (group->never_read()) {
      rounds_.Skip(1);
      continue;
    }
    // The slow readers make no NVML call until they read: built here, before the slow worker's
    // first job (which owns them from then on).
    group->slow_reads().Prime(*ctx_.options.plan);
    GpuGroup* g = group.get();  // the Collector's from now on: it outlives the worker's jobs
    RoundBoard* rounds = &rounds_;
    const bool posted = g->fast_worker().Post(
        [g, plan = ctx_.options.plan] {
          g->fast_reads().Prime(*plan);
          g->set_up.store(true);
        },
        [rounds, round] { rounds->FinishJob(*round); });
    if (!posted) rounds_.Skip(1);  // (its probe is done: the worker is idle)
  }
  AwaitSetUp(*round, "building its readers (priming reads)", workers, /*wait_for_all=*/false);
}

void CollectorSetUp::AddEntity(nvml::Device handle, model::DeviceIdentity identity,
                               plan::Scope scope, nvml::Device gpm_device,
                               std::optional<unsigned> gpm_gpu_instance,
                               std::optional<size_t> parent) {
  EntityFixed fixed;
  fixed.handle = handle;
  fixed.parent = parent;
  fixed.scope = scope;
  fixed.index = identity.index;
  fixed.gpm_device = gpm_device;
  fixed.gpm_gi = gpm_gpu_instance;
  fixed.mig_gpu = scope != plan::Scope::kWhole;
  fixed.pci_bus_id = identity.pci_bus_id;
  ctx_.entities.Add(std::move(fixed), std::move(identity));
  // Its readers come once every GPU is laid out, on its GPU's workers (PrimeGroups).
}

}  // namespace nvmlx::collect
