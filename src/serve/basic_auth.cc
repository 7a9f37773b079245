#include "serve/basic_auth.h"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

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
    : stats_(stats), refilled_(std::chrono::steady_clock::now()) {
  worker_ = std::thread([this] { Loop(); });
}

BasicAuth::~BasicAuth() { Stop(); }

void BasicAuth::Stop() {
  std::deque<Job> dropped;
  {
    util::MutexLock l(&mu_);
    stop_ = true;
    dropped.swap(queue_);
  }
  cv_.SignalAll();
  if (worker_.joinable()) worker_.join();
  // `dropped` (and the sessions its callbacks hold) goes here, outside the lock.
}

bool BasicAuth::TakeFailureToken() {
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - refilled_).count();
  refilled_ = now;
  tokens_ = std::min<double>(kFailureBurst, tokens_ + elapsed * kFailuresPerSecond);
  if (tokens_ < 1) return false;
  tokens_ -= 1;
  return true;
}

std::optional<BasicAuth::Verdict> BasicAuth::Check(const Users& users,
                                                   std::string_view authorization,
                                                   Pending* pending) {
  auto creds = ParseBasicAuthorization(authorization);
  if (!creds) return Verdict::kDenied;
  auto it = users.find(creds->first);
  pending->known_user = it != users.end();
  pending->user = std::move(creds->first);
  pending->password = std::move(creds->second);
  pending->hash = pending->known_user ? it->second : std::string(kDecoyHash);
  pending->key = CacheKey(pending->user, pending->hash, pending->password);
  util::MutexLock l(&mu_);
  if (ok_.count(pending->key)) return pending->known_user ? Verdict::kOk : Verdict::kDenied;
  if (failed_.count(pending->key)) return Verdict::kDenied;
  // Peek at the bucket without taking a token: the token is taken when the check fails.
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - refilled_).count();
  if (std::min<double>(kFailureBurst, tokens_ + elapsed * kFailuresPerSecond) < 1) {
    return Verdict::kRateLimited;
  }
  return std::nullopt;
}

void BasicAuth::Verify(Pending pending, std::function<void(Verdict)> done) {
  {
    util::MutexLock l(&mu_);
    if (!stop_ && queue_.size() < kMaxQueued) {
      queue_.push_back({std::move(pending), std::move(done)});
      cv_.Signal();
      return;
    }
  }
  done(Verdict::kRateLimited);
}

void BasicAuth::Loop() {
  for (;;) {
    Job job;
    {
      util::MutexLock l(&mu_);
      while (!stop_ && queue_.empty()) cv_.Wait(&mu_);
      if (stop_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    // A credential verified while this one waited needs no second bcrypt.
    const bool cached_ok = [&] {
      util::MutexLock l(&mu_);
      return ok_.count(job.pending.key) > 0;
    }();
    const bool cached_failed = [&] {
      util::MutexLock l(&mu_);
      return failed_.count(job.pending.key) > 0;
    }();
    Verdict v;
    if (cached_ok || cached_failed) {
      v = cached_ok && job.pending.known_user ? Verdict::kOk : Verdict::kDenied;
    } else {
      stats_->bcrypt_runs.fetch_add(1, std::memory_order_relaxed);
      const bool match = BcryptMatches(job.pending.hash, job.pending.password);
      const bool ok = match && job.pending.known_user;
      util::MutexLock l(&mu_);
      if (ok) {
        if (ok_.size() >= kMaxCachedSuccesses) ok_.clear();
        ok_.insert(job.pending.key);
      } else {
        if (failed_.size() >= kMaxCachedFailures) failed_.clear();
        failed_.insert(job.pending.key);
        (void)TakeFailureToken();
      }
      v = ok ? Verdict::kOk : Verdict::kDenied;
    }
    job.done(v);
  }
}

}  // namespace nvmlx::serve
