// libFuzzer target for the watch-stream decoder (issue #4): the input is a watch response body,
// split into lines as the API client splits the stream, and every line goes through each kind's
// event decoder. Any line must give an event or a kBadRequest; a crash, a hang, a sanitizer
// report or another status code is a bug. A decoded ADDED/MODIFIED/DELETED Pod must re-encode to
// JSON that decodes again. Only the first kMaxLines lines of an input are decoded: every line goes
// through seven decoders, and a long multi-line input (a pretty-printed file) made each run take a
// quarter of a second, so the fuzzer tried a few inputs a second instead of thousands. A real
// stream is one event per line; a few lines cover line splitting and decoder reuse across events.
// Seed corpus: fuzz/corpus/watch_event (one compact event per line).

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "slicewright/base/status.h"
#include "slicewright/codec/json.h"

namespace {

using slicewright::StatusCode;
namespace codec = slicewright::codec;

constexpr int kMaxLines = 8;

template <typename T>
void ExpectEventOrBadRequest(const slicewright::Result<codec::WatchEvent<T>>& result) {
  if (!result.ok() && result.status().code() != StatusCode::kBadRequest) std::abort();
  // An ERROR event always carries a failure for the caller to act on.
  if (result.ok() && result->type == codec::WatchEventType::kError && result->error.ok()) {
    std::abort();
  }
}

void DecodeLine(std::string_view line) {
  const auto pod = codec::DecodePodWatchEvent(line);
  ExpectEventOrBadRequest(pod);
  if (pod.ok() && pod->type != codec::WatchEventType::kError &&
      pod->type != codec::WatchEventType::kBookmark) {
    if (!codec::DecodePod(codec::EncodePod(pod->object)).ok()) std::abort();
  }
  ExpectEventOrBadRequest(codec::DecodeServiceWatchEvent(line));
  ExpectEventOrBadRequest(codec::DecodeNodeWatchEvent(line));
  ExpectEventOrBadRequest(codec::DecodeEndpointSliceWatchEvent(line));
  ExpectEventOrBadRequest(codec::DecodeEndpointsWatchEvent(line));
  ExpectEventOrBadRequest(codec::DecodeNamespaceWatchEvent(line));
  ExpectEventOrBadRequest(codec::DecodeEventWatchEvent(line));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): libFuzzer hands out bytes
  std::string_view stream(reinterpret_cast<const char*>(data), size);
  for (int lines = 0; lines < kMaxLines && !stream.empty(); ++lines) {
    const std::size_t newline = stream.find('\n');
    const std::string_view line = stream.substr(0, newline);
    if (!line.empty()) DecodeLine(line);
    if (newline == std::string_view::npos) break;
    stream.remove_prefix(newline + 1);
  }
  return 0;
}
