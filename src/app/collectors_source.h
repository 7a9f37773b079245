// Where the collectors CSV comes from: the file (-f / DCGM_EXPORTER_COLLECTORS, or the YAML's
// metrics.file), the YAML's inline metrics.fields (--config-file), or, with -m /
// DCGM_EXPORTER_CONFIGMAP_DATA NAMESPACE:NAME, the `metrics` key of that ConfigMap read through
// the Kubernetes API server (as dcgm-exporter does; docs/compatibility.md). -m wins over the
// other two, and an explicit -f over the YAML's (config/options_yaml.cc).
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
  // Whether a reload (SIGHUP, the file changing) can read it again: only a file can. A ConfigMap
  // and inline fields are read at start only.
  bool reloadable = false;
};

// Errors are fit for stderr and name the source; every one is a usage error (exit 2).
Result<CollectorsSource> LoadCollectors(const config::Options& options,
                                        const config::GetEnvFn& getenv);

// The YAML's watch groups against these rows (config::CheckWatchGroups): no field in two
// groups, no group without a field. A usage error naming the group's file:line.
Status CheckWatchGroups(const config::Options& options, const CollectorsSource& source);

}  // namespace nvmlx::app

#endif  // NVML_EXPORTER_APP_COLLECTORS_SOURCE_H_
