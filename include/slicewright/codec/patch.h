// Bodies of the patches the runtime sends, built here because JSON text belongs to the codec
// layer. Reentrant.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "slicewright/model/time.h"

namespace slicewright::codec {

// The patch client-go's event correlator sends when an event repeats:
// {"count":N,"lastTimestamp":"...","message":"..."}. It is both a JSON merge patch and a
// strategic merge patch (no lists), so either content type accepts it. lastTimestamp is whole
// seconds, as metav1.Time marshals; invalid UTF-8 in the message becomes U+FFFD.
std::string EncodeEventCountPatch(std::int32_t count, model::Time last_timestamp,
                                  std::string_view message);

}  // namespace slicewright::codec
