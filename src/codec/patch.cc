// Patch bodies of the runtime, written as text: small fixed shapes need no JSON library.

#include "slicewright/codec/patch.h"

#include <cstddef>
#include <string>
#include <string_view>

#include "codec/internal.h"

namespace slicewright::codec {
namespace {

// Replaces each byte that does not start a valid UTF-8 sequence with U+FFFD, as the nlohmann
// encoders do: a message may quote user data, and the server refuses invalid UTF-8.
std::string ValidUtf8(std::string_view text) {
  if (internal::IsValidUtf8(text)) return std::string(text);
  std::string out;
  out.reserve(text.size() + 8);
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t length = 0;
    for (std::size_t n = 1; n <= 4 && i + n <= text.size(); ++n) {
      if (internal::IsValidUtf8(text.substr(i, n))) {
        length = n;
        break;
      }
    }
    if (length == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(text, i, length);
      i += length;
    }
  }
  return out;
}

}  // namespace

std::string EncodeEventCountPatch(std::int32_t count, model::Time last_timestamp,
                                  std::string_view message) {
  std::string out = R"({"count":)";
  out += std::to_string(count);
  out += R"(,"lastTimestamp":)";
  internal::AppendJsonString(out, model::FormatRfc3339(last_timestamp));
  out += R"(,"message":)";
  internal::AppendJsonString(out, ValidUtf8(message));
  out += '}';
  return out;
}

}  // namespace slicewright::codec
