#include "slicewright/model/mcs.h"

#include <string_view>

namespace slicewright::model {

std::string_view EndpointSliceObjectsName(EndpointSliceObjects value) {
  switch (value) {
    case EndpointSliceObjects::kPresent:
      return "Present";
    case EndpointSliceObjects::kAbsent:
      return "Absent";
    case EndpointSliceObjects::kUnset:
      break;
  }
  return "";
}

}  // namespace slicewright::model
