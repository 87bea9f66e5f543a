// Diagnostics of the Service + Pods source, shared by DesiredFromService and
// ServiceEndpointsBuilder so both word them the same. Pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "slicewright/model/core.h"
#include "slicewright/reconcile/desired.h"

namespace slicewright::reconcile::internal {

// kReasonNodeNotFound for `pod`, whose Node is missing (retry = true).
Diagnostic NodeNotFoundDiagnostic(const model::Service& service, const model::Pod& pod);
Diagnostic NodeNotFoundDiagnostic(const model::Service& service, std::string_view pod_name,
                                  std::string_view node_name);

// Names `pod`'s invalid podIPs[index] `text`, for InvalidPodIpsDiagnostic.
std::string InvalidPodIpDetail(const model::Pod& pod, std::size_t index, const std::string& text);
std::string InvalidPodIpDetail(std::string_view pod_namespace, std::string_view pod_name,
                               std::size_t index, const std::string& text);

// The one kReasonInvalidIPAddress diagnostic of a sync: `count` invalid IPs, the first at `first`.
Diagnostic InvalidPodIpsDiagnostic(const model::Service& service, std::int64_t count,
                                   const std::string& first);

}  // namespace slicewright::reconcile::internal
