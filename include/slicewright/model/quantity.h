// Kubernetes resource quantities (resource.Quantity text: "4", "3500m", "0.5", "2Ki", "1e3").
// Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace slicewright::model {

// The quantity in thousandths, as resource.Quantity.MilliValue() reports it: any fraction of a
// thousandth is rounded away from zero ("1n" is 1, "-1n" is -1, "0.0001Ki" is 103).
//
// Grammar (apimachinery's parseQuantityString): an optional sign, decimal digits with an optional
// fraction ("1.", ".5"), then one suffix: none, a decimal SI suffix (n u m k M G T P E), a binary
// SI suffix (Ki Mi Gi Ti Pi Ei) or a decimal exponent ("e3", "E-2"). No spaces.
//
// nullopt when the text is not a quantity, or when the milli value does not fit in int64 (where
// Quantity itself would cap the value and MilliValue would overflow).
std::optional<std::int64_t> ParseQuantityMilli(std::string_view text);

}  // namespace slicewright::model
