#include "slicewright/mcs/conditions.h"

#include <string_view>
#include <utility>
#include <vector>

namespace slicewright::mcs {

const model::Condition* FindCondition(const std::vector<model::Condition>& conditions,
                                      std::string_view type) {
  for (const model::Condition& condition : conditions) {
    if (condition.type == type) return &condition;
  }
  return nullptr;
}

bool SetCondition(std::vector<model::Condition>& conditions, model::Condition condition,
                  model::Time now) {
  for (model::Condition& existing : conditions) {
    if (existing.type != condition.type) continue;
    if (existing.status == condition.status && existing.last_transition_time.has_value()) {
      condition.last_transition_time = existing.last_transition_time;
    } else if (!condition.last_transition_time.has_value()) {
      condition.last_transition_time = now;
    }
    if (existing == condition) return false;
    existing = std::move(condition);
    return true;
  }
  if (!condition.last_transition_time.has_value()) condition.last_transition_time = now;
  conditions.push_back(std::move(condition));
  return true;
}

}  // namespace slicewright::mcs
