// KEP-4770 in one place: which controller writes a Service's endpoints. A Service labelled
// service.kubernetes.io/endpoint-controller-name belongs to the controller the label names; the
// built-in controllers (EndpointSlice, Endpoints, mirroring) leave it alone while the
// ExternalEndpointController feature gate is on. Every controller and `explain` ask here.
#pragma once

#include <optional>
#include <string_view>

#include "slicewright/model/core.h"
#include "slicewright/model/well_known.h"

namespace slicewright::model {

// The label's value ("" is a value), or nullopt when the Service does not carry it.
inline std::optional<std::string_view> EndpointControllerName(const Service& service) {
  auto label = service.metadata.labels.find(kLabelEndpointControllerName);
  if (label == service.metadata.labels.end()) return std::nullopt;
  return std::string_view(label->second);
}

// True when the built-in controllers must leave `service` to the controller its label names.
// With the gate off the label means nothing, as before KEP-4770.
inline bool LeftToAnotherController(const Service& service, bool external_endpoint_controller) {
  return external_endpoint_controller && EndpointControllerName(service).has_value();
}

// True when the label names the custom controller `name`.
inline bool LabelledForController(const Service& service, std::string_view name) {
  return EndpointControllerName(service) == name;
}

}  // namespace slicewright::model
