// Render prints a Plan as canonical text, one line per action, for golden tests and the CLI's
// table output (LevelDB's PrintContents). Pure.
#pragma once

#include <string>

#include "slicewright/model/discovery.h"
#include "slicewright/reconcile/plan.h"

namespace slicewright::reconcile {

// "create foo-* IPv4 ports=[foo/TCP/80] endpoints(2)=[1.2.3.4 1.2.3.5!]" per action; a '!' marks
// a non-ready endpoint, '~' a terminating one. Endpoints are listed in slice order.
std::string Render(const Plan& plan);

// One slice in the same format, without the operation.
std::string RenderSlice(const model::EndpointSlice& slice);

}  // namespace slicewright::reconcile
