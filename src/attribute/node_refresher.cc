#include "attribute/node_refresher.h"

#include <utility>

#include "attribute/node_json.h"
#include "util/log.h"

namespace nvmlx::attribute {

NodeRefresher::NodeRefresher(NodeRefresherOptions options)
    : options_(std::move(options)),
      client_(options_.get ? nullptr : std::make_unique<KubeApiClient>(options_.api)),
      streak_(std::string(kSource), options_.errors),
      worker_({.name = "node refresher", .period = options_.period, .clock = options_.clock},
              [this] { RefreshOnce(); }) {
  if (options_.errors != nullptr) options_.errors->Register(kSource);
}

NodeRefresher::~NodeRefresher() { Stop(); }

std::string NodeRefresher::Target(std::string_view node_name) {
  // A node name is a DNS subdomain (lower-case letters, digits, '-', '.'), but escape it anyway:
  // NODE_NAME comes from the environment.
  return "/api/v1/nodes/" + QueryEscape(node_name);
}

bool NodeRefresher::RefreshOnce() {
  const std::string target = Target(options_.node_name);
  const std::string what = "get node " + options_.node_name;
  Result<HttpResponse> r = options_.get ? options_.get(target, options_.request_timeout)
                                        : client_->Get(target, options_.request_timeout);
  if (!r.ok()) {
    if (client_ != nullptr && client_->stopped()) return false;  // shutting down, not failing
    streak_.Fail(what, r.status().ToString());
    return false;
  }
  if (r->status != 200) {
    std::string why = "HTTP " + std::to_string(r->status) + ": " + BodyExcerpt(r->body);
    if (r->status == 403) why += " (does the ClusterRole grant get on nodes?)";
    streak_.Fail(what, why);
    return false;
  }
  Result<model::NodeInfo> node = ParseNode(r->body, "GET " + target);
  if (!node.ok()) {
    streak_.Fail(what, node.status().ToString());
    return false;
  }
  streak_.Succeed();
  log::Debug("node refreshed", {{"node", node->node_name},
                                {"instance_id", node->instance_id},
                                {"instance_type", node->instance_type},
                                {"gpu_resources", std::to_string(node->gpu_capacity.size())}});
  latest_.Publish(std::make_shared<const model::NodeInfo>(std::move(node).value()));
  return true;
}

void NodeRefresher::Start() {
  worker_.RunSoon();  // the first GET at once, on the worker thread: start-up does not wait for it
  worker_.Start();
}

void NodeRefresher::Stop() {
  // Interrupt a GET in progress first, so that Stop() does not wait out its timeout.
  if (client_ != nullptr && worker_.running()) client_->Stop();
  worker_.Stop();
}

std::shared_ptr<const model::NodeInfo> NodeRefresher::Latest() const { return latest_.Get(); }

}  // namespace nvmlx::attribute
