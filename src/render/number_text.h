// Numbers as the writers print them (the Prometheus text and the EMF documents): integers in
// decimal through std::to_chars, and CloudWatch's accepted range for a metric value. One copy
// each: the writers had their own, which a unity build of the daemon (make run) also refuses.
//
// Thread-safety: pure functions.
#ifndef NVML_EXPORTER_RENDER_NUMBER_TEXT_H_
#define NVML_EXPORTER_RENDER_NUMBER_TEXT_H_

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>

namespace nvmlx::render {

inline void AppendInt(int64_t v, std::string* out) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, end);
}

inline void AppendUnsigned(uint64_t v, std::string* out) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, end);
}

// The shortest text that reads back as `v` ("0" if it cannot be written).
inline void AppendShortest(double v, std::string* out) {
  char buf[32];  // the shortest round-trip of a double is at most 24 characters
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(ec == std::errc() ? std::string_view(buf, end - buf) : std::string_view("0"));
}

// CloudWatch's MetricDatum range (docs/emf.md §2): finite, and 0 or a magnitude within
// [8.5e-109, 1.17e108]; anything else is left out of an EMF document.
inline bool Sendable(double v) {
  if (!std::isfinite(v)) return false;
  const double a = std::fabs(v);
  return a == 0 || (a >= 8.5e-109 && a <= 1.17e108);
}

}  // namespace nvmlx::render

#endif  // NVML_EXPORTER_RENDER_NUMBER_TEXT_H_
