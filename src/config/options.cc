#include "config/options.h"

#include <CLI/CLI.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "config/option_flags.h"

#ifndef NVMLX_CONFIG_VERSION
#define NVMLX_CONFIG_VERSION "unknown"
#endif

namespace nvmlx::config {
namespace {

using flags::FlagGroup;
using flags::FlagSpec;
using flags::kBoolValues;
using flags::Kind;
using flags::Quote;
using flags::Raw;
using flags::RawFlags;

// Every flag group (config/option_flags.h), and the two orders they are used in.
struct FlagGroups {
  FlagGroup core = flags::CoreFlags();
  FlagGroup selection = flags::SelectionFlags();
  FlagGroup runtime = flags::RuntimeFlags();
  FlagGroup web = flags::WebFlags();
  FlagGroup scrape = flags::ScrapeFlags();
  FlagGroup emf = flags::EmfFlags();
  FlagGroup kubernetes = flags::KubernetesFlags();
  FlagGroup windows = flags::CounterWindowFlags();
  FlagGroup series = flags::SeriesFlags();
  FlagGroup compat = flags::CompatFlags();

  // The order of --help (and of CLI11's registration).
  std::vector<const FlagGroup*> HelpOrder() const {
    return {&core, &selection,  &runtime, &web,    &scrape,
            &emf,  &kubernetes, &windows, &series, &compat};
  }
  // The order the converters run, which decides which of several bad values is reported: the
  // counter windows are judged next to the collection interval, before the GPU selection.
  std::vector<const FlagGroup*> CheckOrder() const {
    return {&core,   &windows, &selection,  &runtime, &web,
            &scrape, &emf,     &kubernetes, &series,  &compat};
  }
};

// Every flag of every group, in --help order.
std::vector<const FlagSpec*> AllFlags(const FlagGroups& groups) {
  std::vector<const FlagSpec*> all;
  for (const FlagGroup* g : groups.HelpOrder()) {
    for (const FlagSpec& f : g->flags) all.push_back(&f);
  }
  return all;
}

// Prefixed to every value handed to CLI11 (see RewriteArgs).
constexpr char kValueMarker = '@';

std::string HelpText(const std::vector<const FlagSpec*>& all) {
  std::string out =
      "nvml-exporter " NVMLX_CONFIG_VERSION
      ": GPU metrics for Prometheus, read from NVML; a drop-in replacement for\n"
      "NVIDIA dcgm-exporter (same flags, env vars, collectors CSV and metrics).\n\n"
      "Usage: nvml-exporter [flags]\n\n"
      "Every flag can also be set by the environment variable shown after it; an explicit flag\n"
      "wins over the variable. Names take one dash or two; values follow a space or '='.\n\n"
      "Flags:\n";
  auto names = [](const FlagSpec& f) {
    std::string s = "  ";
    if (!f.alias.empty()) s += "-" + std::string(f.alias) + ", ";
    s += "--" + std::string(f.name);
    if (!f.metavar.empty()) s += " " + std::string(f.metavar);
    return s;
  };
  for (const FlagSpec* spec : all) {
    const FlagSpec& f = *spec;
    if (!f.supported) continue;
    std::string line = names(f);
    if (!f.env.empty()) line += "  [$" + std::string(f.env) + "]";
    out += line + "\n        " + std::string(f.help);
    if (f.kind != Kind::kBool && !f.def.empty()) out += " (default " + Quote(f.def) + ")";
    out += "\n";
  }
  out +=
      "  -h, --help\n        Show this help and exit.\n"
      "  -v, --version\n        Print the version and exit.\n\n"
      "Environment:\n"
      "  NODE_NAME\n        Value of the hostname label (default: the host name).\n\n"
      "Accepted for compatibility with dcgm-exporter, without effect (each one set logs a\n"
      "warning at start saying why; see docs/compatibility.md):\n";
  for (const FlagSpec* spec : all) {
    const FlagSpec& f = *spec;
    if (f.supported) continue;
    std::string line = names(f);
    if (!f.env.empty()) line += "  [$" + std::string(f.env) + "]";
    out += line + "\n        " + std::string(f.help) + "\n";
  }
  return out;
}

// The flag named `name` (long name or alias), or null.
const FlagSpec* FindFlag(const std::vector<const FlagSpec*>& all, std::string_view name) {
  for (const FlagSpec* f : all) {
    if (f->name == name || (!f->alias.empty() && f->alias == name)) return f;
  }
  return nullptr;
}

// Rewrites argv into what CLI11 parses unambiguously: every known name, in any of Go's spellings
// (-f, --f, -collectors, --collectors, -rbmn), becomes `--<long>=<value>`, with a boolean's value
// checked by ParseBool and spelled true/false. CLI11 has no multi-letter short options and its
// own (wider) boolean words, hence the pre-pass.
struct PrePass {
  std::vector<std::string> args;  // for CLI11, program name first
  bool help = false;
  bool version = false;
  Status error;  // the first problem; help/version still win
};

PrePass RewriteArgs(const std::vector<const FlagSpec*>& all, int argc, char** argv) {
  PrePass p;
  p.args.push_back(argc > 0 && argv[0] != nullptr ? argv[0] : "nvml-exporter");
  auto fail = [&p](std::string msg) {
    if (p.error.ok()) p.error = InvalidArgument(std::move(msg));
  };
  bool positional_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (positional_only || arg.size() < 2 || arg[0] != '-') {
      fail("unexpected argument " + Quote(arg) + ": nvml-exporter takes flags only");
      continue;
    }
    if (arg == "--") {
      positional_only = true;
      continue;
    }
    std::string_view body = arg.substr(arg[1] == '-' ? 2 : 1);
    std::optional<std::string_view> inline_value;
    if (size_t eq = body.find('='); eq != std::string_view::npos) {
      inline_value = body.substr(eq + 1);
      body = body.substr(0, eq);
    }
    if (body == "h" || body == "help") {
      if (!p.version) p.help = true;
      continue;
    }
    if (body == "v" || body == "version") {
      if (!p.help) p.version = true;
      continue;
    }
    const FlagSpec* spec = FindFlag(all, body);
    if (spec == nullptr) {
      fail("unknown flag " + std::string(arg.substr(0, arg.find('='))) +
           " (see nvml-exporter --help)");
      continue;
    }
    const FlagSpec& f = *spec;
    std::string value;
    if (f.kind == Kind::kBool) {
      // Go: a boolean never takes the next argument; `-n=false` spells the value.
      if (inline_value) {
        std::optional<bool> b = ParseGoBool(*inline_value);
        if (!b) {
          fail("--" + std::string(f.name) + ": " + Quote(*inline_value) +
               " is not a boolean (expected one of " + std::string(kBoolValues) + ")");
          continue;
        }
        value = *b ? "true" : "false";
      } else {
        value = "true";
      }
    } else if (inline_value) {
      value = std::string(*inline_value);
    } else if (i + 1 < argc) {
      value = argv[++i];  // Go takes the next argument whatever it looks like
    } else {
      fail("flag --" + std::string(f.name) + " needs a value");
      continue;
    }
    // CLI11 rejects an empty `--x=`, which Go accepts (and we then judge); a marker character in
    // front of every value keeps it non-empty and is stripped after parsing.
    p.args.push_back("--" + std::string(f.name) + "=" + kValueMarker + value);
  }
  return p;
}

// One flag as CLI11 binds it: every `--name=value` it parsed, marker included.
struct BoundFlag {
  std::vector<std::string> values;
  CLI::Option* option = nullptr;
};

// Registers `group`'s flags on `app`, binding each to the next element of `bound`.
void RegisterFlags(std::span<const FlagSpec> group, CLI::App* app, BoundFlag** bound) {
  for (const FlagSpec& f : group) {
    BoundFlag& b = *(*bound)++;
    b.option = app->add_option("--" + std::string(f.name), b.values)
                   ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
                   ->allow_extra_args(false)
                   ->expected(1);
  }
}

// Each flag's value: from the command line (`args`, as RewriteArgs made them), else from its
// env var. Set-but-empty env vars count as unset, as urfave does for booleans: manifests often
// template `VAR: ""` for "leave the default".
Result<std::vector<Raw>> ReadValues(const FlagGroups& groups,
                                    const std::vector<const FlagSpec*>& all,
                                    const std::vector<std::string>& args, const GetEnvFn& getenv) {
  // CLI11 binds the canonical `--name=value` arguments; every value is kept as text and
  // converted by the groups, so that a flag and its env var go through exactly the same checks.
  std::vector<BoundFlag> bound(all.size());
  CLI::App app("nvml-exporter", "nvml-exporter");
  app.set_help_flag();  // -h/--help are handled by the pre-pass
  BoundFlag* next = bound.data();
  for (const FlagGroup* g : groups.HelpOrder()) RegisterFlags(g->flags, &app, &next);
  std::vector<const char*> cargv;
  cargv.reserve(args.size());
  for (const std::string& a : args) cargv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(cargv.size()), cargv.data());
  } catch (const CLI::ParseError& e) {
    return InvalidArgument(e.what());
  } catch (const std::exception& e) {
    // Still the command line's fault as far as the caller can tell: a usage error (exit 2).
    return InvalidArgument(std::string("parsing flags: ") + e.what());
  }

  std::vector<Raw> raw(all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    const FlagSpec& f = *all[i];
    Raw& r = raw[i];
    if (bound[i].option->count() > 0 && !bound[i].values.empty()) {
      r.set = true;
      r.from_flag = true;
      r.origin = "--" + std::string(f.name);
      for (const std::string& v : bound[i].values) r.values.push_back(v.substr(1));  // marker
      continue;
    }
    if (f.env.empty()) continue;
    std::optional<std::string> env = getenv(f.env);
    if (env && !env->empty()) {
      r.set = true;
      r.origin = std::string(f.env);
      r.values = {*env};
    }
  }
  return raw;
}

}  // namespace

std::optional<bool> ParseGoBool(std::string_view s) {
  if (s == "1" || s == "t" || s == "T" || s == "TRUE" || s == "true" || s == "True") return true;
  if (s == "0" || s == "f" || s == "F" || s == "FALSE" || s == "false" || s == "False") {
    return false;
  }
  return std::nullopt;
}

Result<Options> ParseOptions(int argc, char** argv, const GetEnvFn& getenv) {
  const FlagGroups groups;
  const std::vector<const FlagSpec*> all = AllFlags(groups);
  PrePass pre = RewriteArgs(all, argc, argv);
  Options o;
  if (pre.help || pre.version) {
    o.help_or_version_requested = true;
    o.help_text = pre.help ? HelpText(all) : "nvml-exporter version " NVMLX_CONFIG_VERSION "\n";
    o.exit_code_hint = ExitCode::kOk;
    return o;
  }
  if (!pre.error.ok()) return pre.error;
  Result<std::vector<Raw>> values = ReadValues(groups, all, pre.args, getenv);
  if (!values.ok()) return values.status();
  const RawFlags raw(all, std::move(values).value());

  for (const FlagGroup* g : groups.CheckOrder()) NVMLX_RETURN_IF_ERROR(g->convert(raw, &o));
  // The YAML file fills in what no flag or env var set (dcgm-exporter's precedence).
  NVMLX_RETURN_IF_ERROR(flags::ApplyConfigFile(raw, &o));
  if (std::optional<std::string> node = getenv("NODE_NAME"); node) o.node_name = *node;
  return o;
}

}  // namespace nvmlx::config
