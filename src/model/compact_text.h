// Text fields the compact cache types store in binary (UUIDs), and the hash mixing their interners
// use. Internal to the model library and the cache types built on it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "slicewright/model/inline_string.h"

namespace slicewright::model::internal {

inline void HashCombine(std::size_t& seed, std::size_t value) {
  seed ^= value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
}

// A canonical lower-case UUID ("8-4-4-4-12"), as API servers generate them, into 16 bytes; false
// for anything else, which the caller keeps as text.
bool ParseUuid(std::string_view text, std::array<std::uint8_t, 16>& out);
InlineString FormatUuid(const std::array<std::uint8_t, 16>& bytes);

}  // namespace slicewright::model::internal
