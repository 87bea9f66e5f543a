// Private seam for decoders that walk a simdjson DOM outside json.cc (coordination.cc): the
// shared ObjectMeta walker, so every kind reads metadata the same way. Only codec .cc files
// include it, since it names a simdjson type.
#pragma once

#include <simdjson.h>

#include "slicewright/base/status.h"
#include "slicewright/model/meta.h"

namespace slicewright::codec::internal {

// Decodes metadata into `out`; errors carry the field path inside metadata (".labels[a]").
Status DecodeObjectMetaValue(simdjson::dom::element value, model::ObjectMeta& out);

}  // namespace slicewright::codec::internal
