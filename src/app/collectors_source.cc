#include "app/collectors_source.h"

#include <chrono>
#include <utility>

#include "attribute/configmap.h"
#include "attribute/kube_client.h"
#include "config/yaml_config.h"
#include "util/log.h"

namespace nvmlx::app {

Result<CollectorsSource> LoadCollectors(const config::Options& options,
                                        const config::GetEnvFn& getenv) {
  if (!options.configmap_name.empty()) {
    // As dcgm-exporter: the in-cluster API server, the service account's token and CA (our
    // --kubernetes-api-server/-token-file/-ca-file override them), the `metrics` key. A failure
    // stops the start; dcgm-exporter exits too.
    const std::string flag =
        "-m/--configmap-data " + options.configmap_namespace + ":" + options.configmap_name + ": ";
    Result<attribute::KubeApiConfig> api = attribute::ResolveKubeApiConfig(
        options.kubernetes_api_server, options.kubernetes_token_file, options.kubernetes_ca_file,
        getenv);
    if (!api.ok()) return InvalidArgument(flag + api.status().message());
    attribute::KubeApiClient client(*api);
    Result<std::string> csv =
        attribute::ReadConfigMapKey(client, options.configmap_namespace, options.configmap_name,
                                    "metrics", std::chrono::seconds(10));
    if (!csv.ok()) return InvalidArgument(flag + csv.status().message());
    const std::string source =
        "configmap " + options.configmap_namespace + "/" + options.configmap_name + " key metrics";
    std::vector<std::string> warnings;
    Result<std::vector<config::CollectorEntry>> rows =
        config::ParseCollectorsCsv(*csv, source, &warnings, options.collectors_unknown_fields);
    if (!rows.ok()) return InvalidArgument(rows.status().message());
    // An empty ConfigMap is an error (as in dcgm-exporter), so not also the parser's warning.
    if (rows->empty()) return InvalidArgument(source + ": no metrics found");
    for (const std::string& w : warnings) log::Warn("collectors file", {{"warning", w}});
    return CollectorsSource{source, std::move(rows).value(), /*reloadable=*/false};
  }
  if (!options.inline_collectors_csv.empty()) {
    // metrics.fields of --config-file: the same rows a CSV file gives, messages pointing at the
    // YAML lines. Read once, at start: there is no file of its own to reload.
    std::vector<std::string> warnings;
    Result<std::vector<config::CollectorEntry>> rows =
        config::ParseCollectorsCsv(options.inline_collectors_csv, options.inline_collectors_source,
                                   &warnings, options.collectors_unknown_fields);
    if (!rows.ok()) return InvalidArgument(rows.status().message());
    for (const std::string& w : warnings) log::Warn("collectors file", {{"warning", w}});
    return CollectorsSource{options.inline_collectors_source + " metrics.fields",
                            std::move(rows).value(), /*reloadable=*/false};
  }
  Result<std::vector<config::CollectorEntry>> rows =
      config::LoadCollectorsCsv(options.collectors, options.collectors_unknown_fields);
  if (!rows.ok()) return InvalidArgument(rows.status().message());
  return CollectorsSource{options.collectors, std::move(rows).value(), /*reloadable=*/true};
}

Status CheckWatchGroups(const config::Options& options, const CollectorsSource& source) {
  Status st = config::CheckWatchGroups(options.watch_groups, source.rows, source.name);
  if (!st.ok()) return InvalidArgument(st.message());
  return Status::Ok();
}

}  // namespace nvmlx::app
