// Patches as kube-apiserver applies them: RFC 7386 JSON merge patch, RFC 6902 JSON patch, and the
// strategic merge patch of the built-in kinds (patch merge keys, $patch, $retainKeys,
// $setElementOrder, $deleteFromPrimitiveList), as far as kubectl apply/label/annotate/patch need.
// Pure functions over JSON documents; thread-safe.
#pragma once

#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "slicewright/base/result.h"

namespace slicewright::apiserver {

enum class PatchType {
  kJsonPatch,            // application/json-patch+json
  kMergePatch,           // application/merge-patch+json
  kStrategicMergePatch,  // application/strategic-merge-patch+json
  kApplyPatch,           // application/apply-patch+yaml (server-side apply: not supported)
};

// Maps a request's Content-Type (parameters such as "; charset=utf-8" ignored) to a PatchType.
// Fails with kUnsupportedMediaType semantics, i.e. kBadRequest whose message starts with
// "the body of the request was in an unknown format" for anything else.
Result<PatchType> PatchTypeFromContentType(std::string_view content_type);

// True when strategic merge patch is defined for this kind (the built-in kinds we serve);
// kube-apiserver answers 415 for custom resources.
bool SupportsStrategicMergePatch(std::string_view api_version, std::string_view kind);

// Applies `patch` (the raw request body) to `original` and returns the patched document.
// `api_version` and `kind` select the strategic-merge schema. Errors: kBadRequest for a body that
// is not valid JSON or not the shape the type needs ("json: cannot unmarshal array into Go value
// of type map[string]interface {}"), kInvalid for a JSON patch operation that fails (a missing
// path, a failed "test"), kBadRequest for an unknown $patch directive. Never throws.
Result<nlohmann::json> ApplyPatch(const nlohmann::json& original, std::string_view patch,
                                  PatchType type, std::string_view api_version,
                                  std::string_view kind);

}  // namespace slicewright::apiserver
