#include "app/collectors_source.h"

#include <utility>

namespace nvmlx::app {

Result<CollectorsSource> LoadCollectors(const config::Options& options,
                                        const config::GetEnvFn& getenv) {
  (void)getenv;
  if (!options.configmap_name.empty()) {
    return InvalidArgument("-m/--configmap-data " + options.configmap_namespace + ":" +
                           options.configmap_name +
                           ": reading the collectors from a ConfigMap is not implemented yet; "
                           "mount the ConfigMap as a file and point -f at it");
  }
  Result<std::vector<config::CollectorEntry>> rows = config::LoadCollectorsCsv(options.collectors);
  if (!rows.ok()) return InvalidArgument(rows.status().message());
  return CollectorsSource{options.collectors, std::move(rows).value()};
}

}  // namespace nvmlx::app
