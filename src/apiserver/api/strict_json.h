// Checks a built-in kind's JSON body as kube-apiserver's decoder (sigs.k8s.io/json over the Go
// struct) does, and normalises its times as the Go round trip does. One walk over the parsed
// document, driven by the generated Go type tables (go_types.h). Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "slicewright/base/status.h"

namespace slicewright::apiserver {

// Walks `object`, the body of a `kind` in `api_version` ("apps/v1"), against the Go struct:
// a JSON value of the wrong type, an integer out of its Go type's range or with a fraction, or a
// metav1.Time / MicroTime that Go's time.Parse refuses fails with kBadRequest
//   `<Kind> in version "<version>" cannot be handled as a <Kind>: <Go's error>`
// e.g. `json: cannot unmarshal string into Go struct field ServicePort.spec.ports.port of type
// int32` or `parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"`.
// Valid times are rewritten as Go re-encodes them: Time in UTC RFC 3339 seconds, MicroTime in UTC
// with six fraction digits, the zero time as null. Nulls are left alone; unknown fields too,
// unless `unknown` is given: then they are pruned, as the Go decoder drops them, and their paths
// appended there as the strict decoder names them ("spec.ports[0].bogus"), for fieldValidation;
// kinds that are not built in (custom resources), and bodies whose apiVersion or kind name another
// type (the type meta checks refuse those), pass unchecked.
// Known approximations: keys are walked in sorted order, so when several type errors exist the one
// named may not be the first in the body; a float literal is quoted as nlohmann prints it
// ("1000.0" where the body said 1e3).
Status DecodeStrictJson(std::string_view api_version, std::string_view kind, nlohmann::json& object,
                        std::vector<std::string>* unknown = nullptr);

// The same walk over the JSON body of a DELETE (`object`, an object) against metav1.DeleteOptions:
// kBadRequest "DeleteOptions: <Go's error>", e.g. `DeleteOptions: json: cannot unmarshal string
// into Go struct field DeleteOptions.gracePeriodSeconds of type int64` (kube-apiserver answers
// that text with a 500). Unknown fields pass, as upstream's non-strict decoding lets them.
Status DecodeStrictDeleteOptions(nlohmann::json& object);

// Go's time.Parse for the two layouts metav1 uses: kRfc3339Layout ("2006-01-02T15:04:05Z07:00",
// metav1.Time) and kRfc3339MicroLayout (metav1.MicroTime). On success, `formatted` is the instant
// re-encoded in UTC with the same layout (Time: seconds only; MicroTime: six digits), or empty for
// Go's zero time (0001-01-01T00:00:00Z, which metav1 encodes as null). On failure, returns Go's
// *time.ParseError text.
inline constexpr std::string_view kRfc3339Layout = "2006-01-02T15:04:05Z07:00";
inline constexpr std::string_view kRfc3339MicroLayout = "2006-01-02T15:04:05.000000Z07:00";
bool ParseGoTime(std::string_view layout, std::string_view value, std::string& formatted,
                 std::string& error);

}  // namespace slicewright::apiserver
