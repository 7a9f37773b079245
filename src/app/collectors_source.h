// Where the collectors CSV comes from: the file (-f / DCGM_EXPORTER_COLLECTORS), or, with
// -m / DCGM_EXPORTER_CONFIGMAP_DATA NAMESPACE:NAME, the `metrics` key of that ConfigMap read
// through the Kubernetes API server (as dcgm-exporter does; docs/compatibility.md).
//
// Thread-safety: a pure function of its inputs (and of the file or API server it reads).
#ifndef NVML_EXPORTER_APP_COLLECTORS_SOURCE_H_
#define NVML_EXPORTER_APP_COLLECTORS_SOURCE_H_

#include <string>
#include <vector>

#include "config/collectors_csv.h"
#include "config/options.h"
#include "util/status.h"

namespace nvmlx::app {

struct CollectorsSource {
  // What messages call it: the file's path, or "configmap NS/NAME key metrics".
  std::string name;
  std::vector<config::CollectorEntry> rows;
};

// Errors are fit for stderr and name the source; every one is a usage error (exit 2).
Result<CollectorsSource> LoadCollectors(const config::Options& options,
                                        const config::GetEnvFn& getenv);

}  // namespace nvmlx::app

#endif  // NVML_EXPORTER_APP_COLLECTORS_SOURCE_H_
