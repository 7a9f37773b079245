#include "attribute/hpc_jobs.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <optional>
#include <utility>

#include "util/file.h"
#include "util/log.h"
#include "util/strings.h"

namespace nvmlx::attribute {
namespace {

struct GpuRef {
  unsigned index = 0;
  std::optional<unsigned> gpu_instance;
};

std::optional<unsigned> ParseUnsigned(std::string_view s) {
  if (s.empty()) return std::nullopt;
  unsigned v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// "<n>" or "<n>.<m>", digits only (^\d+(\.\d+)?$).
std::optional<GpuRef> ParseFileName(std::string_view name) {
  size_t dot = name.find('.');
  std::optional<unsigned> gpu = ParseUnsigned(name.substr(0, dot));
  if (!gpu) return std::nullopt;
  if (dot == std::string_view::npos) return GpuRef{*gpu, std::nullopt};
  std::optional<unsigned> gi = ParseUnsigned(name.substr(dot + 1));
  if (!gi) return std::nullopt;
  return GpuRef{*gpu, *gi};
}

const model::DeviceIdentity* FindDevice(const std::vector<model::DeviceIdentity>& ids,
                                        const GpuRef& ref) {
  for (const model::DeviceIdentity& id : ids) {
    if (id.index != ref.index) continue;
    if (!ref.gpu_instance && !id.mig) return &id;
    if (ref.gpu_instance && id.mig && id.mig->gpu_instance_id == *ref.gpu_instance) return &id;
  }
  return nullptr;
}

// A label value must be UTF-8 (or Prometheus rejects the whole page) and a job id has no use for
// control characters. Blanks inside are kept: dcgm-exporter takes the whole line as the id.
// A job file lists the few jobs on one GPU; one far larger than this is not one.
constexpr size_t kMaxJobFileBytes = size_t{1} << 20;

bool ValidJobId(std::string_view id) {
  for (size_t i = 0; i < id.size();) {
    const auto c = static_cast<unsigned char>(id[i]);
    if (c < 0x80) {
      if (c < ' ' || c == 0x7f) return false;
      ++i;
      continue;
    }
    size_t len = 0;  // of the sequence c starts; 0: not a valid lead byte
    if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
    }
    if (len == 0 || i + len > id.size()) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((static_cast<unsigned char>(id[i + k]) & 0xc0) != 0x80) return false;
    }
    i += len;
  }
  return true;
}

}  // namespace

Result<HpcReadResult> ReadHpcJobDir(const std::string& dir,
                                    const std::vector<model::DeviceIdentity>& identities) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    if (ec) return Unavailable("hpc job mapping dir " + dir + ": " + ec.message());
    return NotFound("hpc job mapping dir " + dir + ": no such directory");
  }
  // Sorted names: deterministic reads and problem order.
  std::vector<fs::path> files;
  fs::directory_iterator it(dir, ec);
  if (ec) return Unavailable("hpc job mapping dir " + dir + ": " + ec.message());
  for (const fs::directory_entry& e : it) files.push_back(e.path());
  std::sort(files.begin(), files.end());

  auto jobs = std::make_shared<model::HpcJobs>();
  HpcReadResult result;
  for (const fs::path& path : files) {
    std::optional<GpuRef> ref = ParseFileName(path.filename().string());
    if (!ref) continue;
    const model::DeviceIdentity* device = FindDevice(identities, *ref);
    if (device == nullptr) continue;
    if (fs::is_directory(path, ec)) continue;
    // A FIFO, socket or device dropped into the directory is skipped with a problem line; the
    // read itself is bounded (util/file.h), so one that becomes such a thing meanwhile, or a huge
    // file, fails this refresh (the last good jobs stay) instead of blocking it or filling memory.
    const fs::file_status st = fs::status(path, ec);
    if (!ec && fs::exists(st) && !fs::is_regular_file(st)) {
      result.problems.push_back(path.string() +
                                ": not a regular file (a FIFO, socket or device); file skipped");
      continue;
    }
    Result<std::string> text =
        util::ReadBoundedFile(path.string(), "hpc job mapping file", kMaxJobFileBytes);
    if (!text.ok()) {
      return Unavailable("hpc job mapping file " + path.string() +
                         ": cannot read: " + text.status().message());
    }
    std::vector<std::string>& ids = jobs->jobs_by_device[device->DeviceKey()];
    std::string_view rest = *text;
    for (int number = 1; !rest.empty(); ++number) {
      const size_t eol = rest.find('\n');
      const std::string_view line = rest.substr(0, eol);
      rest = eol == std::string_view::npos ? std::string_view() : rest.substr(eol + 1);
      std::string_view id = util::TrimWhitespace(line);
      if (id.empty()) continue;
      if (!ValidJobId(id)) {
        result.problems.push_back(path.string() + ":" + std::to_string(number) +
                                  ": job id must be UTF-8 text without control characters; "
                                  "line skipped");
        continue;
      }
      if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.emplace_back(id);
    }
    if (ids.empty()) jobs->jobs_by_device.erase(device->DeviceKey());
  }
  result.jobs = std::move(jobs);
  return result;
}

HpcJobRefresher::HpcJobRefresher(std::string dir, std::vector<model::DeviceIdentity> identities,
                                 std::chrono::milliseconds period,
                                 std::shared_ptr<model::SourceErrors> errors, util::Clock* clock)
    : dir_(std::move(dir)),
      identities_(std::move(identities)),
      errors_(std::move(errors)),
      streak_(std::string(kSource), errors_.get()),
      worker_({.name = "hpc job refresher", .period = period, .clock = clock},
              [this] { RefreshOnce(); }) {
  if (errors_) errors_->Register(kSource);
}

HpcJobRefresher::~HpcJobRefresher() { Stop(); }

bool HpcJobRefresher::RefreshOnce() {
  Result<HpcReadResult> read = ReadHpcJobDir(dir_, identities_);
  if (!read.ok() && read.status().code() == StatusCode::kNotFound) {
    // No directory means no jobs (dcgm-exporter tolerates it at start-up). Say so once if it
    // existed before: the scheduler may have lost its mount.
    if (dir_seen_ && !dir_missing_logged_) {
      log::Warn("hpc job mapping dir disappeared; no hpc_job labels until it is back",
                {{"dir", dir_}});
      dir_missing_logged_ = true;
    }
    latest_.Publish(std::make_shared<model::HpcJobs>());
    return true;
  }
  if (!read.ok()) {
    streak_.Fail("read the hpc job mapping dir " + dir_, read.status().ToString());
    return false;
  }
  dir_seen_ = true;
  dir_missing_logged_ = false;
  streak_.Succeed();
  for (const std::string& p : read->problems) {
    if (logged_problems_.insert(p).second) log::Warn("hpc job mapping: bad line", {{"at", p}});
  }
  latest_.Publish(std::move(read->jobs));
  return true;
}

void HpcJobRefresher::Start() { worker_.Start(); }

void HpcJobRefresher::Stop() { worker_.Stop(); }

std::shared_ptr<const model::HpcJobs> HpcJobRefresher::Latest() const { return latest_.Get(); }

}  // namespace nvmlx::attribute
