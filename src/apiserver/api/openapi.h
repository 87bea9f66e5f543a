// The OpenAPI documents kubectl needs from the embedded API server: /openapi/v3 (the index) and
// /openapi/v3/<api/v1 | apis/G/V> (one document per group version). Pure functions over a
// registry snapshot; thread-safe.
//
// What kubectl v1.32 asks for and why we answer as we do (read in k8s.io/cli-runtime
// query_param_verifier{,_v3}.go, fallback_query_param_verifier.go, kubectl apply/patcher.go and
// cmd/util/factory_client_access.go, then confirmed against the real kubectl 1.32 with a
// request-logging stub server and -v=8):
//  1. `apply`/`create`/`replace` with the default --validate=strict first ask
//     GET /openapi/v3 and then GET /openapi/v3/<gv path>?hash=... (Accept: application/json) to
//     decide whether the server validates fields itself. The answer is yes when some path item's
//     PATCH operation carries x-kubernetes-group-version-kind equal to the object's GVK and an
//     operation-level parameter named "fieldValidation". kubectl then skips client-side schema
//     validation entirely, never downloads /openapi/v2 for it, and sends
//     POST ...?fieldManager=kubectl-client-side-apply&fieldValidation=Strict.
//  2. If /openapi/v3 is 404 (or the document fails to parse) kubectl falls back to the
//     protobuf-only GET /openapi/v2; a 404 there fails the command with "failed to download
//     openapi ... turn validation off with --validate=false". So /openapi/v3 is mandatory, and
//     /openapi/v2 may stay 404 (we serve no v2: it must be protobuf, and nothing else needs it).
//     A GV missing from the index makes kubectl fall back to the Namespace GVK's document plus a
//     CRD list, so we list every served GV, custom ones included.
//  3. `apply` on an existing object picks the patch type: if the PATCH operation's requestBody
//     lists application/strategic-merge-patch+json it looks in components.schemas for a schema
//     tagged with the GVK (x-kubernetes-group-version-kind, a list); finding none is not an
//     error. It then tries GET /openapi/v2 (404 is ignored) and finally its compiled-in Go types:
//     strategic merge patch for built-in kinds, JSON merge patch for everything else. A
//     GVK-tagged schema without the real patch metadata would produce wrong or failing patches,
//     so built-in kinds get no component schema; components must still be present (nil
//     components is an error that prints a warning).
//  4. Custom resources therefore list only json-patch and merge-patch bodies, and their component
//     schema is the CRD's openAPIV3Schema tagged with the GVK (this is what `kubectl explain`
//     reads; apply never uses it because no strategic merge patch is offered).
//  5. Documents are immutable per hash: serve /openapi/v3/<path>?hash=<OpenApiV3Hash(doc)> with
//     "Cache-Control: public, immutable" (kubectl's HTTP cache keeps them), a stale hash with a
//     301 to the current URL, and the un-hashed URL with "Cache-Control: no-cache, private".
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "slicewright/base/result.h"

#include "apiserver/api/resources.h"

namespace slicewright::apiserver {

// GET /openapi/v3: {"paths": {"api/v1": {"serverRelativeURL": "/openapi/v3/api/v1?hash=H"},
// "apis/discovery.k8s.io/v1": {...}, ...}} for every served group version.
nlohmann::json OpenApiV3Index(const ResourceRegistry& registry);

// GET /openapi/v3/<group_version_path>, where the path is "api/v1" or "apis/<group>/<version>"
// (no leading slash, no query). kNotFound for anything not served.
Result<nlohmann::json> OpenApiV3Document(const ResourceRegistry& registry,
                                         std::string_view group_version_path);

// The content hash used in serverRelativeURL: 16 upper-case hex digits of FNV-1a 64 over the
// document's compact serialization. Deterministic across runs.
std::string OpenApiV3Hash(const nlohmann::json& document);

}  // namespace slicewright::apiserver
