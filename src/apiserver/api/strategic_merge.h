// Strategic merge patch as kube-apiserver applies it (the apply half of k8s.io/apimachinery's
// strategicpatch): the patch schemas of the built-in kinds we serve, and the merge itself.
// Private to src/apiserver/api. Pure functions over JSON documents; thread-safe. May throw
// nlohmann exceptions only on a bug; patch.cc is the adapter that catches them.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "slicewright/base/status.h"

namespace slicewright::apiserver::internal {

// The deepest nesting accepted in a patch body and in a patched document. Recursion over a patch
// follows its nesting, so this bounds the stack.
inline constexpr int kMaxPatchDepth = 1000;

// The patch metadata of one Go struct (its fields' patchStrategy and patchMergeKey tags); the
// tables live in strategic_merge.cc.
struct PatchSchema;

// The schema of a built-in kind, or nullptr when strategic merge patch is not defined for it.
// The result points at static data.
const PatchSchema* FindPatchSchema(std::string_view api_version, std::string_view kind);

// Applies `patch` (a JSON object; consumed) to `original` (a JSON object; modified in place) as
// strategicpatch.StrategicMergeMapPatch does. Errors are kBadRequest (a malformed directive, a
// missing merge key, an unknown $patch) or kInvalid (lists of lists), with upstream's messages.
// The patch must nest at most kMaxPatchDepth levels.
Status StrategicMerge(nlohmann::json& original, nlohmann::json&& patch, const PatchSchema& schema);

// Go's fmt "%v" of a decoded JSON value ("map[a:1 b:[x y]]"), as upstream's messages print it.
std::string GoValueString(const nlohmann::json& value);
// Go's reflect type name of a decoded JSON value ("map[string]interface {}", "string", "int64").
std::string GoTypeName(const nlohmann::json& value);
// The depth of a JSON value (a scalar is 0, "[]" is 1), without recursion.
int JsonDepth(const nlohmann::json& value);

}  // namespace slicewright::apiserver::internal
