// metav1.DeleteOptions of a DELETE or deletecollection request, read and validated as
// kube-apiserver's delete handler does: from a JSON or a protobuf body (client-go sends protobuf
// for every built-in kind) and from the query parameters. Pure function of the request;
// thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "slicewright/base/result.h"

#include "apiserver/http/server.h"

namespace slicewright::apiserver {

struct DeleteOptions {
  std::optional<std::int64_t> grace_period_seconds;
  std::string propagation_policy;  // Orphan, Background, Foreground; "" = the default
  std::string precondition_uid;
  std::string precondition_resource_version;
  bool dry_run = false;
};

// The options of `request` (a DELETE of one object or of a collection). The body, when there is
// one, is metav1.DeleteOptions as JSON, or as protobuf under Content-Type
// application/vnd.kubernetes.protobuf (apiserver/api/protobuf.h: any group version, kind
// DeleteOptions or none); its fields: gracePeriodSeconds, preconditions.uid and
// .resourceVersion, orphanDependents (true is propagationPolicy Orphan), propagationPolicy,
// dryRun. The query parameters gracePeriodSeconds, propagationPolicy, orphanDependents and
// dryRun are read too, and win over the body (kube-apiserver reads only the body when there is
// one: a difference kept, docs/design.md).
// Errors: kBadRequest for a body that does not decode, naming what is wrong (invalid JSON or
// protobuf, a body that is not an object or names another kind, a field of the wrong type, a
// gracePeriodSeconds query that is not a number); kInvalid as upstream's ValidateDeleteOptions
// (`DeleteOptions.meta.k8s.io "" is invalid: ...`) for orphanDependents and propagationPolicy
// both set, a propagationPolicy other than Foreground, Background or Orphan, or a dryRun value
// other than "All"; kUnsupportedMediaType for a protobuf body with a contentEncoding.
Result<DeleteOptions> DeleteOptionsFromRequest(const HttpRequest& request);

}  // namespace slicewright::apiserver
