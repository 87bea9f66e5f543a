#include "slicewright/reconcile/render.h"

#include <string>

#include "slicewright/reconcile/planner.h"

namespace slicewright::reconcile {

std::string RenderSlice(const model::EndpointSlice& slice) {
  std::string out;
  out += slice.metadata.name.empty() ? slice.metadata.generate_name + "*" : slice.metadata.name;
  out += ' ';
  out += slice.address_type;
  out += " ports=[";
  out += PortMapKey(slice.ports);
  out += "] endpoints(";
  out += std::to_string(slice.endpoints.size());
  out += ")=[";
  bool first = true;
  for (const model::Endpoint& endpoint : slice.endpoints) {
    if (!first) {
      out += ' ';
    }
    first = false;
    for (std::size_t i = 0; i < endpoint.addresses.size(); ++i) {
      if (i > 0) {
        out += ',';
      }
      out += endpoint.addresses[i];
    }
    if (!endpoint.conditions.ready.value_or(true)) {
      out += '!';
    }
    if (endpoint.conditions.terminating.value_or(false)) {
      out += '~';
    }
  }
  out += ']';
  return out;
}

std::string Render(const Plan& plan) {
  std::string out;
  for (const SliceAction& action : plan.actions) {
    out += OperationName(action.operation);
    out += ' ';
    out += RenderSlice(action.slice);
    out += '\n';
  }
  return out;
}

}  // namespace slicewright::reconcile
