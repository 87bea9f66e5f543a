// The index of the shared EndpointSlice informer by Service: every controller that reads a
// Service's slices (endpointslice, mirroring, the MCS agent's export side) registers it under one
// name with one function, so an informer shared in one manager computes it once.
#pragma once

#include <string>
#include <string_view>

#include "slicewright/cache/compact_slice.h"
#include "slicewright/cache/informer.h"
#include "slicewright/cache/informer_factory.h"
#include "slicewright/model/well_known.h"

namespace slicewright::controllers {

// Slices filed under "namespace/<kubernetes.io/service-name>".
inline constexpr std::string_view kSliceByServiceIndex = "service";

// Registers the index on `slices`; a no-op when another controller registered it first (a store
// keeps the first index of a name), which is why its name and function live only here.
inline void AddSliceByServiceIndex(cache::Informer<cache::CompactEndpointSlice>& slices) {
  slices.AddIndex(
      std::string(kSliceByServiceIndex),
      cache::LabelValueIndex<cache::CompactEndpointSlice>(std::string(model::kLabelServiceName)));
}

}  // namespace slicewright::controllers
