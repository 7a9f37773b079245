// Kubernetes resource quantities ("1", "500m", "2Ki", "1e3") as the integers Container Insights
// reads from them: resource.Quantity.Value(), the quantity rounded up to a whole number.
//
// Grammar (k8s.io/apimachinery resource.Quantity): an optionally signed decimal number
// ("1", "1.5", ".5", "5.") and one suffix: none, a decimal SI one (m k M G T P E), a binary SI
// one (Ki Mi Gi Ti Pi Ei) or a decimal exponent (e3, E-2). Anything else is not a quantity.
// Values past int64 saturate (the API server does not produce them for device counts, and a
// clamped count is better than a wrapped one).
//
// Thread-safety: a pure function.
#ifndef NVML_EXPORTER_ATTRIBUTE_QUANTITY_H_
#define NVML_EXPORTER_ATTRIBUTE_QUANTITY_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace nvmlx::attribute {

// The quantity rounded towards +infinity; nullopt when `text` is not a quantity. Numbers with
// more than 30 significant digits or a decimal exponent beyond ±30 are refused too: no device
// count needs them, and refusing keeps the arithmetic exact.
std::optional<int64_t> ParseQuantityCeil(std::string_view text);

}  // namespace nvmlx::attribute

#endif  // NVML_EXPORTER_ATTRIBUTE_QUANTITY_H_
