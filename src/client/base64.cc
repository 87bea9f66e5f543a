#include "client/base64.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "slicewright/base/status.h"

namespace slicewright::client::internal {
namespace {

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// 0..63 for alphabet characters, -1 otherwise.
int DigitValue(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

Status IllegalAt(std::size_t offset) {
  return BadRequestError("illegal base64 data at input byte " + std::to_string(offset));
}

}  // namespace

Result<std::string> DecodeBase64(std::string_view text) {
  std::string out;
  out.reserve(text.size() / 4 * 3);
  std::array<int, 4> quantum{};
  std::size_t filled = 0;
  std::size_t padding = 0;
  std::size_t first_pad_offset = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\r' || c == '\n') continue;
    if (padding > 0) {
      // After '=' only more '=' may follow, up to the end of the quantum.
      if (c != '=' || filled + padding >= 4) return IllegalAt(i);
      ++padding;
      continue;
    }
    if (c == '=') {
      // Padding is valid only after two or three digits of a quantum.
      if (filled < 2) return IllegalAt(i);
      padding = 1;
      first_pad_offset = i;
      continue;
    }
    const int value = DigitValue(c);
    if (value < 0) return IllegalAt(i);
    quantum[filled++] = value;
    if (filled == 4) {
      const auto bits = (static_cast<std::uint32_t>(quantum[0]) << 18) |
                        (static_cast<std::uint32_t>(quantum[1]) << 12) |
                        (static_cast<std::uint32_t>(quantum[2]) << 6) |
                        static_cast<std::uint32_t>(quantum[3]);
      out += static_cast<char>((bits >> 16) & 0xFF);
      out += static_cast<char>((bits >> 8) & 0xFF);
      out += static_cast<char>(bits & 0xFF);
      filled = 0;
    }
  }
  if (padding > 0) {
    if (filled + padding != 4) return IllegalAt(first_pad_offset);
  } else if (filled != 0) {
    // Unpadded tail: Go's StdEncoding requires padding.
    return IllegalAt(text.size());
  }
  if (filled >= 2) {
    const auto bits = (static_cast<std::uint32_t>(quantum[0]) << 18) |
                      (static_cast<std::uint32_t>(quantum[1]) << 12) |
                      (filled == 3 ? static_cast<std::uint32_t>(quantum[2]) << 6 : 0U);
    out += static_cast<char>((bits >> 16) & 0xFF);
    if (filled == 3) out += static_cast<char>((bits >> 8) & 0xFF);
  }
  return out;
}

std::string EncodeBase64(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t bits =
        (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])) << 16) |
        (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8) |
        static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i + 2]));
    out += kAlphabet[(bits >> 18) & 0x3F];
    out += kAlphabet[(bits >> 12) & 0x3F];
    out += kAlphabet[(bits >> 6) & 0x3F];
    out += kAlphabet[bits & 0x3F];
  }
  const std::size_t rest = bytes.size() - i;
  if (rest > 0) {
    std::uint32_t bits = static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])) << 16;
    if (rest == 2)
      bits |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8;
    out += kAlphabet[(bits >> 18) & 0x3F];
    out += kAlphabet[(bits >> 12) & 0x3F];
    out += rest == 2 ? kAlphabet[(bits >> 6) & 0x3F] : '=';
    out += '=';
  }
  return out;
}

}  // namespace slicewright::client::internal
