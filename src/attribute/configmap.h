// One key of a Kubernetes ConfigMap, read through the API server: dcgm-exporter's
// -m/--configmap-data NAMESPACE:NAME reads its collectors CSV from the ConfigMap's `metrics` key
// (internal/pkg/counters/counter_config.go: readConfigMap, with client-go's in-cluster config).
//
// Thread-safety: ConfigMapValue is a pure function; ReadConfigMapKey uses the client (one thread).
#ifndef NVML_EXPORTER_ATTRIBUTE_CONFIGMAP_H_
#define NVML_EXPORTER_ATTRIBUTE_CONFIGMAP_H_

#include <chrono>
#include <string>
#include <string_view>

#include "attribute/kube_client.h"
#include "util/status.h"

namespace nvmlx::attribute {

// `data[key]` of a ConfigMap object's JSON. Errors name `what` ("configmap ns/name"):
// not JSON, no data, no such key, not a string.
Result<std::string> ConfigMapValue(std::string_view json, std::string_view key,
                                   const std::string& what);

// GET /api/v1/namespaces/<ns>/configmaps/<name>, then ConfigMapValue. A namespace or name that
// is not a DNS label/subdomain is INVALID_ARGUMENT before any request; a non-200 answer is
// UNAVAILABLE with the status and the start of the body.
Result<std::string> ReadConfigMapKey(KubeApiClient& client, const std::string& ns,
                                     const std::string& name, std::string_view key,
                                     std::chrono::milliseconds timeout);

}  // namespace nvmlx::attribute

#endif  // NVML_EXPORTER_ATTRIBUTE_CONFIGMAP_H_
