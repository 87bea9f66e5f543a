// Decodes Kubernetes protobuf request bodies ("k8s\0" + runtime.Unknown) into the JSON object
// kube-apiserver would see, for every built-in kind (kubectl's typed generators send protobuf).
// Pure functions over the generated Go type tables (go_types.h); thread-safe. Results own data.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "slicewright/base/result.h"

namespace slicewright::apiserver {

// The media type client-go uses for protobuf bodies of built-in kinds.
inline constexpr std::string_view kKubernetesProtobufContentType =
    "application/vnd.kubernetes.protobuf";

// True when `content_type` (a Content-Type header value; parameters after ';' ignored, media type
// compared case-insensitively) is kKubernetesProtobufContentType.
bool IsKubernetesProtobuf(std::string_view content_type);

// Decodes `body`: the magic bytes "k8s\0", then a runtime.Unknown whose typeMeta names the kind and
// whose raw holds the object. The result is the object as kube-apiserver would print it as JSON,
// with "apiVersion" and "kind" set: Go's encoding of the struct the bytes decode into, so
// `omitempty` zero values are left out, non-omitempty fields and struct values are always present
// (an absent metadata.creationTimestamp is null), bytes are base64, IntOrString is a number or a
// string, metav1.Time is RFC 3339 in seconds, MicroTime has six fraction digits, embedded inline
// structs merge into their parent, and a nil slice or map without `omitempty` is null. Unknown
// field numbers are skipped.
// Errors: kUnsupportedMediaType for a kind that is not built in (gotypes::FindKind), or a
// non-empty contentEncoding; kBadRequest, naming the byte
// offset and the field path, for wrong magic, a truncated varint or field, a length past the end
// of its message, a wrong wire type for a known field, invalid UTF-8 in a string, or nesting deeper
// than 100. Never throws, never reads outside `body`.
Result<nlohmann::json> DecodeKubernetesProtobuf(std::string_view body);

// Decodes the protobuf body of a DELETE or deletecollection (client-go sends one for every
// built-in kind) into metav1.DeleteOptions' JSON form, as kube-apiserver's delete handler does:
// the envelope may name any group version ("v1", "apps/v1", "meta.k8s.io/v1") and kind
// DeleteOptions or no kind; no raw object is no options ({}). Set fields only: gracePeriodSeconds,
// preconditions {uid, resourceVersion}, orphanDependents, propagationPolicy,
// ignoreStoreReadErrorWithClusterBreakingPotential when on the wire, dryRun when not empty.
// Errors: kBadRequest for another kind and for every malformed body DecodeKubernetesProtobuf
// refuses (naming the byte and the field, e.g. "(in DeleteOptions.preconditions)");
// kUnsupportedMediaType for a contentEncoding. Never throws, never reads outside `body`.
Result<nlohmann::json> DecodeDeleteOptionsProtobuf(std::string_view body);

}  // namespace slicewright::apiserver
