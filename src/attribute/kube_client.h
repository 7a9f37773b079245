// KubeApiClient: the few HTTPS requests the daemon makes to the Kubernetes API server (Boost.Beast
// over OpenSSL): the PodWatcher's GETs, the node fault watch's PATCHes and POSTs; and where the
// server is (in-cluster config, overridable by flags).
//
// In-cluster config, as client-go's rest.InClusterConfig: https://$KUBERNETES_SERVICE_HOST:
// $KUBERNETES_SERVICE_PORT, the service account token from
// /var/run/secrets/kubernetes.io/serviceaccount/token (read again for every connection: bound
// tokens rotate) and the cluster CA from .../ca.crt. The server certificate is verified against
// that CA and the host name (or IP address) we connect to.
//
// Every request is its own connection ("Connection: close"); the pod watch is one long request
// whose body is read line by line as it arrives. A request can be interrupted from another thread
// with Stop(), which is how the watcher's thread is shut down promptly.
//
// Thread-safety: one thread makes the requests (Get/Call/Stream are not re-entrant); Stop() may be
// called from any thread.
#ifndef NVML_EXPORTER_ATTRIBUTE_KUBE_CLIENT_H_
#define NVML_EXPORTER_ATTRIBUTE_KUBE_CLIENT_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "util/status.h"

namespace nvmlx::attribute {

struct KubeApiConfig {
  std::string host;  // name or IP address, without brackets
  std::string port = "443";
  std::string token_file;  // empty: no Authorization header
  std::string ca_file;
};

inline constexpr char kServiceAccountDir[] = "/var/run/secrets/kubernetes.io/serviceaccount";

// server_url: "https://host[:port]" (flag --kubernetes-api-server); empty: from
// KUBERNETES_SERVICE_HOST / KUBERNETES_SERVICE_PORT (via getenv). Empty token_file / ca_file mean
// the service account's. Errors name what is missing.
using EnvLookup = std::function<std::optional<std::string>(std::string_view)>;
Result<KubeApiConfig> ResolveKubeApiConfig(const std::string& server_url,
                                           const std::string& token_file,
                                           const std::string& ca_file, const EnvLookup& getenv);

// Percent-encodes a query value (field selectors hold '=' and ',', continue tokens and resource
// versions are opaque): every byte but RFC 3986's unreserved ones.
std::string QueryEscape(std::string_view s);
// The first 200 bytes of an error body, newlines as spaces, for a log line or a Status.
std::string BodyExcerpt(const std::string& body);

struct HttpResponse {
  unsigned status = 0;
  std::string body;  // for Stream: only when the status is not 200 (the error body)
};

// One request with a body (KubeApiClient::Call): a PATCH of a Node's status, a POST of an Event.
struct KubeApiCall {
  std::string method = "GET";
  std::string target = {};  // "/api/v1/nodes/n1/status"
  std::string body = {};
  std::string content_type = "application/json";
};

class KubeApiClient {
 public:
  explicit KubeApiClient(KubeApiConfig config);
  ~KubeApiClient();
  KubeApiClient(const KubeApiClient&) = delete;
  KubeApiClient& operator=(const KubeApiClient&) = delete;

  // GET `target` ("/api/v1/pods?..."); the whole body. Transport and TLS failures are
  // UNAVAILABLE; any HTTP status comes back as a response.
  Result<HttpResponse> Get(const std::string& target, std::chrono::milliseconds timeout);

  // Any request (`call.method`, its body and content type); the whole response, as Get.
  Result<HttpResponse> Call(const KubeApiCall& call, std::chrono::milliseconds timeout);

  // GET a streaming body, calling on_line for every complete line as it arrives (false stops).
  // Ends OK when the server ends the body; UNAVAILABLE when nothing arrived for idle_timeout, the
  // connection broke, or Stop() was called. A non-200 status is returned with its body.
  Result<HttpResponse> Stream(const std::string& target, std::chrono::milliseconds idle_timeout,
                              const std::function<bool(std::string_view)>& on_line);

  // From any thread: the running request (and every later one) returns UNAVAILABLE soon.
  void Stop();
  bool stopped() const { return stop_.load(); }

 private:
  Result<HttpResponse> Request(const KubeApiCall& call, std::chrono::milliseconds timeout,
                               const std::function<bool(std::string_view)>* on_line);

  const KubeApiConfig config_;
  std::atomic<bool> stop_{false};
};

}  // namespace nvmlx::attribute

#endif  // NVML_EXPORTER_ATTRIBUTE_KUBE_CLIENT_H_
