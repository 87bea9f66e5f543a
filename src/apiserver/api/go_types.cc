#include "apiserver/api/go_types.h"

#include <algorithm>
#include <cstdint>
#include <string_view>

namespace slicewright::apiserver::gotypes {
namespace tables {

using enum Kind;
using enum Mode;

struct KindEntry {
  std::string_view api_version;
  std::string_view kind;
  const Message* message;
};

// Messages are declared first and defined after, so recursive types (JSONSchemaProps) can refer
// to themselves.
#include "apiserver/api/go_types_generated.inc"

// Each message's fields have distinct, valid numbers; nested references and modes agree.
constexpr bool WellFormed(const Message& message) {
  for (std::size_t i = 0; i < message.fields.size(); ++i) {
    const Field& field = message.fields[i];
    if (field.number > (std::uint32_t{1} << 29) - 1 ||
        (field.number == 0 && field.mode != kInline)) {
      return false;
    }
    for (std::size_t j = i + 1; j < message.fields.size(); ++j) {
      if (field.number != 0 && message.fields[j].number == field.number) {
        return false;
      }
    }
    if ((field.kind == kMessage) != (field.message != nullptr)) {
      return false;
    }
    if (field.kind == kMessage && field.mode == kOmitEmpty) {
      return false;  // Go never omits a struct value
    }
    if ((field.mode == kMap || field.mode == kMapNull) &&
        (field.kind != kMessage || field.message->fields.size() != 2 ||
         field.message->fields[0].number != 1 || field.message->fields[0].kind != kString ||
         field.message->fields[1].number != 2)) {
      return false;
    }
    if (field.mode == kInline &&
        (field.kind != kMessage || field.message->shape != Shape::kObject)) {
      return false;
    }
  }
  return true;
}
static_assert(std::ranges::all_of(kAllMessages, [](const Message* m) { return WellFormed(*m); }));

// Struct values (and inline structs) are filled with their zero values when absent, so a cycle
// through them would never end; recursion must go through pointers, slices or maps.
constexpr bool ZeroFillEnds(const Message& message, int depth = 0) {
  if (depth > 32) {
    return false;
  }
  for (const Field& field : message.fields) {
    if (field.kind == kMessage && (field.mode == kAlways || field.mode == kInline) &&
        !ZeroFillEnds(*field.message, depth + 1)) {
      return false;
    }
  }
  return true;
}
static_assert(std::ranges::all_of(kAllMessages, [](const Message* m) { return ZeroFillEnds(*m); }));

}  // namespace tables

const Message* FindKind(std::string_view api_version, std::string_view kind) {
  for (const tables::KindEntry& entry : tables::kKinds) {
    if (entry.api_version == api_version && entry.kind == kind) {
      return entry.message;
    }
  }
  return nullptr;
}

const Message& MetaV1DeleteOptions() { return tables::kMetaV1DeleteOptions; }

}  // namespace slicewright::apiserver::gotypes
