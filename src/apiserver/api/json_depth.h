// How deeply a JSON text nests arrays and objects, measured without parsing it, so that bodies too
// deep for the recursive parsers are refused first. Pure; thread-safe.
#pragma once

#include <limits>
#include <string_view>

namespace slicewright::apiserver {

// The deepest nesting of arrays and objects in `text`; brackets inside strings do not count.
// Stops scanning (and returns a value above `stop_above`) as soon as the depth passes it.
int JsonNestingDepth(std::string_view text, int stop_above = std::numeric_limits<int>::max());

}  // namespace slicewright::apiserver
