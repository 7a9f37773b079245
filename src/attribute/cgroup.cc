#include "attribute/cgroup.h"

#include <array>
#include <string>

namespace nvmlx::attribute {
namespace {

bool IsHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

char Lower(char c) { return (c >= 'A' && c <= 'F') ? static_cast<char>(c - 'A' + 'a') : c; }

// A pod uid at the start of `s`: 8-4-4-4-12 hex groups separated by '-' (cgroupfs) or '_'
// (systemd slice names, where '-' is the hierarchy separator), or 32 bare hex digits (static
// pods: the kubelet uses the manifest hash as the uid). Returns the length consumed and the uid in
// its canonical form (lower case, dashes), or 0.
size_t MatchUid(std::string_view s, std::string* uid) {
  static constexpr std::array<size_t, 5> kGroups = {8, 4, 4, 4, 12};
  std::string out;
  out.reserve(36);
  size_t i = 0;
  for (size_t g = 0; g < kGroups.size(); ++g) {
    if (g > 0) {
      if (i < s.size() && (s[i] == '-' || s[i] == '_')) {
        out.push_back('-');
        ++i;
      } else if (g == 1 && s.size() >= 32) {
        // Maybe 32 bare hex digits.
        break;
      } else {
        return 0;
      }
    }
    for (size_t k = 0; k < kGroups[g]; ++k, ++i) {
      if (i >= s.size() || !IsHex(s[i])) return 0;
      out.push_back(Lower(s[i]));
    }
  }
  if (out.size() == 8) {  // the bare form: 24 more hex digits
    for (size_t k = 0; k < 24; ++k, ++i) {
      if (i >= s.size() || !IsHex(s[i])) return 0;
      out.push_back(Lower(s[i]));
    }
  }
  *uid = std::move(out);
  return i;
}

// The pod uid named by one path component, or empty. Shapes:
//   systemd:  "kubepods-pod<uid_>.slice", "kubepods-burstable-pod<uid_>.slice"
//   cgroupfs: "pod<uid>"
std::string PodUidOf(std::string_view comp) {
  std::string_view rest = comp;
  if (rest.size() > 6 && rest.substr(rest.size() - 6) == ".slice") {
    rest.remove_suffix(6);
    // The slice's own name is its last '-' segment, "pod<uid_>".
    const size_t dash = rest.rfind('-');
    if (dash != std::string_view::npos) rest.remove_prefix(dash + 1);
  }
  if (rest.substr(0, 3) != "pod") return {};
  rest.remove_prefix(3);
  std::string uid;
  const size_t n = MatchUid(rest, &uid);
  if (n == 0 || n != rest.size()) return {};
  return uid;
}

bool Is64Hex(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!IsHex(c)) return false;
  }
  return true;
}

// The container id named by one path component below the pod, or empty. Shapes:
//   "cri-containerd-<id>.scope", "crio-<id>.scope", "docker-<id>.scope" (systemd driver),
//   "<id>", "crio-<id>" (cgroupfs driver). "crio-conmon-<id>.scope" is CRI-O's monitor: none.
std::string ContainerIdOf(std::string_view comp) {
  if (comp.size() > 6 && comp.substr(comp.size() - 6) == ".scope") comp.remove_suffix(6);
  if (comp.substr(0, 12) == "crio-conmon-") return {};
  for (std::string_view prefix : {"cri-containerd-", "crio-", "docker-", "containerd-"}) {
    if (comp.substr(0, prefix.size()) == prefix) {
      comp.remove_prefix(prefix.size());
      break;
    }
  }
  if (!Is64Hex(comp)) return {};
  std::string id(comp);
  for (char& c : id) c = Lower(c);
  return id;
}

}  // namespace

std::optional<model::ProcessOwner> ParseCgroupPath(std::string_view path) {
  // Split on '/', keep the components in order; the pod segment nearest the leaf counts (a
  // nested kubelet, e.g. kind, shows its node's pod segment above the inner one).
  std::optional<model::ProcessOwner> owner;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t end = path.find('/', pos);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view comp = path.substr(pos, end - pos);
    pos = end + 1;
    if (comp.empty() || comp == "." || comp == "..") continue;
    if (std::string uid = PodUidOf(comp); !uid.empty()) {
      owner = model::ProcessOwner{std::move(uid), ""};
      continue;
    }
    if (owner && owner->container_id.empty()) {
      if (std::string id = ContainerIdOf(comp); !id.empty()) owner->container_id = std::move(id);
    }
  }
  return owner;
}

std::optional<model::ProcessOwner> ParseCgroupFile(std::string_view text) {
  std::optional<model::ProcessOwner> pod_only;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    // "hierarchy-id:controllers:path"; the path itself may contain ':'.
    const size_t c1 = line.find(':');
    if (c1 == std::string_view::npos) continue;
    const size_t c2 = line.find(':', c1 + 1);
    if (c2 == std::string_view::npos) continue;
    std::optional<model::ProcessOwner> owner = ParseCgroupPath(line.substr(c2 + 1));
    if (!owner) continue;
    if (!owner->container_id.empty()) return owner;
    if (!pod_only) pod_only = std::move(owner);
  }
  return pod_only;
}

}  // namespace nvmlx::attribute
