#include "slicewright/model/quantity.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace slicewright::model {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// A suffix as a power of ten and a power of two: "Ki" is {0, 10}, "m" is {-3, 0}.
struct Scale {
  std::int64_t pow10 = 0;
  int pow2 = 0;
};

// Exponents beyond this make any non-zero mantissa overflow or round to one thousandth; clamping
// keeps the arithmetic in range without changing the result.
constexpr std::int64_t kExponentClamp = 1'000'000;

std::optional<std::int64_t> ParseExponent(std::string_view text) {
  bool negative = false;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  if (text.empty()) {
    return std::nullopt;
  }
  std::int64_t value = 0;
  for (char c : text) {
    if (!IsDigit(c)) {
      return std::nullopt;
    }
    value = std::min<std::int64_t>(value * 10 + (c - '0'), kExponentClamp);
  }
  return negative ? -value : value;
}

std::optional<Scale> InterpretSuffix(std::string_view suffix) {
  struct Entry {
    std::string_view text;
    Scale scale;
  };
  static constexpr std::array<Entry, 16> kSuffixes = {{
      {"", {0, 0}},
      {"n", {-9, 0}},
      {"u", {-6, 0}},
      {"m", {-3, 0}},
      {"k", {3, 0}},
      {"M", {6, 0}},
      {"G", {9, 0}},
      {"T", {12, 0}},
      {"P", {15, 0}},
      {"E", {18, 0}},
      {"Ki", {0, 10}},
      {"Mi", {0, 20}},
      {"Gi", {0, 30}},
      {"Ti", {0, 40}},
      {"Pi", {0, 50}},
      {"Ei", {0, 60}},
  }};
  for (const Entry& entry : kSuffixes) {
    if (entry.text == suffix) {
      return entry.scale;
    }
  }
  // "E" alone is exa (matched above); "E3" and "e-2" are decimal exponents.
  if (suffix.size() > 1 && (suffix[0] == 'e' || suffix[0] == 'E')) {
    std::optional<std::int64_t> exponent = ParseExponent(suffix.substr(1));
    if (!exponent) {
      return std::nullopt;
    }
    return Scale{*exponent, 0};
  }
  return std::nullopt;
}

// The mantissa as decimal digit values (0..9, not characters), most significant first. It starts
// behind kHeadroom zeros that absorb the carries of the binary suffixes: 2^60 has 19 digits, so
// the multiplications never need to grow the string.
constexpr std::size_t kHeadroom = 20;

// Multiplies the digits in place by `factor` (<= 1024).
void MultiplyDigits(std::string& digits, std::uint64_t factor) {
  std::uint64_t carry = 0;
  for (std::size_t i = digits.size(); i-- > 0;) {  // least significant digit first
    const std::uint64_t product = static_cast<std::uint64_t>(digits[i]) * factor + carry;
    digits[i] = static_cast<char>(product % 10);
    carry = product / 10;
  }
}

constexpr auto kInt64Max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());

// value * 10 + digit, or nullopt past int64's range.
std::optional<std::uint64_t> AppendDigit(std::uint64_t value, std::uint64_t digit) {
  if (value > (kInt64Max - digit) / 10) {
    return std::nullopt;
  }
  return value * 10 + digit;
}

// Digits to an unsigned value; nullopt past int64's range.
std::optional<std::uint64_t> DigitsToValue(std::string_view digits) {
  std::uint64_t value = 0;
  for (char d : digits) {
    std::optional<std::uint64_t> next = AppendDigit(value, static_cast<std::uint64_t>(d));
    if (!next) {
      return std::nullopt;
    }
    value = *next;
  }
  return value;
}

}  // namespace

std::optional<std::int64_t> ParseQuantityMilli(std::string_view text) {
  if (text.empty()) {
    return std::nullopt;
  }
  std::size_t pos = 0;
  bool negative = false;
  if (text[0] == '+' || text[0] == '-') {
    negative = text[0] == '-';
    ++pos;
  }
  const std::size_t int_begin = pos;
  while (pos < text.size() && IsDigit(text[pos])) {
    ++pos;
  }
  const std::string_view int_digits = text.substr(int_begin, pos - int_begin);
  std::string_view frac_digits;
  if (pos < text.size() && text[pos] == '.') {
    const std::size_t frac_begin = ++pos;
    while (pos < text.size() && IsDigit(text[pos])) {
      ++pos;
    }
    frac_digits = text.substr(frac_begin, pos - frac_begin);
  }
  const std::optional<Scale> scale = InterpretSuffix(text.substr(pos));
  if (!scale) {
    return std::nullopt;
  }

  // value * 1000 = mantissa * 10^pow10 * 2^pow2, with the fraction folded into the mantissa.
  std::string digits(kHeadroom, '\0');
  digits.reserve(kHeadroom + int_digits.size() + frac_digits.size());
  for (std::string_view part : {int_digits, frac_digits}) {
    for (char c : part) {
      if (digits.size() == kHeadroom && c == '0') {
        continue;  // leading zeros
      }
      digits.push_back(static_cast<char>(c - '0'));
    }
  }
  if (digits.size() == kHeadroom) {
    return 0;  // "0", "-0.000", "0Ki", even "." as apimachinery accepts it
  }
  std::int64_t pow10 = scale->pow10 + 3 - static_cast<std::int64_t>(frac_digits.size());
  while (digits.back() == 0) {  // trailing zeros become a larger power of ten
    digits.pop_back();
    ++pow10;
  }
  for (int pow2 = scale->pow2; pow2 > 0; pow2 -= 10) {
    MultiplyDigits(digits, 1024);
  }
  std::string_view significant(digits);
  significant.remove_prefix(std::min(significant.find_first_not_of('\0'), significant.size()));

  std::uint64_t magnitude = 0;
  if (pow10 >= 0) {
    // 19 digits is the most an int64 can hold.
    if (static_cast<std::int64_t>(significant.size()) + pow10 > 19) {
      return std::nullopt;
    }
    std::optional<std::uint64_t> value = DigitsToValue(significant);
    for (std::int64_t i = 0; value && i < pow10; ++i) {
      value = AppendDigit(*value, 0);
    }
    if (!value) {
      return std::nullopt;
    }
    magnitude = *value;
  } else {
    // Keep the integer digits; any non-zero dropped digit rounds the magnitude up.
    const auto dropped = static_cast<std::uint64_t>(-pow10);
    const std::size_t kept =
        dropped >= significant.size() ? 0 : significant.size() - static_cast<std::size_t>(dropped);
    std::optional<std::uint64_t> value = DigitsToValue(significant.substr(0, kept));
    if (!value) {
      return std::nullopt;
    }
    magnitude = *value;
    const std::string_view rest = significant.substr(kept);
    if (rest.find_first_not_of('\0') != std::string_view::npos) {
      if (magnitude == kInt64Max) {
        return std::nullopt;
      }
      ++magnitude;
    }
  }
  const auto result = static_cast<std::int64_t>(magnitude);
  return negative ? -result : result;
}

}  // namespace slicewright::model
