#include "config/web_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <exception>
#include <set>
#include <string>

#include "config/text_file.h"
#include "util/escape.h"
#include "util/go_duration.h"

namespace nvmlx::config {
namespace {

// Go cipher suite names (crypto/tls CipherSuites(), including the RSA key-exchange ones older Go
// releases listed as secure) and their OpenSSL names. The TLS 1.3 suites map to "": Go ignores
// them in the configuration, so do we.
struct CipherName {
  std::string_view go, openssl;
};
constexpr CipherName kCiphers[] = {
    {"TLS_RSA_WITH_AES_128_CBC_SHA", "AES128-SHA"},
    {"TLS_RSA_WITH_AES_256_CBC_SHA", "AES256-SHA"},
    {"TLS_RSA_WITH_AES_128_GCM_SHA256", "AES128-GCM-SHA256"},
    {"TLS_RSA_WITH_AES_256_GCM_SHA384", "AES256-GCM-SHA384"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA-AES128-SHA"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA-AES256-SHA"},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA-AES128-SHA"},
    {"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA-AES256-SHA"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA-AES256-GCM-SHA384"},
    {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256"},
    {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA-AES256-GCM-SHA384"},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305"},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA-CHACHA20-POLY1305"},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305", "ECDHE-ECDSA-CHACHA20-POLY1305"},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", "ECDHE-RSA-CHACHA20-POLY1305"},
    {"TLS_AES_128_GCM_SHA256", ""},
    {"TLS_AES_256_GCM_SHA384", ""},
    {"TLS_CHACHA20_POLY1305_SHA256", ""},
};

struct CurveName {
  std::string_view go, openssl;
};
constexpr CurveName kCurves[] = {
    {"CurveP256", "P-256"}, {"CurveP384", "P-384"}, {"CurveP521", "P-521"}, {"X25519", "X25519"}};

// The headers the toolkit lets a file add, and their allowed values (empty: any).
struct HeaderRule {
  std::string_view name;
  std::vector<std::string_view> values;
};
const std::vector<HeaderRule>& HeaderRules() {
  static const auto* rules = new std::vector<HeaderRule>{
      {"Strict-Transport-Security", {}},
      {"X-Content-Type-Options", {"nosniff"}},
      {"X-Frame-Options", {"deny", "sameorigin"}},
      {"X-XSS-Protection", {}},
      {"Content-Security-Policy", {}},
  };
  return *rules;
}

// Errors as "<file>:<line>: <what>".
class Parser {
 public:
  explicit Parser(const std::string& file) : file_(file) {}

  Status Error(const YAML::Node& at, const std::string& what) const {
    int line = at.IsDefined() ? at.Mark().line + 1 : 0;
    return InvalidArgument(file_ + ":" + (line > 0 ? std::to_string(line) : "?") + ": " + what);
  }

  // A mapping whose keys are all known and unique; calls `field(key, value)` for each.
  template <typename F>
  Status Map(const YAML::Node& node, const std::string& where,
             std::initializer_list<std::string_view> known, F field) const {
    if (node.IsNull()) return Status::Ok();
    if (!node.IsMap()) return Error(node, where + ": expected a mapping");
    std::set<std::string> seen;
    for (const auto& kv : node) {
      if (!kv.first.IsScalar()) return Error(kv.first, where + ": expected a key");
      const std::string key = kv.first.Scalar();
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        std::string list;
        for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
        return Error(kv.first, "unknown key " + util::QuoteForMessage(key) + " in " + where +
                                   " (expected " + list + ")");
      }
      if (!seen.insert(key).second) {
        return Error(kv.first, "key " + util::QuoteForMessage(key) + " repeated in " + where);
      }
      NVMLX_RETURN_IF_ERROR(field(key, kv.second));
    }
    return Status::Ok();
  }

  Status String(const YAML::Node& n, const std::string& key, std::string* out) const {
    if (n.IsNull()) return Status::Ok();
    if (!n.IsScalar()) return Error(n, key + ": expected a string");
    *out = n.Scalar();
    return Status::Ok();
  }

  Status Bool(const YAML::Node& n, const std::string& key, bool* out) const {
    if (n.IsNull()) return Status::Ok();
    const std::string v = n.IsScalar() ? n.Scalar() : "";
    // YAML 1.1 booleans, as Go's yaml.v2 reads them.
    static const std::set<std::string> yes = {"true", "True", "TRUE", "yes", "Yes", "YES",
                                              "on",   "On",   "ON",   "y",   "Y"};
    static const std::set<std::string> no = {"false", "False", "FALSE", "no", "No", "NO",
                                             "off",   "Off",   "OFF",   "n",  "N"};
    if (yes.count(v)) {
      *out = true;
    } else if (no.count(v)) {
      *out = false;
    } else {
      return Error(n, key + ": expected true or false");
    }
    return Status::Ok();
  }

  Status StringList(const YAML::Node& n, const std::string& key,
                    std::vector<std::string>* out) const {
    if (n.IsNull()) return Status::Ok();
    if (!n.IsSequence()) return Error(n, key + ": expected a list of strings");
    for (const auto& e : n) {
      if (!e.IsScalar()) return Error(e, key + ": expected a string");
      out->push_back(e.Scalar());
    }
    return Status::Ok();
  }

  Status Version(const YAML::Node& n, const std::string& key, int* out) const {
    std::string v;
    NVMLX_RETURN_IF_ERROR(String(n, key, &v));
    if (n.IsNull()) return Status::Ok();
    if (v == "TLS10") {
      *out = 10;
    } else if (v == "TLS11") {
      *out = 11;
    } else if (v == "TLS12") {
      *out = 12;
    } else if (v == "TLS13") {
      *out = 13;
    } else {
      return Error(n, key + ": unknown TLS version " + util::QuoteForMessage(v) +
                          " (expected TLS10, TLS11, TLS12 " + "or TLS13)");
    }
    return Status::Ok();
  }

  Status Tls(const YAML::Node& node, WebConfig::Tls* t) const {
    std::string client_auth;
    bool have_client_auth = false;
    Status st = Map(
        node, "tls_server_config",
        {"cert", "key", "client_ca", "cert_file", "key_file", "client_auth_type", "client_ca_file",
         "cipher_suites", "curve_preferences", "min_version", "max_version",
         "prefer_server_cipher_suites", "client_allowed_sans"},
        [&](const std::string& k, const YAML::Node& v) -> Status {
          if (k == "cert") return String(v, k, &t->cert);
          if (k == "key") return String(v, k, &t->key);
          if (k == "client_ca") return String(v, k, &t->client_ca);
          if (k == "cert_file") return String(v, k, &t->cert_file);
          if (k == "key_file") return String(v, k, &t->key_file);
          if (k == "client_ca_file") return String(v, k, &t->client_ca_file);
          if (k == "client_auth_type") {
            have_client_auth = !v.IsNull();
            NVMLX_RETURN_IF_ERROR(String(v, k, &client_auth));
            if (client_auth == "" || client_auth == "NoClientCert") {
              t->client_auth = ClientAuth::kNoClientCert;
            } else if (client_auth == "RequestClientCert") {
              t->client_auth = ClientAuth::kRequestClientCert;
            } else if (client_auth == "RequireAnyClientCert" ||
                       client_auth == "RequireClientCert") {
              t->client_auth = ClientAuth::kRequireAnyClientCert;
            } else if (client_auth == "VerifyClientCertIfGiven") {
              t->client_auth = ClientAuth::kVerifyClientCertIfGiven;
            } else if (client_auth == "RequireAndVerifyClientCert") {
              t->client_auth = ClientAuth::kRequireAndVerifyClientCert;
            } else {
              return Error(v, "client_auth_type: unknown " + util::QuoteForMessage(client_auth) +
                                  " (expected NoClientCert, RequestClientCert, "
                                  "RequireAnyClientCert, VerifyClientCertIfGiven or "
                                  "RequireAndVerifyClientCert)");
            }
            have_client_auth = !client_auth.empty();
            return Status::Ok();
          }
          if (k == "cipher_suites") {
            std::vector<std::string> names;
            NVMLX_RETURN_IF_ERROR(StringList(v, k, &names));
            for (size_t i = 0; i < names.size(); ++i) {
              auto it = std::find_if(std::begin(kCiphers), std::end(kCiphers),
                                     [&](const CipherName& c) { return c.go == names[i]; });
              if (it == std::end(kCiphers)) {
                return Error(v[i], "cipher_suites: unknown cipher " +
                                       util::QuoteForMessage(names[i]) +
                                       " (expected a Go name such as "
                                       "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)");
              }
              if (!it->openssl.empty()) t->cipher_suites.emplace_back(it->openssl);
            }
            return Status::Ok();
          }
          if (k == "curve_preferences") {
            std::vector<std::string> names;
            NVMLX_RETURN_IF_ERROR(StringList(v, k, &names));
            for (size_t i = 0; i < names.size(); ++i) {
              auto it = std::find_if(std::begin(kCurves), std::end(kCurves),
                                     [&](const CurveName& c) { return c.go == names[i]; });
              if (it == std::end(kCurves)) {
                return Error(v[i], "curve_preferences: unknown curve " +
                                       util::QuoteForMessage(names[i]) +
                                       " (expected CurveP256, CurveP384, CurveP521 or X25519)");
              }
              t->curves.emplace_back(it->openssl);
            }
            return Status::Ok();
          }
          if (k == "min_version") return Version(v, k, &t->min_version);
          if (k == "max_version") return Version(v, k, &t->max_version);
          if (k == "prefer_server_cipher_suites") {
            return Bool(v, k, &t->prefer_server_cipher_suites);
          }
          return StringList(v, k, &t->client_allowed_sans);  // client_allowed_sans
        });
    NVMLX_RETURN_IF_ERROR(st);
    t->enabled = !t->cert_file.empty() || !t->cert.empty() || !t->key_file.empty() ||
                 !t->key.empty() || !t->client_ca_file.empty() || !t->client_ca.empty() ||
                 have_client_auth;
    if (!t->enabled) return Status::Ok();
    if (t->cert_file.empty() && t->cert.empty()) {
      return Error(node, "tls_server_config: missing one of cert or cert_file");
    }
    if (t->key_file.empty() && t->key.empty()) {
      return Error(node, "tls_server_config: missing one of key or key_file");
    }
    if ((!t->client_ca_file.empty() || !t->client_ca.empty()) &&
        t->client_auth == ClientAuth::kNoClientCert) {
      return Error(node,
                   "tls_server_config: client CA's have been configured without a Client Auth "
                   "Policy (set client_auth_type, e.g. RequireAndVerifyClientCert)");
    }
    if ((t->client_auth == ClientAuth::kVerifyClientCertIfGiven ||
         t->client_auth == ClientAuth::kRequireAndVerifyClientCert) &&
        t->client_ca_file.empty() && t->client_ca.empty()) {
      return Error(node, "tls_server_config: client_auth_type " + client_auth +
                             " needs client_ca_file (the CA that signs client certificates)");
    }
    if (!t->client_allowed_sans.empty() && t->client_auth != ClientAuth::kRequireAnyClientCert &&
        t->client_auth != ClientAuth::kRequireAndVerifyClientCert) {
      return Error(node,
                   "tls_server_config: client_allowed_sans requires client_auth_type to be one "
                   "of RequireAnyClientCert or RequireAndVerifyClientCert");
    }
    if (t->min_version > t->max_version) {
      return Error(node, "tls_server_config: min_version is above max_version");
    }
    return Status::Ok();
  }

  Status Http(const YAML::Node& node, WebConfig* c) const {
    return Map(node, "http_server_config", {"http2", "headers"},
               [&](const std::string& k, const YAML::Node& v) -> Status {
                 if (k == "http2") return Bool(v, k, &c->http2);
                 return Headers(v, c);
               });
  }

  Status Headers(const YAML::Node& node, WebConfig* c) const {
    if (node.IsNull()) return Status::Ok();
    if (!node.IsMap()) return Error(node, "headers: expected a mapping of header: value");
    std::set<std::string> seen;
    for (const auto& kv : node) {
      const std::string name = kv.first.IsScalar() ? kv.first.Scalar() : "";
      const auto& rules = HeaderRules();
      auto rule = std::find_if(rules.begin(), rules.end(),
                               [&](const HeaderRule& r) { return r.name == name; });
      if (rule == rules.end()) {
        return Error(kv.first, "headers: HTTP header " + util::QuoteForMessage(name) +
                                   " can not be configured (expected one of "
                                   "Strict-Transport-Security, X-Content-Type-Options, "
                                   "X-Frame-Options, X-XSS-Protection, Content-Security-Policy)");
      }
      if (!seen.insert(name).second)
        return Error(kv.first, "headers: " + util::QuoteForMessage(name) + " repeated");
      if (!kv.second.IsScalar())
        return Error(kv.second, "headers: " + name + ": expected a string");
      const std::string value = kv.second.Scalar();
      if (value.find_first_of("\r\n") != std::string::npos ||
          value.find('\0') != std::string::npos) {
        return Error(kv.second, "headers: " + name + ": a value must be one line");
      }
      if (!rule->values.empty() &&
          std::find(rule->values.begin(), rule->values.end(), value) == rule->values.end()) {
        std::string list;
        for (std::string_view v : rule->values) list += (list.empty() ? "" : ", ") + std::string(v);
        return Error(kv.second, "headers: invalid value for " + name + " (expected one of " + list +
                                    ", got " + util::QuoteForMessage(value) + ")");
      }
      c->headers.emplace_back(name, value);
    }
    return Status::Ok();
  }

  Status Users(const YAML::Node& node, WebConfig* c) const {
    if (node.IsNull()) return Status::Ok();
    if (!node.IsMap()) return Error(node, "basic_auth_users: expected a mapping of user: hash");
    for (const auto& kv : node) {
      if (!kv.first.IsScalar()) return Error(kv.first, "basic_auth_users: expected a user name");
      const std::string user = kv.first.Scalar();
      if (c->users.count(user)) {
        return Error(kv.first,
                     "basic_auth_users: user " + util::QuoteForMessage(user) + " repeated");
      }
      if (!kv.second.IsScalar()) {
        return Error(kv.second, "basic_auth_users: " + user + ": expected a bcrypt hash");
      }
      const std::string hash = kv.second.Scalar();
      // $2a$/$2b$/$2y$, a two-digit cost 04-31, '$', 53 characters of salt and hash.
      const bool shape = hash.size() == 60 && hash[0] == '$' && hash[1] == '2' &&
                         (hash[2] == 'a' || hash[2] == 'b' || hash[2] == 'y') && hash[3] == '$' &&
                         std::isdigit(static_cast<unsigned char>(hash[4])) &&
                         std::isdigit(static_cast<unsigned char>(hash[5])) && hash[6] == '$';
      const int cost = shape ? (hash[4] - '0') * 10 + (hash[5] - '0') : 0;
      if (!shape || cost < 4 || cost > 31) {
        return Error(kv.second, "basic_auth_users: " + user +
                                    ": not a bcrypt hash (expected $2y$<cost>$ and 53 "
                                    "characters, e.g. from htpasswd -nBC 10)");
      }
      c->users[user] = hash;
    }
    return Status::Ok();
  }

  Status RateLimit(const YAML::Node& node, WebConfig* c) const {
    return Map(node, "rate_limit", {"burst", "interval"},
               [&](const std::string& k, const YAML::Node& v) -> Status {
                 std::string s;
                 NVMLX_RETURN_IF_ERROR(String(v, k, &s));
                 if (k == "burst") {
                   int b = 0;
                   auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), b);
                   if (ec != std::errc() || end != s.data() + s.size() || b < 0) {
                     return Error(v, "rate_limit: burst: expected a whole number");
                   }
                   c->rate_limit_burst = b;
                   return Status::Ok();
                 }
                 Result<std::chrono::nanoseconds> d = ParseGoDuration(s);
                 if (!d.ok() || d->count() < 0) {
                   return Error(v, "rate_limit: interval: expected a duration such as 100ms");
                 }
                 c->rate_limit_interval = *d;
                 return Status::Ok();
               });
  }

 private:
  const std::string& file_;
};

std::string Resolve(const std::string& dir, const std::string& path) {
  if (path.empty() || path.front() == '/' || dir.empty()) return path;
  return dir + "/" + path;
}

}  // namespace

Result<WebConfig> ParseWebConfig(std::string_view text, const std::string& file) {
  Parser p(file);
  WebConfig c;
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return InvalidArgument(file + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  } catch (const std::exception& e) {
    return InvalidArgument(file + ": " + e.what());
  }
  try {
    NVMLX_RETURN_IF_ERROR(
        p.Map(root, "the web config",
              {"tls_server_config", "http_server_config", "rate_limit", "basic_auth_users"},
              [&](const std::string& k, const YAML::Node& v) -> Status {
                if (k == "tls_server_config") return p.Tls(v, &c.tls);
                if (k == "http_server_config") return p.Http(v, &c);
                if (k == "rate_limit") return p.RateLimit(v, &c);
                return p.Users(v, &c);
              }));
  } catch (const std::exception& e) {
    return InvalidArgument(file + ": " + e.what());
  }
  const size_t slash = file.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : file.substr(0, slash);
  c.tls.cert_file = Resolve(dir, c.tls.cert_file);
  c.tls.key_file = Resolve(dir, c.tls.key_file);
  c.tls.client_ca_file = Resolve(dir, c.tls.client_ca_file);
  return c;
}

Result<WebConfig> LoadWebConfig(const std::string& path) {
  Result<std::string> text = ReadTextFile(path, "web config file");
  if (!text.ok()) return InvalidArgument(text.status().message());
  return ParseWebConfig(*text, path);
}

}  // namespace nvmlx::config
