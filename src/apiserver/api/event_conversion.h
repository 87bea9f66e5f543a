// Conversion between core/v1 Events and events.k8s.io/v1 Events, which kube-apiserver keeps in one
// storage (pkg/apis/events/v1/conversion.go): the server stores the core shape and converts at the
// edge of every events.k8s.io request. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "apiserver/api/resources.h"

namespace slicewright::apiserver {

// Where older data dirs kept events.k8s.io/v1 Events, before they shared the core store.
inline constexpr std::string_view kLegacyEventsV1Prefix = "/registry/events.k8s.io/events/";

// Whether `info` is the events.k8s.io/v1 view of the core Event store.
bool IsEventsV1(const ResourceInfo& info);

// A stored core/v1 Event in events.k8s.io/v1 shape: involvedObject -> regarding, message -> note,
// reportingComponent -> reportingController, source -> deprecatedSource, firstTimestamp,
// lastTimestamp and count -> deprecated*; metadata, reason, type, action, related, series,
// eventTime and reportingInstance as they are. Fields events.k8s.io/v1 does not have are dropped,
// as decoding into upstream's typed struct drops them.
nlohmann::json CoreEventToV1(const nlohmann::json& core);

// The reverse of CoreEventToV1, for events.k8s.io/v1 writes. Fields core/v1 does not have
// (including core/v1 names sent to the wrong API) are dropped.
nlohmann::json V1EventToCore(const nlohmann::json& v1);

// An events.k8s.io/v1 field selector label as the stored core Event's attributes name it
// ("regarding.name" -> "involvedObject.name", "reportingController" -> "reportingComponent");
// other labels unchanged. Upstream's AddFieldLabelConversionsForEvent.
std::string V1EventFieldToCore(std::string_view field);

}  // namespace slicewright::apiserver
