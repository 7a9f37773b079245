// flags_doc: prints the generated part of docs/flags.md, every flag of the FlagSpec tables
// (config/option_flags.h) as Markdown tables, one per group in --help's order; the flags that
// have no effect here in a table of their own, as --help lists them apart. `make flags-doc`
// writes it between the markers of docs/flags.md (scripts/flags_doc.sh); the ctest test
// flags_doc_check fails when the file differs, so the page cannot drift from the tables.
//
// Its list of groups is checked against the daemon's own --help (ParseOptions): a group or flag
// that --help lists and this program does not, or the reverse, is an error (exit 1).
#include <cctype>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "config/option_flags.h"
#include "config/options.h"

namespace nvmlx::config::flags {
namespace {

struct DocGroup {
  std::string_view title;
  std::string_view about;
  FlagGroup group;
};

// The groups, in --help order (options.cc, FlagGroups::HelpOrder).
std::vector<DocGroup> Groups() {
  return {
      {"Core", "What to collect, how often, and where to serve it.", CoreFlags()},
      {"GPU selection and labels", "Which GPUs, and how their labels are spelled.",
       SelectionFlags()},
      {"Runtime", "Logging, which NVML to load, the profiling fields' source, `--once`.",
       RuntimeFlags()},
      {"Web server", "The HTTP server's timeouts and limits.", WebFlags()},
      {"Scrapes, probe and self-metrics", "dcgm-exporter 4.8.4's.", ScrapeFlags()},
      {"CloudWatch EMF", "nvml-exporter's own: EMF documents besides `/metrics`.", EmfFlags()},
      {"Kubernetes and HPC attribution",
       "Pod, namespace and container labels (kubelet), per-pod usage (API server), HPC jobs, "
       "and without Kubernetes the container labels of a Docker-compatible engine.",
       KubernetesFlags()},
      {"Counter windows", "The windows of the exporter-computed `DCGM_EXP_*` counters.",
       CounterWindowFlags()},
      {"Series shape and probes", "nvml-exporter's own.", SeriesFlags()},
      {"Other dcgm-exporter flags", "The rest of dcgm-exporter's flags that do something here.",
       CompatFlags()},
  };
}

// Help text as one Markdown line: --help's wrapped continuation lines joined, and what Markdown
// would read as markup escaped (table cells, HTML tags, emphasis).
std::string TableCell(std::string_view text) {
  std::string out;
  bool space = false;
  for (const char c : text) {
    if (c == '\n' || c == ' ' || c == '\t') {
      space = true;
      continue;
    }
    if (space && !out.empty()) out += ' ';
    space = false;
    const bool word_start =
        out.empty() || std::isalnum(static_cast<unsigned char>(out.back())) == 0;
    switch (c) {
      case '|':
        out += "\\|";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '*':
        out += "\\*";
        break;
      case '_':
        out += word_start ? "\\_" : "_";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string FlagCell(const FlagSpec& f) {
  std::string s = "`";
  if (!f.alias.empty()) s += "-" + std::string(f.alias) + ", ";
  s += "--" + std::string(f.name);
  if (!f.metavar.empty()) s += " " + std::string(f.metavar);
  return s + "`";
}

std::string Row(const FlagSpec& f) {
  std::string env = f.env.empty() ? "" : "`" + std::string(f.env) + "`";
  std::string def;
  if (f.kind == Kind::kBool) {
    def = std::string(f.def);
  } else if (!f.def.empty()) {
    def = "`" + std::string(f.def) + "`";
  }
  return "| " + FlagCell(f) + " | " + env + " | " + def + " | " + TableCell(f.help) + " |\n";
}

constexpr std::string_view kHeader = "| flag | env var | default | |\n|---|---|---|---|\n";

// The long names --help lists, from its flag lines ("  -f, --collectors FILE  [$ENV]").
std::set<std::string> HelpFlags() {
  std::vector<std::string> args = {"nvml-exporter", "--help"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  Result<Options> o =
      ParseOptions(static_cast<int>(argv.size()), argv.data(),
                   [](std::string_view) -> std::optional<std::string> { return std::nullopt; });
  std::set<std::string> names;
  if (!o.ok()) return names;
  std::istringstream in(o->help_text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("  -", 0) != 0) continue;
    const size_t at = line.find("--");
    if (at == std::string::npos) continue;
    const size_t end = line.find_first_of(" [", at);
    std::string name = line.substr(at + 2, end == std::string::npos ? end : end - at - 2);
    if (name != "help" && name != "version") names.insert(name);
  }
  return names;
}

int Main() {
  const std::vector<DocGroup> groups = Groups();
  std::set<std::string> ours;
  for (const DocGroup& g : groups) {
    for (const FlagSpec& f : g.group.flags) ours.insert(std::string(f.name));
  }
  const std::set<std::string> help = HelpFlags();
  if (help.empty()) {
    std::cerr << "flags_doc: could not read nvml-exporter --help\n";
    return 1;
  }
  int bad = 0;
  for (const std::string& n : help) {
    if (ours.count(n) == 0) {
      std::cerr << "flags_doc: --help lists --" << n
                << ", which no group of src/config/flags_doc.cc holds: add its group there\n";
      ++bad;
    }
  }
  for (const std::string& n : ours) {
    if (help.count(n) == 0) {
      std::cerr << "flags_doc: --" << n << " is in flags_doc.cc's groups but not in --help\n";
      ++bad;
    }
  }
  if (bad != 0) return 1;

  std::string out;
  for (const DocGroup& g : groups) {
    std::string rows;
    for (const FlagSpec& f : g.group.flags) {
      if (f.supported) rows += Row(f);
    }
    if (rows.empty()) continue;
    out += "### " + std::string(g.title) + "\n\n" + std::string(g.about) + "\n\n";
    out += std::string(kHeader) + rows + "\n";
  }
  std::string unsupported;
  for (const DocGroup& g : groups) {
    for (const FlagSpec& f : g.group.flags) {
      if (!f.supported) unsupported += Row(f);
    }
  }
  if (!unsupported.empty()) {
    out +=
        "### Accepted without effect\n\n"
        "dcgm-exporter's flags about DCGM itself: accepted and checked as dcgm-exporter "
        "checks them; each one set logs one warning at start naming it and why.\n\n";
    out += std::string(kHeader) + unsupported + "\n";
  }
  // No blank line before the end marker's line.
  while (!out.empty() && out.back() == '\n') out.pop_back();
  std::cout << out << "\n";
  return 0;
}

}  // namespace
}  // namespace nvmlx::config::flags

int main() { return nvmlx::config::flags::Main(); }
