// BasicAuth: checks an "Authorization: Basic ..." header against the web config's users
// (bcrypt hashes), the way the exporter-toolkit does, without letting bcrypt stall the server.
//
//  - Credentials verified once are cached by a SHA-256 of (user, hash, password): a scrape storm
//    with the right password costs one bcrypt, and a changed hash (a reloaded web config)
//    misses the cache. Failures are cached too (bounded), so one wrong password repeated costs
//    one bcrypt. Cached entries are compared by digest, never by the password itself.
//  - bcrypt (libxcrypt's crypt_rn, tens of milliseconds at cost 10) runs on one worker thread,
//    never on an io thread; the result is compared in constant time (CRYPTO_memcmp).
//  - A wrong-password storm is budgeted per source address, in bcrypt CPU time (hardening round
//    two, row 2): each failed bcrypt charges its measured CPU to its source (kSourceCpuBurst,
//    refilled at kSourceCpuPerSecond) and to a global budget (kGlobalCpuBurst, refilled at
//    kGlobalCpuPerSecond), and one run to the source's count (kFailureBurst, kFailuresPerSecond:
//    online guessing). A source out of its budget gets 401 at once without bcrypt; other
//    sources are not affected. With the global budget spent, only priority checks run.
//  - Priority: a check from a source that authenticated within kRecentOk, or from a source that
//    has never failed (a new scraper's first check), runs before any other queued check, so a
//    scraper whose password is not cached yet (a restart, a rotated password) is never queued
//    behind strangers. The source, not the user name, decides: user names are the attacker's
//    to choose.
//  - An unknown user is checked against a fixed hash, so timing does not reveal user names.
//
// Thread-safety: Check and Verify from any thread; `done` runs on the worker thread. Stop()
// (and the destructor) from the owner: pending checks are dropped, their `done` never runs.
#ifndef NVML_EXPORTER_SERVE_BASIC_AUTH_H_
#define NVML_EXPORTER_SERVE_BASIC_AUTH_H_

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>

#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace nvmlx::serve {

struct ServerStats;

class BasicAuth {
 public:
  using Users = std::map<std::string, std::string>;  // user -> bcrypt hash
  using Digest = std::array<unsigned char, 32>;
  enum class Verdict { kOk, kDenied, kRateLimited };
  // One credential that needs a bcrypt run.
  struct Pending {
    std::string user, password, hash;
    bool known_user = false;
    Digest key{};
    std::string source;     // the client's address
    bool priority = false;  // see the class comment
  };

  static constexpr int kFailureBurst = 10;  // failed checks per source
  static constexpr double kFailuresPerSecond = 5;
  static constexpr double kSourceCpuBurst = 0.5;  // seconds of bcrypt CPU on failures
  static constexpr double kSourceCpuPerSecond = 0.05;
  static constexpr double kGlobalCpuBurst = 2.0;
  static constexpr double kGlobalCpuPerSecond = 0.25;
  static constexpr std::chrono::minutes kRecentOk{10};
  static constexpr size_t kMaxQueued = 32;
  static constexpr size_t kMaxPriorityQueued = 16;
  static constexpr size_t kMaxCachedFailures = 4096;
  static constexpr size_t kMaxCachedSuccesses = 256;
  static constexpr size_t kMaxSources = 4096;

  explicit BasicAuth(ServerStats* stats);
  ~BasicAuth();
  BasicAuth(const BasicAuth&) = delete;
  BasicAuth& operator=(const BasicAuth&) = delete;

  // The verdict when it needs no bcrypt (no or malformed header, a cached credential, the rate
  // limit); otherwise nullopt and `*pending` filled for Verify.
  std::optional<Verdict> Check(const Users& users, std::string_view authorization,
                               std::string_view source, Pending* pending) NVMLX_EXCLUDES(mu_);
  // Runs bcrypt on the worker and calls `done` there; refuses (kRateLimited, at once, on the
  // calling thread) when the queue is full.
  void Verify(Pending pending, std::function<void(Verdict)> done) NVMLX_EXCLUDES(mu_);
  void Stop() NVMLX_EXCLUDES(mu_);

 private:
  struct Job {
    Pending pending;
    std::function<void(Verdict)> done;
  };
  // What one client address has spent and earned.
  struct Source {
    double failures = kFailureBurst;  // tokens
    double cpu_s = kSourceCpuBurst;   // bcrypt CPU budget
    std::chrono::steady_clock::time_point refilled{};
    std::optional<std::chrono::steady_clock::time_point> last_ok;
    bool failed_ever = false;
  };
  void Loop() NVMLX_EXCLUDES(mu_);
  // The source's entry with its budgets refilled up to now (and the global one).
  Source& Refill(const std::string& source, std::chrono::steady_clock::time_point now)
      NVMLX_REQUIRES(mu_);
  void Record(const Pending& p, bool ok, double cpu_s) NVMLX_EXCLUDES(mu_);

  ServerStats* const stats_;
  util::Mutex mu_;
  util::CondVar cv_;
  bool stop_ NVMLX_GUARDED_BY(mu_) = false;
  std::deque<Job> queue_ NVMLX_GUARDED_BY(mu_);
  std::deque<Job> priority_ NVMLX_GUARDED_BY(mu_);
  std::set<Digest> ok_ NVMLX_GUARDED_BY(mu_);
  std::set<Digest> failed_ NVMLX_GUARDED_BY(mu_);
  std::map<std::string, Source> sources_ NVMLX_GUARDED_BY(mu_);
  double global_cpu_s_ NVMLX_GUARDED_BY(mu_) = kGlobalCpuBurst;
  std::chrono::steady_clock::time_point global_refilled_ NVMLX_GUARDED_BY(mu_);
  std::thread worker_;
};

// Decodes "Basic base64(user:password)"; nullopt when malformed.
std::optional<std::pair<std::string, std::string>> ParseBasicAuthorization(std::string_view v);

// bcrypt of `password` with the salt and cost of `hash`, compared to `hash` in constant time.
bool BcryptMatches(const std::string& hash, const std::string& password);

}  // namespace nvmlx::serve

#endif  // NVML_EXPORTER_SERVE_BASIC_AUTH_H_
