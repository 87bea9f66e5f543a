#include "slicewright/reconcile/plan.h"

#include <algorithm>

namespace slicewright::reconcile {

std::string_view OperationName(Operation op) {
  switch (op) {
    case Operation::kCreate:
      return "create";
    case Operation::kUpdate:
      return "update";
    case Operation::kDelete:
      return "delete";
  }
  return "unknown";
}

std::int64_t PlanStats::added() const {
  std::int64_t total = 0;
  for (const AddressTypeStats& stats : per_address_type) {
    total += stats.added;
  }
  return total;
}

std::int64_t PlanStats::removed() const {
  std::int64_t total = 0;
  for (const AddressTypeStats& stats : per_address_type) {
    total += stats.removed;
  }
  return total;
}

std::size_t Plan::Count(Operation op) const {
  return static_cast<std::size_t>(std::count_if(
      actions.begin(), actions.end(), [op](const SliceAction& a) { return a.operation == op; }));
}

bool Plan::NeedsRetry() const {
  return std::any_of(diagnostics.begin(), diagnostics.end(),
                     [](const Diagnostic& d) { return d.retry; });
}

}  // namespace slicewright::reconcile
