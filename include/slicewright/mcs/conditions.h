// metav1.Condition lists as the MCS agent keeps them on ServiceExports and ServiceImports:
// apimachinery's meta.SetStatusCondition semantics, with the time as an input. Pure functions.
#pragma once

#include <string_view>
#include <vector>

#include "slicewright/model/meta.h"
#include "slicewright/model/time.h"

namespace slicewright::mcs {

// The condition of `type`; nullptr if absent.
const model::Condition* FindCondition(const std::vector<model::Condition>& conditions,
                                      std::string_view type);

// Puts `condition` into `conditions` (replacing the one of the same type, else appending):
// lastTransitionTime is kept when the status is unchanged, else set to the condition's own when
// it has one, else to `now`. Returns true when anything changed (a write is needed).
bool SetCondition(std::vector<model::Condition>& conditions, model::Condition condition,
                  model::Time now);

}  // namespace slicewright::mcs
