#include "labels/go_format.h"

#include <cstdint>

namespace slicewright::labels::internal {
namespace {

constexpr std::string_view kLowerHex = "0123456789abcdef";

void AppendHex(std::string& out, std::uint32_t value, int digits) {
  for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4) {
    out += kLowerHex[(value >> static_cast<unsigned>(shift)) & 0xf];
  }
}

// Decodes one UTF-8 sequence at text[pos]. Returns its width, or 0 if the bytes there are not valid
// UTF-8 (overlong forms, surrogates and values past U+10FFFF included), as Go's utf8.DecodeRune.
std::size_t DecodeRune(std::string_view text, std::size_t pos, std::uint32_t& rune) {
  const auto byte = [&](std::size_t k) { return static_cast<std::uint8_t>(text[k]); };
  const std::uint8_t lead = byte(pos);
  std::size_t width = 0;
  std::uint32_t min = 0;
  if (lead >= 0xc2 && lead <= 0xdf) {
    width = 2;
    rune = lead & 0x1fU;
    min = 0x80;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    width = 3;
    rune = lead & 0x0fU;
    min = 0x800;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    width = 4;
    rune = lead & 0x07U;
    min = 0x10000;
  } else {
    return 0;
  }
  if (pos + width > text.size()) {
    return 0;
  }
  for (std::size_t k = 1; k < width; ++k) {
    const std::uint8_t continuation = byte(pos + k);
    if ((continuation & 0xc0) != 0x80) {
      return 0;
    }
    rune = (rune << 6) | (continuation & 0x3fU);
  }
  if (rune < min || rune > 0x10ffff || (rune >= 0xd800 && rune <= 0xdfff)) {
    return 0;
  }
  return width;
}

// unicode.IsPrint for runes >= 0x80, approximated by the ranges that matter in practice.
bool IsPrintNonAscii(std::uint32_t r) {
  if (r <= 0xa0 || r == 0xad) {
    return false;  // C1 controls, no-break space, soft hyphen
  }
  if (r == 0x1680 || (r >= 0x2000 && r <= 0x200f) || (r >= 0x2028 && r <= 0x202f) ||
      (r >= 0x205f && r <= 0x206f) || r == 0x3000 || r == 0xfeff || (r >= 0xfff9 && r <= 0xfffb)) {
    return false;  // spaces other than U+0020, separators and format characters
  }
  if ((r >= 0xe000 && r <= 0xf8ff) || r >= 0xf0000 || (r >= 0xe0000 && r <= 0xe007f)) {
    return false;  // private use and tag characters
  }
  if ((r & 0xfffe) == 0xfffe || (r >= 0xfdd0 && r <= 0xfdef)) {
    return false;  // noncharacters
  }
  return true;
}

}  // namespace

std::string GoQuote(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  for (std::size_t pos = 0; pos < text.size();) {
    const auto c = static_cast<std::uint8_t>(text[pos]);
    if (c < 0x80) {
      switch (c) {
        case '\a':
          out += "\\a";
          break;
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        case '\v':
          out += "\\v";
          break;
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        default:
          if (c >= 0x20 && c < 0x7f) {
            out += static_cast<char>(c);
          } else {
            out += "\\x";
            AppendHex(out, c, 2);
          }
      }
      ++pos;
      continue;
    }
    std::uint32_t rune = 0;
    const std::size_t width = DecodeRune(text, pos, rune);
    if (width == 0) {
      out += "\\x";
      AppendHex(out, c, 2);
      ++pos;
      continue;
    }
    if (IsPrintNonAscii(rune)) {
      out.append(text.substr(pos, width));
    } else if (rune < 0x10000) {
      out += "\\u";
      AppendHex(out, rune, 4);
    } else {
      out += "\\U";
      AppendHex(out, rune, 8);
    }
    pos += width;
  }
  out += '"';
  return out;
}

std::string GoStringSlice(std::span<const std::string> values) {
  if (values.empty()) {
    return "[]string(nil)";
  }
  std::string out = "[]string{";
  for (std::size_t k = 0; k < values.size(); ++k) {
    if (k > 0) {
      out += ", ";
    }
    out += GoQuote(values[k]);
  }
  out += '}';
  return out;
}

}  // namespace slicewright::labels::internal
