#include "model/compact_text.h"

#include <cstring>

namespace slicewright::model::internal {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

bool ParseUuid(std::string_view text, std::array<std::uint8_t, 16>& out) {
  if (text.size() != 36) return false;
  std::size_t byte = 0;
  for (std::size_t i = 0; i < text.size();) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (text[i] != '-') return false;
      ++i;
      continue;
    }
    const int high = HexDigit(text[i]);
    const int low = HexDigit(text[i + 1]);
    if (high < 0 || low < 0) return false;
    out[byte++] = static_cast<std::uint8_t>(high * 16 + low);
    i += 2;
  }
  return true;
}

InlineString FormatUuid(const std::array<std::uint8_t, 16>& bytes) {
  // Two hex digits per byte from a table, at fixed positions: the reconciler formats one UID per
  // endpoint it builds.
  static constexpr std::array<std::array<char, 2>, 256> kPairs = [] {
    constexpr char kHex[] = "0123456789abcdef";
    std::array<std::array<char, 2>, 256> pairs{};
    for (std::size_t i = 0; i < pairs.size(); ++i) pairs[i] = {kHex[i >> 4], kHex[i & 0xf]};
    return pairs;
  }();
  static constexpr std::array<std::uint8_t, 16> kOffsets = {0,  2,  4,  6,  9,  11, 14, 16,
                                                            19, 21, 24, 26, 28, 30, 32, 34};
  std::array<char, 36> text{};
#pragma GCC unroll 16
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    std::memcpy(text.data() + kOffsets[i], kPairs[bytes[i]].data(), 2);
  }
  text[8] = text[13] = text[18] = text[23] = '-';
  return InlineString(std::string_view(text.data(), text.size()));
}

}  // namespace slicewright::model::internal
