#include "render/prometheus.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string_view>
#include <system_error>
#include <utility>
#include <variant>

#include "fields/xid_text.h"

namespace nvmlx::render {
namespace {

using config::CollectorEntry;
using config::MetricType;

void AppendInt(int64_t v, std::string* out) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, end);
}

void AppendUnsigned(uint64_t v, std::string* out) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, end);
}

// Go's %f is strconv.AppendFloat(f, 'f', 6, 64): the exact binary value correctly rounded to 6
// decimals, which is what std::to_chars(fixed, 6) produces too. Go would print NaN/+Inf/-Inf
// the same way we do, and these are the spellings the Prometheus parser accepts.
void AppendFixed(double v, int decimals, std::string* out) {
  if (std::isnan(v)) {
    out->append("NaN");
    return;
  }
  if (std::isinf(v)) {
    out->append(v > 0 ? "+Inf" : "-Inf");
    return;
  }
  // DBL_MAX has 309 integer digits; 6 decimals, sign and point fit comfortably.
  char buf[400];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::fixed, decimals);
  if (ec != std::errc()) {  // cannot happen with this buffer; keep the output parseable anyway
    out->append("NaN");
    return;
  }
  out->append(buf, end);
}

void AppendLabel(std::string_view name, std::string_view value, bool first, std::string* out) {
  if (!first) out->push_back(',');
  out->append(name);
  out->append("=\"");
  AppendEscapedLabelValue(value, out);
  out->push_back('"');
}

void AppendHelpType(std::string_view name, std::string_view help, std::string_view type,
                    std::string* out) {
  // dcgm-exporter's template prints "# HELP name " even for an empty help: keep the space.
  out->append("# HELP ");
  out->append(name);
  out->push_back(' ');
  AppendEscapedHelp(help, out);
  out->append("\n# TYPE ");
  out->append(name);
  out->push_back(' ');
  out->append(type);
  out->push_back('\n');
}

// The per-device label set, from '{' through "} ", built once per render and shared by every
// series of the device: the label part is ~80% of each line.
std::string BuildDevicePrefix(const collect::DeviceIdentity& id, const PrometheusOptions& options,
                              const std::vector<const CollectorEntry*>& label_rows) {
  std::string p;
  p.reserve(192);
  p.push_back('{');
  p.append("gpu=\"");
  AppendUnsigned(id.index, &p);
  p.push_back('"');
  AppendLabel(options.use_old_namespace ? "uuid" : "UUID", id.uuid, false, &p);
  AppendLabel("pci_bus_id", id.pci_bus_id, false, &p);
  p.append(",device=\"nvidia");
  AppendUnsigned(id.index, &p);
  p.push_back('"');
  AppendLabel("modelName", id.model_name, false, &p);
  if (!options.hostname.empty()) AppendLabel(options.hostname_label, options.hostname, false, &p);
  // label_rows is sorted by name and free of duplicate names.
  for (const CollectorEntry* row : label_rows) {
    for (const auto& [field_id, value] : id.label_values) {
      if (field_id == row->field->id) {
        AppendLabel(row->name, value, false, &p);
        break;
      }
    }
  }
  p.append("} ");
  return p;
}

constexpr int kXidErrorsField = 230;  // DCGM_FI_DEV_XID_ERRORS
constexpr int kXidCountField = 9001;  // DCGM_EXP_XID_ERRORS_COUNT

// The device prefix without its closing "} ", to which family-specific labels are appended.
std::string_view OpenPrefix(const std::string& prefix) {
  return std::string_view(prefix).substr(0, prefix.size() - 2);
}

// DCGM_FI_DEV_XID_ERRORS carries dcgm-exporter's attributes err_code and err_msg; attributes
// come after all labels, so after the CSV label fields.
void AppendXidLastPrefix(const std::string& prefix, const fields::Value& v, std::string* out) {
  int64_t xid = 0;
  if (const auto* i = std::get_if<int64_t>(&v)) {
    xid = *i;
  } else if (const auto* d = std::get_if<double>(&v)) {
    xid = static_cast<int64_t>(*d);
  }
  out->append(OpenPrefix(prefix));
  out->append(",err_code=\"");
  AppendInt(xid, out);
  out->push_back('"');
  AppendLabel("err_msg", fields::XidDescription(xid), false, out);
  out->append("} ");
}

// DCGM_EXP_XID_ERRORS_COUNT: one series per Xid seen in the window, labels window_size_in_ms
// then xid (sorted with the CSV label fields, byte-wise: upper-case DCGM_FI_* names first).
// With no Xid in the window, one series valued 0 without an xid label, as dcgm-exporter does.
void AppendXidCounts(const collect::DeviceSnapshot& dev, std::string_view name,
                     const std::string& prefix, int64_t window_ms, std::string* out) {
  if (!dev.xid_watched) return;
  auto series = [&](const collect::XidCount* c) {
    out->append(name);
    out->append(OpenPrefix(prefix));
    out->append(",window_size_in_ms=\"");
    AppendInt(window_ms, out);
    out->push_back('"');
    if (c != nullptr) {
      out->append(",xid=\"");
      AppendInt(c->xid, out);
      out->push_back('"');
    }
    out->append("} ");
    AppendInt(c != nullptr ? c->count : 0, out);
    out->push_back('\n');
  };
  if (dev.xid_counts.empty()) series(nullptr);
  for (const collect::XidCount& c : dev.xid_counts) series(&c);
}

const fields::Value* FindSample(const std::vector<fields::Sample>& samples, int field_id) {
  // Samples are in ascending field id (DeviceReader's contract).
  auto it = std::lower_bound(samples.begin(), samples.end(), field_id,
                             [](const fields::Sample& s, int id) { return s.field_id < id; });
  if (it == samples.end() || it->field_id != field_id) return nullptr;
  return &it->value;
}

// Appends "<value>\n"; false (nothing appended) for a string value, which would be an invalid
// sample in a numeric family.
bool AppendValue(const fields::Value& value, std::string* out) {
  if (const auto* i = std::get_if<int64_t>(&value)) {
    AppendInt(*i, out);
  } else if (const auto* d = std::get_if<double>(&value)) {
    AppendFixed(*d, 6, out);
  } else {
    return false;
  }
  out->push_back('\n');
  return true;
}

void AppendSelfMetrics(const collect::Snapshot& snapshot, const PrometheusOptions& options,
                       std::string* out) {
  AppendHelpType("nvml_exporter_collect_duration_seconds",
                 "Time the last collection of all devices took, in seconds.", "gauge", out);
  out->append("nvml_exporter_collect_duration_seconds ");
  AppendFixed(snapshot.collect_seconds, 6, out);
  out->push_back('\n');

  AppendHelpType("nvml_exporter_last_collect_timestamp_seconds",
                 "Unix time when the last collection started, in seconds.", "gauge", out);
  out->append("nvml_exporter_last_collect_timestamp_seconds ");
  // Integer milliseconds printed as seconds with 3 decimals: exact, no float rounding.
  int64_t ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(snapshot.time.time_since_epoch())
          .count();
  if (ms < 0) {
    out->push_back('-');
    ms = -ms;
  }
  AppendInt(ms / 1000, out);
  out->push_back('.');
  int64_t frac = ms % 1000;
  if (frac < 100) out->push_back('0');
  if (frac < 10) out->push_back('0');
  AppendInt(frac, out);
  out->push_back('\n');

  AppendHelpType("nvml_exporter_gpu_up",
                 "1 if the last collection could read the GPU, 0 if it is lost or every read "
                 "failed.",
                 "gauge", out);
  const std::string_view uuid_label = options.use_old_namespace ? "uuid" : "UUID";
  for (const collect::DeviceSnapshot& dev : snapshot.devices) {
    if (dev.identity == nullptr) continue;
    out->append("nvml_exporter_gpu_up{gpu=\"");
    AppendUnsigned(dev.identity->index, out);
    out->push_back('"');
    AppendLabel(uuid_label, dev.identity->uuid, false, out);
    out->append(dev.up ? "} 1\n" : "} 0\n");
  }

  AppendHelpType("nvml_exporter_build_info",
                 "Build and runtime information of nvml-exporter; the value is always 1.", "gauge",
                 out);
  out->append("nvml_exporter_build_info{");
  AppendLabel("version", options.build.version, true, out);
  AppendLabel("revision", options.build.revision, false, out);
  AppendLabel("nvml_library", options.build.nvml_library, false, out);
  AppendLabel("driver_version", options.build.driver_version, false, out);
  out->append("} 1\n");
}

// Text format 0.0.4: label values escape \\, " and newline; HELP text only \\ and newline.
void AppendEscaped(std::string_view text, bool escape_quote, std::string* out) {
  for (char c : text) {
    if (c == '\\') {
      out->append("\\\\");
    } else if (c == '\n') {
      out->append("\\n");
    } else if (c == '"' && escape_quote) {
      out->append("\\\"");
    } else {
      out->push_back(c);
    }
  }
}

}  // namespace

void AppendGoFixed(double value, std::string* out) { AppendFixed(value, 6, out); }

void AppendEscapedLabelValue(std::string_view value, std::string* out) {
  AppendEscaped(value, /*escape_quote=*/true, out);
}

void AppendEscapedHelp(std::string_view help, std::string* out) {
  AppendEscaped(help, /*escape_quote=*/false, out);
}

void RenderPrometheus(const collect::Snapshot& snapshot, const PrometheusOptions& options,
                      std::string* out) {
  out->clear();

  // Metric rows by ascending field id, CSV order for equal ids (stable sort). A name that
  // appears twice would give a second HELP/TYPE block, which Prometheus rejects: keep the first.
  std::vector<const CollectorEntry*> families;
  std::vector<const CollectorEntry*> label_rows;
  families.reserve(options.entries.size());
  for (const CollectorEntry& e : options.entries) {
    if (e.field == nullptr) continue;
    (e.type == MetricType::kLabel ? label_rows : families).push_back(&e);
  }
  std::stable_sort(
      families.begin(), families.end(),
      [](const CollectorEntry* a, const CollectorEntry* b) { return a->field->id < b->field->id; });
  // Label names byte-wise, as Go's sort.Strings; duplicates would be duplicate label names.
  std::stable_sort(
      label_rows.begin(), label_rows.end(),
      [](const CollectorEntry* a, const CollectorEntry* b) { return a->name < b->name; });
  label_rows.erase(std::unique(label_rows.begin(), label_rows.end(),
                               [](const CollectorEntry* a, const CollectorEntry* b) {
                                 return a->name == b->name;
                               }),
                   label_rows.end());

  // Devices that get series, with their label prefix.
  using LiveDevice = DeviceSeriesPrefix;
  std::vector<LiveDevice> live;
  live.reserve(snapshot.devices.size());
  for (const collect::DeviceSnapshot& dev : snapshot.devices) {
    if (!dev.up || dev.identity == nullptr) continue;
    live.push_back({&dev, BuildDevicePrefix(*dev.identity, options, label_rows)});
  }

  // Size estimate: each series is name + prefix + ~16 value bytes; HELP/TYPE ~ 2 names + help.
  size_t estimate = 2048;
  size_t prefix_total = 0;
  for (const LiveDevice& d : live) prefix_total += d.prefix.size() + 24;
  for (const CollectorEntry* f : families) {
    estimate += 2 * f->name.size() + f->help.size() + 32;
    estimate += live.size() * f->name.size() + prefix_total;
  }
  out->reserve(estimate);

  std::vector<std::string_view> seen_names;
  seen_names.reserve(families.size());
  for (const CollectorEntry* f : families) {
    if (std::find(seen_names.begin(), seen_names.end(), f->name) != seen_names.end()) continue;
    seen_names.push_back(f->name);
    const size_t family_start = out->size();
    AppendHelpType(f->name, f->help, config::MetricTypeName(f->type), out);
    const size_t header_end = out->size();
    for (const LiveDevice& d : live) {
      if (f->field->id == kXidCountField) {
        AppendXidCounts(*d.dev, f->name, d.prefix, snapshot.xid_window_ms, out);
        continue;
      }
      const fields::Value* v = FindSample(d.dev->samples, f->field->id);
      if (v == nullptr || std::holds_alternative<std::string>(*v)) continue;
      out->append(f->name);
      if (f->field->id == kXidErrorsField) {
        AppendXidLastPrefix(d.prefix, *v, out);
      } else {
        out->append(d.prefix);
      }
      AppendValue(*v, out);
      AppendDcgmPerPodSeries(f->field->id, f->name, d, snapshot, options.pods, out);
    }
    // Families with no series are omitted altogether, as dcgm-exporter does.
    if (out->size() == header_end) out->resize(family_start);
  }

  AppendPodFamilies(snapshot, live, options.pods, out);
  AppendSelfMetrics(snapshot, options, out);
}

}  // namespace nvmlx::render
