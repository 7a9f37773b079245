// WebState: one loaded web config (config/web_config.h) with its TLS context built from the
// certificate, key and CA files as they were when it was loaded, and a fingerprint of every
// byte it was built from (the config file and each file it names).
//
// The server polls Fingerprint() every few seconds; when it differs from the state in use it
// loads a new WebState and swaps it in (new connections get the new certificate; each request
// reads the current users and headers). A file that fails to load leaves the old state in use.
//
// Thread-safety: a WebState is immutable once built and shared as shared_ptr<const WebState>;
// the free functions are thread-safe.
#ifndef NVML_EXPORTER_SERVE_WEB_TLS_H_
#define NVML_EXPORTER_SERVE_WEB_TLS_H_

#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <string>
#include <vector>

#include "config/web_config.h"
#include "util/status.h"

namespace nvmlx::serve {

struct WebState {
  config::WebConfig config;
  std::shared_ptr<boost::asio::ssl::context> tls;  // null: plain HTTP
  std::string fingerprint;
};

// SHA-256 over the config file and the certificate, key and CA files it names (missing files
// hash as such, so that their appearance is a change too).
std::string WebFingerprint(const std::string& path);

// Parses `path` and builds its TLS context. Errors name the file and what is wrong with it.
Result<std::shared_ptr<const WebState>> LoadWebState(const std::string& path);

// Whether the peer certificate of an established TLS connection carries one of `allowed` as a
// DNS, email, IP or URI subject alternative name (tls_server_config.client_allowed_sans).
bool PeerHasAllowedSan(void* ssl /* SSL* */, const std::vector<std::string>& allowed);

}  // namespace nvmlx::serve

#endif  // NVML_EXPORTER_SERVE_WEB_TLS_H_
