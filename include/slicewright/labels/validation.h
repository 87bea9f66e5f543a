// Kubernetes name and label validation (k8s.io/apimachinery/pkg/util/validation) with upstream's
// exact messages, so our API server and controllers report errors as Kubernetes does. Pure
// functions; thread-safe. Messages follow apimachinery v0.34 and earlier ("must be no more than
// 63 characters"; newer releases say "bytes").
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace slicewright::labels {

inline constexpr std::size_t kQualifiedNameMaxLength = 63;  // the name part of a label key
inline constexpr std::size_t kLabelValueMaxLength = 63;
inline constexpr std::size_t kDNS1123LabelMaxLength = 63;
inline constexpr std::size_t kDNS1123SubdomainMaxLength = 253;

// Each Is* function returns upstream's error strings in upstream's order; empty means valid.

// A label key: an optional DNS-1123 subdomain prefix and '/', then a name of at most 63
// alphanumerics, '-', '_' or '.', starting and ending alphanumeric ("example.com/MyName").
std::vector<std::string> IsQualifiedName(std::string_view value);
// A label value: empty, or at most 63 characters shaped like a qualified name's name part.
std::vector<std::string> IsValidLabelValue(std::string_view value);
// A lower-case RFC 1123 label of at most 63 characters ("my-name").
std::vector<std::string> IsDNS1123Label(std::string_view value);
// A lower-case RFC 1123 subdomain of at most 253 characters ("example.com").
std::vector<std::string> IsDNS1123Subdomain(std::string_view value);

// apimachinery's NameIsDNSSubdomain, the name check of most objects (EndpointSlice included).
// With `prefix` the value is a generateName: a trailing '-' is masked first, keeping upstream's
// quirk of replacing the last two characters with "a" ("web-" is checked as "wea").
std::vector<std::string> NameIsDNSSubdomain(std::string_view name, bool prefix);
// True if `generate_name` (e.g. "my-service-") is acceptable as an object's generateName.
bool IsDNS1123SubdomainPrefixValid(std::string_view generate_name);

// Allocation-free yes/no versions of the checks above, for hot paths.
bool IsQualifiedNameValid(std::string_view value);
bool IsLabelValueValid(std::string_view value);
bool IsDNS1123LabelValid(std::string_view value);
bool IsDNS1123SubdomainValid(std::string_view value);

// Upstream's message builders, for validators elsewhere that must speak the same words.
// "must be no more than 63 characters"
std::string MaxLenError(std::size_t length);
// "must be non-empty"
std::string EmptyError();
// "<msg> (e.g. 'a',  or 'b', regex used for validation is '<regex>')" (the doubled space is
// upstream's); without examples "<msg> (regex used for validation is '<regex>')".
std::string RegexError(std::string_view msg, std::string_view regex,
                       std::initializer_list<std::string_view> examples);

}  // namespace slicewright::labels
