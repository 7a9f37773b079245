#include "serve/basic_auth.h"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <time.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "serve/http_server.h"

namespace nvmlx::serve {
namespace {

// bcrypt of "fakepassword" at cost 10: what an unknown user's password is checked against, so
// that the answer takes as long as for a known one.
constexpr char kDecoyHash[] = "$2b$10$cLTpLCeQz0brzZB6qzwM8uz3kOZLryPKfOBfWMUm/tm54DmA9S4j.";

BasicAuth::Digest CacheKey(const std::string& user, const std::string& hash,
                           const std::string& password) {
  BasicAuth::Digest d{};
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  const unsigned char sep = 0;
  // Lengths first: (user, hash, password) tuples cannot collide by moving a boundary.
  const uint64_t lens[3] = {user.size(), hash.size(), password.size()};
  unsigned int n = 0;
  if (ctx != nullptr && EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) == 1) {
    EVP_DigestUpdate(ctx, lens, sizeof(lens));
    EVP_DigestUpdate(ctx, user.data(), user.size());
    EVP_DigestUpdate(ctx, &sep, 1);
    EVP_DigestUpdate(ctx, hash.data(), hash.size());
    EVP_DigestUpdate(ctx, &sep, 1);
    EVP_DigestUpdate(ctx, password.data(), password.size());
    EVP_DigestFinal_ex(ctx, d.data(), &n);
  }
  EVP_MD_CTX_free(ctx);
  return d;
}

int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

std::optional<std::pair<std::string, std::string>> ParseBasicAuthorization(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  if (v.size() < 6) return std::nullopt;
  // The scheme is case-insensitive (RFC 9110 §11.1), as in Go's Request.BasicAuth.
  std::string scheme(v.substr(0, 6));
  for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (scheme != "basic ") return std::nullopt;
  std::string_view b64 = v.substr(6);
  if (b64.size() % 4 != 0 || b64.size() > 4096) return std::nullopt;
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  size_t pad = 0;
  for (size_t i = 0; i < b64.size(); ++i) {
    if (b64[i] == '=') {
      if (i + 2 < b64.size()) return std::nullopt;
      ++pad;
      continue;
    }
    if (pad > 0) return std::nullopt;
    int x = Base64Value(b64[i]);
    if (x < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(x);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  const size_t colon = out.find(':');
  if (colon == std::string::npos) return std::nullopt;
  return std::make_pair(out.substr(0, colon), out.substr(colon + 1));
}

bool BcryptMatches(const std::string& hash, const std::string& password) {
  crypt_data data;
  std::memset(&data, 0, sizeof(data));
  // crypt_rn returns null (never a "*0" string) on failure: a malformed hash never matches.
  const char* out = crypt_rn(password.c_str(), hash.c_str(), &data, sizeof(data));
  if (out == nullptr || password.find('\0') != std::string::npos) return false;
  const size_t n = std::strlen(out);
  return n == hash.size() && CRYPTO_memcmp(out, hash.data(), n) == 0;
}

BasicAuth::BasicAuth(ServerStats* stats)
    : stats_(stats), global_refilled_(std::chrono::steady_clock::now()) {
  worker_ = std::thread([this] { Loop(); });
}

BasicAuth::~BasicAuth() { Stop(); }

void BasicAuth::Stop() {
  std::deque<Job> dropped, dropped_priority;
  {
    util::MutexLock l(&mu_);
    stop_ = true;
    dropped.swap(queue_);
    dropped_priority.swap(priority_);
  }
  cv_.SignalAll();
  if (worker_.joinable()) worker_.join();
  // The dropped jobs (and the sessions their callbacks hold) go here, outside the lock.
}

BasicAuth::Source& BasicAuth::Refill(const std::string& source,
                                     std::chrono::steady_clock::time_point now) {
  const double g = std::chrono::duration<double>(now - global_refilled_).count();
  global_refilled_ = now;
  global_cpu_s_ = std::min(kGlobalCpuBurst, global_cpu_s_ + g * kGlobalCpuPerSecond);
  if (sources_.size() >= kMaxSources && sources_.find(source) == sources_.end()) {
    // Bounded: forget the sources that have nothing to remember (budgets full, never failed).
    std::erase_if(sources_, [](const auto& e) { return !e.second.failed_ever; });
    if (sources_.size() >= kMaxSources) sources_.clear();
  }
  auto [it, fresh] = sources_.try_emplace(source);
  Source& s = it->second;
  if (fresh) s.refilled = now;
  const double e = std::chrono::duration<double>(now - s.refilled).count();
  s.refilled = now;
  s.failures = std::min<double>(kFailureBurst, s.failures + e * kFailuresPerSecond);
  s.cpu_s = std::min(kSourceCpuBurst, s.cpu_s + e * kSourceCpuPerSecond);
  return s;
}

std::optional<BasicAuth::Verdict> BasicAuth::Check(const Users& users,
                                                   std::string_view authorization,
                                                   std::string_view source, Pending* pending) {
  auto creds = ParseBasicAuthorization(authorization);
  if (!creds) return Verdict::kDenied;
  auto it = users.find(creds->first);
  pending->known_user = it != users.end();
  pending->user = std::move(creds->first);
  pending->password = std::move(creds->second);
  pending->hash = pending->known_user ? it->second : std::string(kDecoyHash);
  pending->key = CacheKey(pending->user, pending->hash, pending->password);
  pending->source = std::string(source);
  util::MutexLock l(&mu_);
  if (ok_.count(pending->key)) return pending->known_user ? Verdict::kOk : Verdict::kDenied;
  if (failed_.count(pending->key)) return Verdict::kDenied;
  const auto now = std::chrono::steady_clock::now();
  const Source& src = Refill(pending->source, now);
  pending->priority = !src.failed_ever || (src.last_ok && now - *src.last_ok < kRecentOk);
  // This source spent its own budget: refused at once, whoever else is asking.
  if (src.failures < 1 || src.cpu_s <= 0) return Verdict::kRateLimited;
  // Everyone together spent the global one: only priority checks still run.
  if (global_cpu_s_ <= 0 && !pending->priority) return Verdict::kRateLimited;
  return std::nullopt;
}

void BasicAuth::Verify(Pending pending, std::function<void(Verdict)> done) {
  {
    util::MutexLock l(&mu_);
    std::deque<Job>& q = pending.priority ? priority_ : queue_;
    const size_t cap = pending.priority ? kMaxPriorityQueued : kMaxQueued;
    if (!stop_ && q.size() < cap) {
      q.push_back({std::move(pending), std::move(done)});
      cv_.Signal();
      return;
    }
  }
  done(Verdict::kRateLimited);
}

void BasicAuth::Record(const Pending& p, bool ok, double cpu_s) {
  util::MutexLock l(&mu_);
  const auto now = std::chrono::steady_clock::now();
  Source& src = Refill(p.source, now);
  if (ok) {
    if (ok_.size() >= kMaxCachedSuccesses) ok_.clear();
    ok_.insert(p.key);
    src.last_ok = now;
    return;
  }
  if (failed_.size() >= kMaxCachedFailures) failed_.clear();
  failed_.insert(p.key);
  src.failed_ever = true;
  src.failures -= 1;
  src.cpu_s -= cpu_s;
  // Not below minus its burst: a source (or everyone) in debt recovers within a bounded time.
  src.cpu_s = std::max(src.cpu_s, -kSourceCpuBurst);
  global_cpu_s_ = std::max(global_cpu_s_ - cpu_s, -kGlobalCpuBurst);
}

void BasicAuth::Loop() {
  for (;;) {
    Job job;
    bool cached_ok = false, cached_failed = false;
    {
      util::MutexLock l(&mu_);
      while (!stop_ && queue_.empty() && priority_.empty()) cv_.Wait(&mu_);
      if (stop_) return;
      std::deque<Job>& q = priority_.empty() ? queue_ : priority_;
      job = std::move(q.front());
      q.pop_front();
      // A credential verified while this one waited needs no second bcrypt.
      cached_ok = ok_.count(job.pending.key) > 0;
      cached_failed = failed_.count(job.pending.key) > 0;
    }
    Verdict v;
    if (cached_ok || cached_failed) {
      v = cached_ok && job.pending.known_user ? Verdict::kOk : Verdict::kDenied;
    } else {
      stats_->bcrypt_runs.fetch_add(1, std::memory_order_relaxed);
      timespec t0{}, t1{};
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
      const bool match = BcryptMatches(job.pending.hash, job.pending.password);
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
      const double cpu_s = double(t1.tv_sec - t0.tv_sec) + double(t1.tv_nsec - t0.tv_nsec) / 1e9;
      const bool ok = match && job.pending.known_user;
      Record(job.pending, ok, cpu_s);
      if (!ok) {
        stats_->bcrypt_failure_cpu_ns.fetch_add(static_cast<uint64_t>(cpu_s * 1e9),
                                                std::memory_order_relaxed);
      }
      v = ok ? Verdict::kOk : Verdict::kDenied;
    }
    job.done(v);
  }
}

}  // namespace nvmlx::serve
