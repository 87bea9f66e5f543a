#include "slicewright/reconcile/desired.h"

#include "slicewright/base/check.h"

namespace slicewright::reconcile {

std::size_t EndpointGroup::endpoint_count() const {
  if (runs.empty()) {
    return endpoints.size();
  }
  return (runs.size() - 1) * run_capacity + runs.back().size();
}

std::size_t EndpointGroup::desired_count() const {
  std::size_t count = endpoint_count();
  for (const model::EndpointSlice* slice : held) {
    count += slice->endpoints.size();
  }
  return count;
}

const model::Endpoint& EndpointGroup::endpoint_at(std::size_t index) const {
  if (runs.empty()) {
    return endpoints[index];
  }
  if (runs.size() == 1) {
    return runs.front()[index];  // a small Service's only run: no division on its lookups
  }
  SW_CHECK(run_capacity > 0);
  return runs[index / run_capacity][index % run_capacity];
}

}  // namespace slicewright::reconcile
