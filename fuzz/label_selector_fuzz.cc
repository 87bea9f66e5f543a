// libFuzzer target for labels::Selector::Parse: no input may crash it, every failure is a
// kBadRequest, and every success prints a canonical form that re-parses to itself. Single-threaded.
// Built by fuzz/CMakeLists.txt; CI runs it on fuzz/corpus/label_selector (.ci/run).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "slicewright/labels/selector.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  slicewright::Result<slicewright::labels::Selector> selector =
      slicewright::labels::Selector::Parse(text);
  if (!selector.ok()) {
    if (selector.status().code() != slicewright::StatusCode::kBadRequest) {
      std::abort();
    }
    return 0;
  }
  const std::string printed = selector->String();
  slicewright::Result<slicewright::labels::Selector> again =
      slicewright::labels::Selector::Parse(printed);
  if (!again.ok() || again->String() != printed) {
    std::abort();
  }
  // Matching must be total too; the label set reuses the input as keys and values.
  slicewright::model::StringMap labels = {{std::string(text), std::string(text)}, {"a", "1"}};
  static_cast<void>(selector->Matches(labels));
  return 0;
}
