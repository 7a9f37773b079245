// The web config file (--web-config-file / DCGM_EXPORTER_WEB_CONFIG_FILE): the Prometheus
// exporter-toolkit format, so that a file written for dcgm-exporter or any Go exporter works
// unchanged. docs/web.md describes every key.
//
//   tls_server_config:   cert_file, key_file (or inline cert, key), client_ca_file (or inline
//                        client_ca), client_auth_type, min_version, max_version, cipher_suites,
//                        curve_preferences, prefer_server_cipher_suites, client_allowed_sans
//   http_server_config:  http2 (accepted; HTTP/1.1 is served), headers
//   rate_limit:          interval, burst (all requests; 429 beyond)
//   basic_auth_users:    user: bcrypt hash
//
// Parsing is strict, as the toolkit's yaml.UnmarshalStrict: an unknown or repeated key, a value
// of the wrong kind, an unknown cipher, curve, version or client auth type, a header the toolkit
// does not allow, or a password that is not a bcrypt hash is an error naming the file, the line
// and what was expected. Relative file names are resolved against the config file's directory.
// The certificate files themselves are read by serve/ (they rotate on their own).
//
// Pure functions: thread-safe.
#ifndef NVML_EXPORTER_CONFIG_WEB_CONFIG_H_
#define NVML_EXPORTER_CONFIG_WEB_CONFIG_H_

#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/status.h"

namespace nvmlx::config {

// Go's tls.ClientAuthType, by its exporter-toolkit name.
enum class ClientAuth {
  kNoClientCert,                // "" or NoClientCert
  kRequestClientCert,           // asked for, neither required nor verified
  kRequireAnyClientCert,        // required, not verified (also "RequireClientCert")
  kVerifyClientCertIfGiven,     // verified when sent
  kRequireAndVerifyClientCert,  // required and verified against client_ca
};

struct WebConfig {
  struct Tls {
    bool enabled = false;  // any TLS key set: the listener speaks TLS only
    std::string cert_file, key_file, client_ca_file;  // absolute or relative to the config file
    std::string cert, key, client_ca;                 // inline PEM (when no *_file)
    ClientAuth client_auth = ClientAuth::kNoClientCert;
    int min_version = 12;  // 10, 11, 12 or 13 (TLS 1.x); the toolkit's default is TLS12
    int max_version = 13;
    // OpenSSL names of the TLS 1.2-and-older suites asked for (Go names mapped); TLS 1.3 suites
    // are not configurable (as in Go), so their names are accepted and ignored. Empty: defaults.
    std::vector<std::string> cipher_suites;
    std::vector<std::string> curves;  // OpenSSL group names (P-256, P-384, P-521, X25519)
    bool prefer_server_cipher_suites = true;
    std::vector<std::string> client_allowed_sans;  // one must match a SAN of the client cert
  };
  Tls tls;
  bool http2 = true;                                         // accepted, no effect
  std::vector<std::pair<std::string, std::string>> headers;  // added to every response
  std::map<std::string, std::string> users;                  // user -> bcrypt hash
  // rate_limit: `burst` requests, then one per `interval` (0: off).
  int rate_limit_burst = 0;
  std::chrono::nanoseconds rate_limit_interval{0};
};

// Parses the file's text; `file` names it in errors and resolves relative paths.
Result<WebConfig> ParseWebConfig(std::string_view text, const std::string& file);

// Reads and parses `path` (errors name it).
Result<WebConfig> LoadWebConfig(const std::string& path);

}  // namespace nvmlx::config

#endif  // NVML_EXPORTER_CONFIG_WEB_CONFIG_H_
