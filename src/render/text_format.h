// Prometheus text exposition format 0.0.4, the small pieces every writer of it shares: escaping,
// the HELP/TYPE header and Go's %f number format. The Prometheus renderer (render/prometheus.h),
// the per-pod families and the EMF sinks' own counters (sinks/) use them; this header pulls in
// nothing of the renderer, so sinks can use it without the snapshot or the catalog.
//
// Thread-safety: pure functions; they only append to the caller's string.
#ifndef NVML_EXPORTER_RENDER_TEXT_FORMAT_H_
#define NVML_EXPORTER_RENDER_TEXT_FORMAT_H_

#include <string>
#include <string_view>

namespace nvmlx::render {

// Escaping per the 0.0.4 spec: label values escape \ " and newline; HELP escapes \ and newline.
void AppendEscapedLabelValue(std::string_view value, std::string* out);
void AppendEscapedHelp(std::string_view help, std::string* out);
// "# HELP name help\n# TYPE name type\n" (help escaped), shared by every family we render.
void AppendHelpType(std::string_view name, std::string_view help, std::string_view type,
                    std::string* out);

// A double as Go's %f: 6 decimals, correctly rounded; NaN, +Inf and -Inf as Prometheus spells
// them. For every renderer that must match dcgm-exporter's numbers.
void AppendGoFixed(double value, std::string* out);

}  // namespace nvmlx::render

#endif  // NVML_EXPORTER_RENDER_TEXT_FORMAT_H_
