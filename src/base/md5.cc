#include "slicewright/base/md5.h"

#include <bit>
#include <cmath>
#include <cstddef>

namespace slicewright {
namespace {

// RFC 1321 §3.4: T[i] is the integer part of 2^32 * |sin(i + 1)| (radians); the shifts per round.
struct Tables {
  std::array<std::uint32_t, 64> sine{};
  Tables() {
    for (std::size_t i = 0; i < sine.size(); ++i) {
      sine[i] = static_cast<std::uint32_t>(
          std::floor(std::fabs(std::sin(static_cast<double>(i + 1))) * 4294967296.0));
    }
  }
};

constexpr std::array<int, 16> kShifts = {7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21};

std::uint32_t LoadLittleEndian(const std::uint8_t* bytes) {
  return static_cast<std::uint32_t>(bytes[0]) | static_cast<std::uint32_t>(bytes[1]) << 8 |
         static_cast<std::uint32_t>(bytes[2]) << 16 | static_cast<std::uint32_t>(bytes[3]) << 24;
}

// One 64-byte block into the state (a, b, c, d).
void Block(std::array<std::uint32_t, 4>& state, const std::uint8_t* block) {
  static const Tables tables;
  std::array<std::uint32_t, 16> words{};
  for (std::size_t i = 0; i < words.size(); ++i) words[i] = LoadLittleEndian(block + 4 * i);
  std::uint32_t a = state[0];
  std::uint32_t b = state[1];
  std::uint32_t c = state[2];
  std::uint32_t d = state[3];
  for (std::size_t i = 0; i < 64; ++i) {
    std::uint32_t f = 0;
    std::size_t g = 0;
    switch (i / 16) {
      case 0:
        f = (b & c) | (~b & d);
        g = i;
        break;
      case 1:
        f = (d & b) | (~d & c);
        g = (5 * i + 1) % 16;
        break;
      case 2:
        f = b ^ c ^ d;
        g = (3 * i + 5) % 16;
        break;
      default:
        f = c ^ (b | ~d);
        g = (7 * i) % 16;
        break;
    }
    const std::uint32_t rotated =
        std::rotl(a + f + tables.sine[i] + words[g], kShifts[(i / 16) * 4 + i % 4]);
    a = d;
    d = c;
    c = b;
    b += rotated;
  }
  state[0] += a;
  state[1] += b;
  state[2] += c;
  state[3] += d;
}

}  // namespace

Md5Digest Md5(std::string_view data) {
  std::array<std::uint32_t, 4> state = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(data.data());
  std::size_t full = data.size() / 64 * 64;
  for (std::size_t offset = 0; offset < full; offset += 64) Block(state, bytes + offset);
  // Padding: 0x80, zeros to 56 bytes mod 64, then the bit length, little-endian.
  std::array<std::uint8_t, 128> tail{};
  const std::size_t rest = data.size() - full;
  for (std::size_t i = 0; i < rest; ++i) tail[i] = bytes[full + i];
  tail[rest] = 0x80;
  const std::size_t tail_size = rest < 56 ? 64 : 128;
  const std::uint64_t bits = static_cast<std::uint64_t>(data.size()) * 8;
  for (std::size_t i = 0; i < 8; ++i) {
    tail[tail_size - 8 + i] = static_cast<std::uint8_t>(bits >> (8 * i));
  }
  for (std::size_t offset = 0; offset < tail_size; offset += 64) Block(state, tail.data() + offset);
  Md5Digest digest{};
  for (std::size_t i = 0; i < 4; ++i) {
    for (std::size_t j = 0; j < 4; ++j) {
      digest[4 * i + j] = static_cast<std::uint8_t>(state[i] >> (8 * j));
    }
  }
  return digest;
}

}  // namespace slicewright
