#include "attribute/container_runtime.h"

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <exception>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "attribute/blocking_io.h"
#include "attribute/kube_client.h"
#include "util/escape.h"
#include "util/json_members.h"
#include "util/log.h"
#include "util/strings.h"

namespace nvmlx::attribute {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using util::json::Json;
using util::json::Member;
using util::json::StringMember;
using util::json::StringPtr;
using Local = net::local::stream_protocol;
using ErrorCode = boost::system::error_code;

// How often a waiting request looks at the deadline and the stop flag.
constexpr std::chrono::milliseconds kPoll{50};

// Whether `r` is an NVIDIA GPU request: driver "nvidia", or a "gpu" capability in any group.
bool IsNvidiaRequest(const Json& r) {
  if (util::EqualsIgnoreCase(StringMember(r, "Driver"), "nvidia")) return true;
  const Json* caps = util::json::Array(Member(r, "Capabilities"));
  if (caps == nullptr) return false;
  for (const Json& group : *caps) {
    if (!group.is_array()) continue;
    for (const Json& c : group) {
      const std::string* cap = StringPtr(&c);
      if (cap != nullptr && util::EqualsIgnoreCase(*cap, "gpu")) return true;
    }
  }
  return false;
}

// HostConfig.DeviceRequests into *c; true when the requests decide (explicit ids, all, or a
// count alone), false when the environment should.
bool GpusFromDeviceRequests(const Json& inspect, InspectedContainer* c) {
  const Json* requests = util::json::Array(Member(Member(inspect, "HostConfig"), "DeviceRequests"));
  if (requests == nullptr) return false;
  bool all = false, count_only = false;
  for (const Json& r : *requests) {
    if (!r.is_object() || !IsNvidiaRequest(r)) continue;
    const Json* ids = util::json::Array(Member(r, "DeviceIDs"));
    if (ids != nullptr && !ids->empty()) {
      for (const Json& id : *ids) {
        if (const std::string* token = StringPtr(&id)) c->gpu_tokens.push_back(*token);
      }
      continue;
    }
    const std::optional<int64_t> count = util::json::Int(Member(r, "Count"));
    if (!count.has_value()) continue;
    if (*count < 0) all = true;
    if (*count > 0) count_only = true;
  }
  if (!c->gpu_tokens.empty()) return true;
  c->all_gpus = all;
  return all || count_only;
}

// The first NVIDIA_VISIBLE_DEVICES= entry of Config.Env into *c.
void GpusFromEnvironment(const Json& inspect, InspectedContainer* c) {
  const Json* env = util::json::Array(Member(Member(inspect, "Config"), "Env"));
  if (env == nullptr) return;
  constexpr std::string_view kVar = "NVIDIA_VISIBLE_DEVICES=";
  for (const Json& e : *env) {
    const std::string* text = StringPtr(&e);
    if (text == nullptr) continue;
    const std::string& entry = *text;
    if (entry.compare(0, kVar.size(), kVar) != 0) continue;
    std::string_view rest = std::string_view(entry).substr(kVar.size());
    while (true) {
      const size_t comma = rest.find(',');
      std::string_view token = util::TrimWhitespace(rest.substr(0, comma));
      if (util::EqualsIgnoreCase(token, "all")) {
        c->all_gpus = true;
      } else if (!token.empty() && !util::EqualsIgnoreCase(token, "none") &&
                 !util::EqualsIgnoreCase(token, "void")) {
        c->gpu_tokens.emplace_back(token);
      }
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    return;
  }
}

std::optional<unsigned> ParseIndex(std::string_view s) {
  if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string_view::npos) {
    return std::nullopt;
  }
  unsigned n = 0;
  for (char ch : s) n = n * 10 + static_cast<unsigned>(ch - '0');
  return n;
}

// Marks in *use the identities `token` names (see DeviceKeysOf); `mark_gpu` marks a whole GPU.
template <typename MarkGpu>
void MarkToken(std::string_view token, const std::vector<model::DeviceIdentity>& ids,
               std::vector<bool>* use, const MarkGpu& mark_gpu) {
  if (token.substr(0, 4) == "MIG-") {
    token = token.substr(0, token.find("::"));
    std::string_view rest = token.substr(4);
    if (rest.substr(0, 4) == "GPU-") {  // MIG-GPU-<uuid>/<gi>/<ci>
      const size_t slash = rest.find('/');
      if (slash == std::string_view::npos) return;
      std::string_view gi_text = rest.substr(slash + 1);
      std::optional<unsigned> gi = ParseIndex(gi_text.substr(0, gi_text.find('/')));
      if (!gi) return;
      for (size_t i = 0; i < ids.size(); ++i) {
        if (ids[i].mig && ids[i].uuid == rest.substr(0, slash) &&
            ids[i].mig->gpu_instance_id == *gi) {
          (*use)[i] = true;
        }
      }
      return;
    }
    for (size_t i = 0; i < ids.size(); ++i) {
      if (ids[i].mig && ids[i].mig->uuid == token) (*use)[i] = true;
    }
    return;
  }
  if (token.substr(0, 4) == "GPU-") {
    for (size_t i = 0; i < ids.size(); ++i) {
      if (!ids[i].mig && ids[i].uuid == token) mark_gpu(i);
    }
    return;
  }
  if (token.substr(0, 6) == "nvidia") token.remove_prefix(6);
  std::optional<unsigned> index = ParseIndex(token);
  if (!index) return;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (!ids[i].mig && ids[i].index == *index) mark_gpu(i);
  }
}

// One GET over a fresh connection to the engine's socket, every step bounded by `deadline` and
// interruptible by `stop`. asio's local stream socket with Beast's HTTP parser.
class Exchange {
 public:
  Exchange(const std::string& socket_path, const std::atomic<bool>& stop,
           std::chrono::steady_clock::time_point deadline)
      : socket_path_(socket_path), stop_(stop), deadline_(deadline) {}

  Result<EngineAnswer> Get(const std::string& target) {
    const Local::endpoint endpoint(socket_path_);
    ErrorCode ec = Run([&](auto done) { socket_.async_connect(endpoint, done); });
    if (ec) return Failed("connect", ec);
    http::request<http::empty_body> req{http::verb::get, target, 11};
    req.set(http::field::host, "docker");  // any name: the socket decides where it goes
    req.set(http::field::user_agent, "nvml-exporter");
    req.set(http::field::accept, "application/json");
    req.set(http::field::connection, "close");
    ec = Run([&](auto done) { http::async_write(socket_, req, done); });
    if (ec) return Failed("send GET " + target, ec);
    parser_.body_limit(kMaxEngineAnswer);
    ec = Run([&](auto done) { http::async_read(socket_, buffer_, parser_, done); });
    if (ec == http::error::body_limit) {
      return Unavailable(socket_path_ + ": GET " + target + ": answer larger than " +
                         std::to_string(kMaxEngineAnswer >> 20) + " MiB");
    }
    if (ec) return Failed("read the answer to GET " + target, ec);
    EngineAnswer out;
    out.status = parser_.get().result_int();
    out.body = std::move(parser_.get().body());
    return out;
  }

 private:
  // Runs one asynchronous operation to completion on this thread; cancels it at the deadline or
  // when `stop_` becomes true. `start` receives the completion handler.
  template <typename Start>
  ErrorCode Run(Start start) {
    const BlockingResult r = RunToCompletion(
        ioc_, kPoll, start,
        [&] { return stop_.load() || std::chrono::steady_clock::now() >= deadline_; },
        [&] {
          ErrorCode ignored;
          socket_.cancel(ignored);
        });
    return r.cancelled ? ErrorCode(net::error::timed_out) : r.error;
  }

  Status Failed(const std::string& step, const ErrorCode& e) const {
    if (stop_.load()) return Unavailable("stopped");
    const std::string why =
        e == net::error::timed_out ? "no answer within the refresh timeout" : e.message();
    return Unavailable(socket_path_ + ": " + step + ": " + why);
  }

  const std::string& socket_path_;
  const std::atomic<bool>& stop_;
  const std::chrono::steady_clock::time_point deadline_;
  net::io_context ioc_;
  Local::socket socket_{ioc_};
  beast::flat_buffer buffer_;
  http::response_parser<http::string_body> parser_;
};

}  // namespace

Result<std::vector<ListedContainer>> ParseContainerList(std::string_view body) {
  Result<Json> parsed = util::json::Parse(body);
  if (!parsed.ok()) return InvalidArgument("container list: " + parsed.status().message());
  const Json& j = *parsed;
  if (!j.is_array()) return InvalidArgument("container list: expected a JSON array");
  std::vector<ListedContainer> out;
  for (const Json& c : j) {
    if (!c.is_object()) return InvalidArgument("container list: expected objects in the array");
    ListedContainer l;
    l.id = StringMember(c, "Id");
    if (l.id.empty()) continue;
    const Json* names = util::json::Array(Member(c, "Names"));
    if (names != nullptr && !names->empty()) {
      if (const std::string* first = StringPtr(&*names->begin())) l.first_name = *first;
    }
    l.created = util::json::Int(Member(c, "Created")).value_or(0);
    out.push_back(std::move(l));
  }
  return out;
}

Result<InspectedContainer> ParseContainerInspect(std::string_view body,
                                                 const ListedContainer& listed) {
  Result<Json> parsed = util::json::Parse(body);
  if (!parsed.ok() || !parsed->is_object()) {
    return InvalidArgument("container " + util::MessagePrefix(listed.id) +
                           ": inspect answer is not a JSON object");
  }
  const Json& j = *parsed;
  InspectedContainer c;
  std::string name = StringMember(j, "Name");
  if (name.empty()) name = listed.first_name;
  std::string id = StringMember(j, "Id");
  if (id.empty()) id = listed.id;
  std::string_view n = name;
  if (!n.empty() && n.front() == '/') n.remove_prefix(1);
  n = util::TrimWhitespace(n);
  if (n.empty())
    n = util::TrimWhitespace(id).substr(0, 12);  // the short id, as `docker ps` prints it
  c.label = SanitizeContainerLabel(n);
  if (!GpusFromDeviceRequests(j, &c)) GpusFromEnvironment(j, &c);
  return c;
}

std::string SanitizeContainerLabel(std::string_view name) {
  name = util::TrimWhitespace(name);
  std::string out;
  for (size_t i = 0; i < name.size();) {
    uint32_t cp = 0;
    const size_t n = util::DecodeUtf8(name, i, &cp);
    const bool control = n != 0 && (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F));
    const size_t width = n == 0 || control ? 1 : n;
    if (out.size() + width > kMaxContainerLabelBytes) break;
    if (n == 0 || control) {
      out.push_back('_');
    } else {
      out.append(name.substr(i, n));
    }
    i += n == 0 ? 1 : n;
  }
  return out;
}

std::vector<std::string> DeviceKeysOf(const InspectedContainer& c,
                                      const std::vector<model::DeviceIdentity>& ids) {
  std::vector<bool> use(ids.size(), false);
  auto mark_gpu = [&](size_t gpu) {
    use[gpu] = true;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (ids[i].mig && ids[i].uuid == ids[gpu].uuid) use[i] = true;
    }
  };
  if (c.all_gpus) {
    for (size_t i = 0; i < ids.size(); ++i) {
      if (!ids[i].mig) mark_gpu(i);
    }
  }
  for (const std::string& token : c.gpu_tokens)
    MarkToken(util::TrimWhitespace(token), ids, &use, mark_gpu);
  std::vector<std::string> keys;
  for (size_t i = 0; i < ids.size(); ++i) {
    const std::string& key = ids[i].DeviceKey();
    if (!use[i] || key.empty()) continue;
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  }
  return keys;
}

EngineClient::EngineClient(std::string socket_path) : socket_path_(std::move(socket_path)) {}

Result<EngineAnswer> EngineClient::Get(const std::string& target,
                                       std::chrono::steady_clock::time_point deadline) {
  if (stop_.load()) return Unavailable("stopped");
  try {
    Exchange exchange(socket_path_, stop_, deadline);
    return exchange.Get(target);
  } catch (const std::exception& e) {  // e.g. a socket path longer than sun_path
    return Unavailable(socket_path_ + ": " + e.what());
  }
}

namespace {

// GET /containers/<id>/json, reduced to its label and device keys. Null (and OK): gone since the
// list (404).
Result<std::optional<InspectCache::Entry>> Inspect(
    EngineClient* client, const ListedContainer& l,
    const std::vector<model::DeviceIdentity>& identities,
    std::chrono::steady_clock::time_point deadline) {
  const std::string target = "/containers/" + QueryEscape(l.id) + "/json";
  Result<EngineAnswer> answer = client->Get(target, deadline);
  if (!answer.ok()) return answer.status();
  if (answer->status == 404) return std::optional<InspectCache::Entry>();
  if (answer->status < 200 || answer->status >= 300) {
    return Unavailable("GET " + target + ": HTTP " + std::to_string(answer->status) + ": " +
                       BodyExcerpt(answer->body));
  }
  Result<InspectedContainer> c = ParseContainerInspect(answer->body, l);
  if (!c.ok()) return Unavailable("GET " + target + ": " + c.status().message());
  InspectCache::Entry e{l.first_name, c->label, {}};
  if (!e.label.empty()) e.device_keys = DeviceKeysOf(*c, identities);
  return std::optional<InspectCache::Entry>(std::move(e));
}

}  // namespace

Result<std::shared_ptr<model::RuntimeContainers>> FetchRuntimeContainers(
    EngineClient* client, const std::vector<model::DeviceIdentity>& identities,
    std::chrono::milliseconds timeout, size_t max_per_device, InspectCache* cache) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const std::string list_target = "/containers/json";
  Result<EngineAnswer> list = client->Get(list_target, deadline);
  if (!list.ok()) return list.status();
  if (list->status < 200 || list->status >= 300) {
    return Unavailable("GET " + list_target + ": HTTP " + std::to_string(list->status) + ": " +
                       BodyExcerpt(list->body));
  }
  Result<std::vector<ListedContainer>> listed = ParseContainerList(list->body);
  if (!listed.ok()) return Unavailable("GET " + list_target + ": " + listed.status().message());
  InspectCache local;
  if (cache == nullptr) cache = &local;
  // Forget the containers no longer listed (before any inspection can fail: the cache never
  // holds more than the engine lists).
  std::unordered_set<std::string> listed_ids;
  for (const ListedContainer& l : *listed) listed_ids.insert(l.id);
  std::erase_if(cache->by_id, [&](const auto& e) { return !listed_ids.count(e.first); });
  // Per device key: (Created, label) in the engine's list order.
  std::unordered_map<std::string, std::vector<std::pair<int64_t, std::string>>> found;
  for (const ListedContainer& l : *listed) {
    auto it = cache->by_id.find(l.id);
    if (it == cache->by_id.end() || it->second.first_name != l.first_name) {
      Result<std::optional<InspectCache::Entry>> e = Inspect(client, l, identities, deadline);
      if (!e.ok()) return e.status();
      if (!e->has_value()) continue;  // gone since the list
      it = cache->by_id.insert_or_assign(l.id, std::move(**e)).first;
    }
    for (const std::string& key : it->second.device_keys) {
      found[key].emplace_back(l.created, it->second.label);
    }
  }
  auto out = std::make_shared<model::RuntimeContainers>();
  for (auto& [key, containers] : found) {
    std::stable_sort(containers.begin(), containers.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::string>& names = out->names_by_device[key];
    for (auto& [created, label] : containers) {
      if (std::find(names.begin(), names.end(), label) != names.end()) continue;
      if (names.size() < max_per_device) {
        names.push_back(std::move(label));
      } else {
        ++out->dropped;
      }
    }
  }
  return out;
}

ContainerLabelRefresher::ContainerLabelRefresher(ContainerLabelOptions options,
                                                 std::vector<model::DeviceIdentity> identities)
    : options_(std::move(options)),
      identities_(std::move(identities)),
      client_(options_.socket_path),
      streak_(std::string(kSource), options_.errors.get()),
      worker_({.name = "container runtime refresher",
               .period = options_.period,
               .clock = options_.clock},
              [this] { RefreshOnce(); }) {
  if (options_.errors) options_.errors->Register(kSource);
}

ContainerLabelRefresher::~ContainerLabelRefresher() { Stop(); }

bool ContainerLabelRefresher::RefreshOnce() {
  Result<std::shared_ptr<model::RuntimeContainers>> r = FetchRuntimeContainers(
      &client_, identities_, options_.timeout, options_.max_per_device, &cache_);
  if (!r.ok()) {
    streak_.Fail("list the containers of the engine at " + options_.socket_path,
                 r.status().message());
    return false;
  }
  streak_.Succeed();
  const size_t dropped = (*r)->dropped;
  if (dropped > 0 && !capped_) {
    log::Warn(
        "more running containers use a GPU than get a container-labelled copy of its "
        "series; the oldest are kept, the others are left out (counted in "
        "nvml_exporter_container_labels_dropped)",
        {{"max_per_gpu", std::to_string(options_.max_per_device)},
         {"left_out", std::to_string(dropped)}});
  } else if (dropped == 0 && capped_) {
    log::Info("every running container using a GPU has its container-labelled series again");
  }
  capped_ = dropped > 0;
  latest_.Publish(std::move(*r));
  return true;
}

void ContainerLabelRefresher::Start() { worker_.Start(); }

void ContainerLabelRefresher::Stop() {
  client_.Stop();  // a refresh in progress ends within kPoll
  worker_.Stop();
}

std::shared_ptr<const model::RuntimeContainers> ContainerLabelRefresher::Latest() const {
  return latest_.Get();
}

}  // namespace nvmlx::attribute
