#include "attribute/process_attributor.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "attribute/cgroup.h"

namespace nvmlx::attribute {
namespace {

// A /proc file is small; cgroup files of deep v1 hierarchies stay well under this.
constexpr size_t kMaxProcFile = size_t{64} * 1024;

// Reads a whole file; errno-style failure in *err (0 on success).
bool ReadSmallFile(const std::string& path, std::string* out, int* err) {
  *err = 0;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *err = errno;
    return false;
  }
  out->clear();
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      *err = errno;
      ::close(fd);
      return false;
    }
    if (n == 0) break;
    out->append(buf, static_cast<size_t>(n));
    if (out->size() > kMaxProcFile) break;
  }
  ::close(fd);
  return true;
}

// ENOENT/ESRCH: the process is gone (its /proc directory vanished or is going away).
bool IsGone(int err) { return err == ENOENT || err == ESRCH; }

// Field 22 (starttime, clock ticks since boot) of /proc/<pid>/stat. The comm field (2) may hold
// spaces and parentheses, so fields are counted from the last ')'.
std::optional<uint64_t> StartTime(std::string_view stat) {
  const size_t close = stat.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view rest = stat.substr(close + 1);
  // rest: " S ppid ..." -> field 3 is the first token; starttime is field 22, the 20th token.
  int field = 2;
  size_t pos = 0;
  while (pos < rest.size()) {
    while (pos < rest.size() && rest[pos] == ' ') ++pos;
    size_t end = rest.find(' ', pos);
    if (end == std::string_view::npos) end = rest.size();
    if (pos == end) break;
    if (++field == 22) {
      uint64_t v = 0;
      auto [p, ec] = std::from_chars(rest.data() + pos, rest.data() + end, v);
      if (ec != std::errc() || p != rest.data() + end) return std::nullopt;
      return v;
    }
    pos = end;
  }
  return std::nullopt;
}

}  // namespace

Result<ProcLookup> LookUpProcess(const std::string& proc_root, unsigned pid,
                                 std::optional<uint64_t> known_start) {
  const std::string dir = proc_root + "/" + std::to_string(pid);
  ProcLookup out;
  std::string text;
  int err = 0;
  if (!ReadSmallFile(dir + "/stat", &text, &err)) {
    if (IsGone(err)) {
      // Gone, unless the proc root itself is missing: that is a configuration error.
      struct stat st {};
      if (::stat(proc_root.c_str(), &st) != 0) {
        return NotFound("proc root " + proc_root + ": " + std::strerror(errno));
      }
      out.gone = true;
      return out;
    }
    return Unavailable(dir + "/stat: " + std::strerror(err));
  }
  std::optional<uint64_t> start = StartTime(text);
  if (!start)
    return Internal(dir + "/stat: no start time (field 22) in \"" + text.substr(0, 80) + "\"");
  out.start_time = *start;
  if (known_start && *known_start == *start) return out;
  out.cgroup_read = true;
  if (!ReadSmallFile(dir + "/cgroup", &text, &err)) {
    if (IsGone(err)) {
      out.gone = true;
      return out;
    }
    return Unavailable(dir + "/cgroup: " + std::strerror(err));
  }
  out.owner = ParseCgroupFile(text);
  return out;
}

ProcessAttributor::ProcessAttributor(ProcessAttributorOptions options)
    : options_(std::move(options)),
      streak_("cgroup", options_.errors),
      worker_({.name = "process attributor", .period = util::Clock::Duration::max()},
              [this] { ResolveNow(); }) {}

ProcessAttributor::~ProcessAttributor() { Stop(); }

void ProcessAttributor::Observe(const model::Snapshot& snapshot) {
  std::vector<unsigned> pids;
  for (const model::DeviceSnapshot& d : snapshot.devices) {
    for (const model::ProcessSample& p : d.processes) pids.push_back(p.pid);
  }
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  {
    util::MutexLock lock(&mu_);
    pids_ = std::move(pids);
  }
  worker_.RunSoon();
}

std::shared_ptr<const model::ProcessAttribution> ProcessAttributor::Latest() const {
  return latest_.Get();
}

void ProcessAttributor::ResolveNow() {
  std::vector<unsigned> pids;
  {
    util::MutexLock lock(&mu_);
    pids = pids_;
  }
  util::MutexLock resolve(&resolve_mu_);
  auto out = std::make_shared<model::ProcessAttribution>();
  std::unordered_map<unsigned, Cached> next;
  std::set<unsigned> missing;
  std::string first_error;
  int errors = 0;
  for (unsigned pid : pids) {
    const auto known = cache_.find(pid);
    Result<ProcLookup> r = LookUpProcess(
        options_.proc_root, pid,
        known != cache_.end() ? std::optional(known->second.start_time) : std::nullopt);
    if (!r.ok()) {
      ++errors;
      if (first_error.empty()) first_error = r.status().ToString();
      // Keep what we knew: a transient read error must not un-attribute a running process.
      if (known != cache_.end()) next.emplace(pid, known->second);
      continue;
    }
    if (r->gone) {
      // Exited between NVML's list and this read: fine once. Still listed by NVML one
      // collection later and still absent here: /proc is not the host's PID namespace.
      if (missing_.count(pid) != 0) {
        ++errors;
        if (first_error.empty()) {
          first_error = "pid " + std::to_string(pid) + " listed by NVML is not under " +
                        options_.proc_root + " (mount the host's /proc and set --host-proc-root)";
        }
      }
      missing.insert(pid);
      continue;
    }
    if (!r->cgroup_read) {
      next.emplace(pid, known->second);  // same process as last time
      continue;
    }
    // New, or a recycled PID (another start time): its own cgroup decides.
    next.emplace(pid, Cached{r->start_time, std::move(r->owner)});
  }
  for (const auto& [pid, c] : next) {
    if (c.owner) out->by_pid.emplace(pid, *c.owner);
  }
  cache_ = std::move(next);
  missing_ = std::move(missing);
  if (errors > 0) {
    streak_.Fail("read " + options_.proc_root + "/<pid>/cgroup", first_error);
  } else {
    streak_.Succeed();
  }
  latest_.Publish(std::move(out));
}

void ProcessAttributor::Start() { worker_.Start(); }

void ProcessAttributor::Stop() { worker_.Stop(); }

}  // namespace nvmlx::attribute
