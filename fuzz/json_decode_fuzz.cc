// libFuzzer target for the codec's decoders: JSON (simdjson), YAML (yaml-cpp) and the JSON -> YAML
// printer. Any input must give a value or a kBadRequest; a crash, a hang, a sanitizer report or
// another status code is a bug. Objects that decode are re-encoded and decoded again.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "slicewright/base/status.h"
#include "slicewright/codec/json.h"

namespace {

using slicewright::StatusCode;
namespace codec = slicewright::codec;

template <typename T>
void ExpectValueOrBadRequest(const slicewright::Result<T>& result) {
  if (!result.ok() && result.status().code() != StatusCode::kBadRequest) std::abort();
}

// Encoding what was decoded must give JSON the decoder accepts again.
void CheckReencode(const codec::ObjectSet& set) {
  for (const auto& pod : set.pods) {
    if (!codec::DecodePod(codec::EncodePod(pod)).ok()) std::abort();
  }
  for (const auto& service : set.services) {
    if (!codec::DecodeService(codec::EncodeService(service)).ok()) std::abort();
  }
  for (const auto& slice : set.endpoint_slices) {
    if (!codec::DecodeEndpointSlice(codec::EncodeEndpointSlice(slice)).ok()) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): libFuzzer hands out bytes
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const slicewright::Result<codec::ObjectSet> json = codec::DecodeJsonDocument(text, "fuzz.json");
  ExpectValueOrBadRequest(json);
  if (json.ok()) CheckReencode(*json);
  const slicewright::Result<codec::ObjectSet> yaml = codec::DecodeYamlDocuments(text, "fuzz.yaml");
  ExpectValueOrBadRequest(yaml);
  if (yaml.ok()) CheckReencode(*yaml);
  ExpectValueOrBadRequest(codec::JsonToYaml(text));
  return 0;
}
