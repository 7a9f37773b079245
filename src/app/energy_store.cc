#include "app/energy_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "util/file.h"
#include "util/log.h"
#include "util/scoped_fd.h"

namespace nvmlx::app {
bool EnergyStore::Load(const std::string& path, const Ledger::KnownGpus& gpus,
                       std::chrono::system_clock::time_point now, Ledger* ledger) {
  // util/file.h's one bounded door: one non-blocking open, checked on the opened descriptor, so
  // a FIFO, a device (/dev/zero), a directory or a socket is refused at once instead of being
  // waited on or read without end (a link to a regular file is followed: a hostPath may be one);
  // nothing past kMaxFileBytes is read.
  Result<std::string> text =
      util::ReadBoundedFile(path, "energy per pod state file", kMaxFileBytes);
  if (!text.ok() && text.status().code() == StatusCode::kNotFound) {
    log::Info("energy per pod: no saved counters; they start from 0", {{"file", path}});
    return false;
  }
  Status bad = text.status();
  if (text.ok()) {
    Result<Ledger::Restored> restored = ledger->Restore(*text, now, gpus);
    if (restored.ok()) {
      if (restored->dropped > 0) {
        log::Warn(
            "energy per pod: saved series of GPUs this exporter does not collect are left out",
            {{"file", path}, {"series", std::to_string(restored->dropped)}});
      }
      log::Info("energy per pod: counters restored",
                {{"file", path}, {"series", std::to_string(restored->series)}});
      return true;
    }
    bad = restored.status();
  }
  // Set aside, not overwritten: the counters start from 0, the bad file stays to be looked at.
  // rename() moves a link itself, never what it points to.
  const std::string aside = path + ".bad";
  std::string kept = aside;
  if (std::rename(path.c_str(), aside.c_str()) != 0) {
    kept = std::string("not set aside: ") + std::strerror(errno);
  }
  log::Error("energy per pod: the saved counters cannot be read; they start from 0",
             {{"file", path}, {"err", bad.message()}, {"kept_as", kept}});
  return false;
}

Status EnergyStore::WriteAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  // Whatever is at the temporary path (a FIFO, a link, a file of an earlier crash) goes first,
  // and the file is created anew (O_EXCL, no link followed), so the write never blocks on a
  // FIFO nor goes through a link somewhere else.
  if (::unlink(tmp.c_str()) != 0 && errno != ENOENT) {
    return Internal(tmp + ": cannot remove: " + std::strerror(errno));
  }
  util::ScopedFd f(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644));
  if (!f.valid()) return Internal(tmp + ": cannot create: " + std::strerror(errno));
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(f.get(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      ::unlink(tmp.c_str());
      return Internal(tmp + ": cannot write: " + std::strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  // close() may report a write error write() did not (NFS, a full disk): the file is incomplete.
  if (f.Close() != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return Internal(tmp + ": cannot write: " + std::strerror(err));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return Internal(path + ": cannot replace: " + std::strerror(err));
  }
  return Status::Ok();
}

EnergyStore::EnergyStore(std::string path, std::shared_ptr<const Ledger> restored, WriteFn write)
    : path_(std::move(path)), write_(std::move(write)) {
  {
    util::MutexLock lock(&mu_);
    latest_.ledger = durable_.ledger = served_.ledger = std::move(restored);
  }
  thread_ = std::thread([this] { Run(); });
}

EnergyStore::~EnergyStore() { Stop(); }

void EnergyStore::Offer(std::shared_ptr<const Ledger> ledger,
                        std::chrono::system_clock::time_point at) {
  Version v{std::move(ledger), 0, at};
  Version replaced = v;  // takes the previous latest offer, freed after the lock (as Run does)
  {
    util::MutexLock lock(&mu_);
    v.seq = replaced.seq = ++offered_;
    std::swap(latest_, replaced);
    // An offer the writer had not taken yet is dropped with `v`, after the lock.
    std::swap(pending_, v);
  }
  cv_.SignalAll();
}

std::shared_ptr<const EnergyStore::Ledger> EnergyStore::Servable() {
  Version previous;  // the ledger served before, freed after the lock
  util::MutexLock lock(&mu_);
  const Version& candidate = failing_ ? latest_ : durable_;
  if (candidate.seq > served_.seq) {
    previous = std::exchange(served_, candidate);
  }
  return served_.ledger;
}

void EnergyStore::Run() {
  while (true) {
    Version job;
    {
      util::MutexLock lock(&mu_);
      while (pending_.ledger == nullptr && !stop_) cv_.Wait(&mu_);
      if (pending_.ledger == nullptr) return;  // stopped, nothing left to write
      job = std::move(pending_);
      pending_ = Version{};
    }
    // Off the lock: the collection thread offers and reads while this thread waits on the disk.
    const std::string text = job.ledger->Serialize(job.at);
    if (text.size() > kMaxFileBytes && !too_big_logged_) {
      too_big_logged_ = true;
      log::Error(
          "energy per pod: the counters outgrew the state file's cap; a restart will set "
          "the file aside",
          {{"file", path_}, {"bytes", std::to_string(text.size())}});
    }
    const Status st = write_(path_, text);
    bool was_failing = false;
    {
      util::MutexLock lock(&mu_);
      was_failing = failing_;
      failing_ = !st.ok();
      if (st.ok()) std::swap(durable_, job);  // the older durable ledger is released below
      ++writes_;
    }
    cv_.SignalAll();
    if (!st.ok() && !was_failing) {
      log::Error("energy per pod: cannot save the counters (logged once until it works)",
                 {{"file", path_}, {"err", st.message()}});
    } else if (st.ok() && was_failing) {
      log::Info("energy per pod: the counters are saved again", {{"file", path_}});
    }
  }
}

void EnergyStore::Stop() {
  {
    util::MutexLock lock(&mu_);
    stop_ = true;
  }
  cv_.SignalAll();
  if (thread_.joinable()) thread_.join();
}

uint64_t EnergyStore::writes() const {
  util::MutexLock lock(&mu_);
  return writes_;
}

bool EnergyStore::AwaitWrites(uint64_t n, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  util::MutexLock lock(&mu_);
  while (writes_ < n) {
    if (cv_.WaitUntil(&mu_, deadline) && writes_ < n) return false;
  }
  return true;
}

}  // namespace nvmlx::app
