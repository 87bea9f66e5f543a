// The meta.k8s.io/v1 Table form of list and get responses (what `kubectl get` asks for), with
// kube-apiserver v1.32's printer columns for the built-in kinds and CRD additionalPrinterColumns
// evaluated with a small JSONPath subset. Pure functions; thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "slicewright/base/result.h"

#include "apiserver/api/resources.h"

namespace slicewright::apiserver {

// The includeObject query parameter of Table requests.
enum class IncludeObject {
  kNone,      // rows carry cells only
  kMetadata,  // rows carry a meta.k8s.io/v1 PartialObjectMetadata (the default)
  kObject,    // rows carry the whole object
};

// "None", "Metadata", "Object"; "" means Metadata. kBadRequest otherwise.
Result<IncludeObject> ParseIncludeObject(std::string_view value);

// Builds a Table of `objects` (none may be null; a get passes one). Columns: "Name" (format
// "name") first unless the resource lists its own name column, then info.printer_columns in
// order, every one present (kubectl hides priority > 0 unless -o wide). Cells follow kube's
// printers for the built-ins (pod READY "1/2", STATUS with waiting/terminated reasons and
// "Terminating", RESTARTS "3 (5m ago)", service PORT(S) "80/TCP,443:30443/TCP", slice ENDPOINTS
// "10.0.0.1,10.0.0.2,10.0.0.3 + 2 more...", ...) and kube's CRD table convertor for custom
// resources (missing values are null, "date" columns become ages). Ages are measured from
// `now`. `resource_version` and `continue_token` go to the Table's metadata ("" omits continue).
// Never throws.
nlohmann::json ToTable(const ResourceInfo& info, const std::vector<const nlohmann::json*>& objects,
                       std::string_view resource_version, std::string_view continue_token,
                       IncludeObject include, std::chrono::system_clock::time_point now);

// A metav1.LabelSelector as LabelSelectorAsSelector(...).String() prints it: requirements sorted
// by key, "k=v", "k in (a,b)", "k notin (a)", "k" and "!k". The Scale subresource's
// status.selector and the wide Selector columns.
std::string LabelSelectorText(const nlohmann::json& selector);

// k8s.io/apimachinery duration.HumanDuration: "45s", "2m5s", "15m", "3h20m", "12h", "3d4h",
// "45d", "2y30d", "9y"; "0s" just below zero and "<invalid>" for a time more than 2s ahead.
std::string HumanDuration(std::chrono::nanoseconds d);

// Evaluates a printer-column JSONPath against `object`: ".a.b", "[N]", "['key']" and the filter
// "[?(@.type==\"Ready\")]" (first match); "[*]" takes the first element. Returns nullptr when the
// path does not resolve or is outside this subset. `object` must outlive the result.
const nlohmann::json* EvaluateJsonPath(const nlohmann::json& object, std::string_view path);

}  // namespace slicewright::apiserver
