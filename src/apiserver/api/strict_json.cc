#include "apiserver/api/strict_json.h"

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "slicewright/base/status.h"

#include "apiserver/api/go_types.h"

namespace slicewright::apiserver {
namespace {

using gotypes::Field;
using gotypes::Kind;
using gotypes::Message;
using gotypes::Mode;
using gotypes::Shape;
using nlohmann::json;

// ---------------------------------------------------------------------------------------------
// Go's time.Parse, for the RFC 3339 layouts only (time/format.go: parse, getnum, skip,
// parseNanoseconds, ParseError.Error and quote).

// Go's time.quote: printable ASCII kept ('"' and '\' escaped), every other byte as \xNN.
std::string GoQuote(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x80 || byte < 0x20) {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xF];
      continue;
    }
    if (c == '"' || c == '\\') {
      out += '\\';
    }
    out += c;
  }
  out += '"';
  return out;
}

bool IsDigitAt(std::string_view text, std::size_t i) {
  return i < text.size() && text[i] >= '0' && text[i] <= '9';
}

// getnum: one or two digits (`fixed`: exactly two).
bool GetNum(std::string_view& value, bool fixed, int& out) {
  if (!IsDigitAt(value, 0)) {
    return false;
  }
  if (!IsDigitAt(value, 1)) {
    if (fixed) {
      return false;
    }
    out = value[0] - '0';
    value.remove_prefix(1);
    return true;
  }
  out = (value[0] - '0') * 10 + (value[1] - '0');
  value.remove_prefix(2);
  return true;
}

// Go's atoi over a short digit string with an optional sign; false when anything else is there.
bool GoAtoi(std::string_view text, std::int64_t& out) {
  bool negative = false;
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  if (text.empty()) {
    return false;
  }
  std::int64_t value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9' || value > (std::numeric_limits<std::int64_t>::max() - 9) / 10) {
      return false;
    }
    value = value * 10 + (c - '0');
  }
  out = negative ? -value : value;
  return true;
}

// parseNanoseconds: value starts with '.' or ',' and `digits` bytes follow it at most.
bool ParseNanos(std::string_view value, std::size_t n, std::int64_t& nanos,
                std::string& range_error) {
  if (value.empty() || (value[0] != '.' && value[0] != ',')) {
    return false;
  }
  n = std::min<std::size_t>(n, 10);
  if (!GoAtoi(value.substr(1, n - 1), nanos)) {
    return false;
  }
  if (nanos < 0) {
    range_error = "fractional second";
    return true;
  }
  for (std::size_t i = n; i < 10; ++i) {
    nanos *= 10;
  }
  return true;
}

bool IsLeap(std::int64_t year) { return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0); }

int DaysIn(int month, std::int64_t year) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && IsLeap(year) ? 29 : kDays[month - 1];
}

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
std::int64_t DaysFromCivil(std::int64_t y, int m, int d) {
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const std::int64_t yoe = y - era * 400;
  const std::int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

void CivilFromDays(std::int64_t z, std::int64_t& y, int& m, int& d) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const std::int64_t doe = z - era * 146097;
  const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const std::int64_t mp = (5 * doy + 2) / 153;
  d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  y = yoe + era * 400 + (m <= 2 ? 1 : 0);
}

std::string Pad(std::int64_t value, int width) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  if (static_cast<int>(digits.size()) < width) {
    digits.insert(0, static_cast<std::size_t>(width) - digits.size(), '0');
  }
  return value < 0 ? "-" + digits : digits;
}

// Go's Format in UTC of `seconds` since the epoch (+ nanos), seconds only or with six digits.
std::string FormatUtc(std::int64_t seconds, std::int64_t nanos, bool micro) {
  std::int64_t days = seconds / 86400;
  std::int64_t rest = seconds % 86400;
  if (rest < 0) {
    rest += 86400;
    --days;
  }
  std::int64_t year = 0;
  int month = 0;
  int day = 0;
  CivilFromDays(days, year, month, day);
  std::string out = Pad(year, 4) + "-" + Pad(month, 2) + "-" + Pad(day, 2) + "T" +
                    Pad(rest / 3600, 2) + ":" + Pad(rest / 60 % 60, 2) + ":" + Pad(rest % 60, 2);
  if (micro) {
    out += "." + Pad(nanos / 1000, 6);
  }
  return out + "Z";
}

}  // namespace

bool ParseGoTime(std::string_view layout, std::string_view value, std::string& formatted,
                 std::string& error) {
  const bool micro = layout == kRfc3339MicroLayout;
  const std::string original(value);
  const auto parse_error = [&](std::string_view layout_elem, std::string_view value_elem) {
    error = "parsing time " + GoQuote(original) + " as " + GoQuote(layout) + ": cannot parse " +
            GoQuote(value_elem) + " as " + GoQuote(layout_elem);
    return false;
  };
  const auto message_error = [&](std::string_view message) {
    error = "parsing time " + GoQuote(original) + std::string(message);
    return false;
  };
  // The layout as Go's nextStdChunk splits it: a literal prefix, then a std element.
  struct Chunk {
    std::string_view prefix;
    std::string_view std;
  };
  static constexpr Chunk kChunks[] = {{"", "2006"}, {"-", "01"}, {"-", "02"},     {"T", "15"},
                                      {":", "04"},  {":", "05"}, {"", ".000000"}, {"", "Z07:00"}};
  std::int64_t year = 0;
  int month = -1;
  int day = -1;
  int hour = 0;
  int minute = 0;
  int second = 0;
  std::int64_t nanos = 0;
  std::int64_t zone_offset = 0;
  for (const Chunk& chunk : kChunks) {
    if (chunk.std == ".000000" && !micro) {
      continue;
    }
    for (const char c : chunk.prefix) {  // skip
      if (value.empty() || value[0] != c) {
        return parse_error(chunk.prefix, value);
      }
      value.remove_prefix(1);
    }
    const std::string_view hold = value;
    std::string range;
    bool ok = true;
    if (chunk.std == "2006") {
      ok = value.size() >= 4 && IsDigitAt(value, 0) && GoAtoi(value.substr(0, 4), year);
      if (value.size() >= 4) {
        value.remove_prefix(4);
      }
    } else if (chunk.std == "01") {
      ok = GetNum(value, true, month);
      if (ok && (month <= 0 || month > 12)) {
        range = "month";
      }
    } else if (chunk.std == "02") {
      ok = GetNum(value, true, day);
    } else if (chunk.std == "15") {
      ok = GetNum(value, false, hour);
      if (hour < 0 || hour >= 24) {
        range = "hour";
      }
    } else if (chunk.std == "04") {
      ok = GetNum(value, true, minute);
      if (minute < 0 || minute >= 60) {
        range = "minute";
      }
    } else if (chunk.std == "05") {
      ok = GetNum(value, true, second);
      if (ok && second >= 60) {
        range = "second";
      } else if (ok && !micro && value.size() >= 2 && (value[0] == '.' || value[0] == ',') &&
                 IsDigitAt(value, 1)) {
        // A fraction the layout does not name: Go takes any number of digits.
        std::size_t n = 2;
        while (IsDigitAt(value, n)) {
          ++n;
        }
        ok = ParseNanos(value, n, nanos, range);
        value.remove_prefix(n);
      }
    } else if (chunk.std == ".000000") {
      if (value.size() < 7) {
        ok = false;
      } else {
        ok = ParseNanos(value, 7, nanos, range);
        value.remove_prefix(7);
      }
    } else {  // Z07:00
      if (!value.empty() && value[0] == 'Z') {
        value.remove_prefix(1);
      } else if (value.size() < 6 || value[3] != ':') {
        ok = false;
      } else {
        std::string_view hh = value.substr(1, 2);
        std::string_view mm = value.substr(4, 2);
        const char sign = value[0];
        value.remove_prefix(6);
        int zh = 0;
        int zm = 0;
        ok = GetNum(hh, true, zh) && GetNum(mm, true, zm);
        if (zh > 24) {
          range = "time zone offset hour";
        }
        if (zm > 60) {
          range = "time zone offset minute";
        }
        zone_offset = (std::int64_t{zh} * 60 + zm) * 60;
        if (sign == '-') {
          zone_offset = -zone_offset;
        } else if (sign != '+') {
          ok = false;
        }
      }
    }
    if (!range.empty()) {
      return message_error(": " + range + " out of range");
    }
    if (!ok) {
      return parse_error(chunk.std, hold);
    }
  }
  if (!value.empty()) {
    return message_error(": extra text: " + GoQuote(value));
  }
  if (day < 1 || day > DaysIn(month, year)) {
    return message_error(": day out of range");
  }
  const std::int64_t seconds = DaysFromCivil(year, month, day) * 86400 + std::int64_t{hour} * 3600 +
                               std::int64_t{minute} * 60 + second - zone_offset;
  // Go's zero time, 0001-01-01T00:00:00Z, is what metav1 encodes as null.
  const std::int64_t zero = DaysFromCivil(1, 1, 1) * 86400;
  formatted = seconds == zero && nanos == 0 ? "" : FormatUtc(seconds, nanos, micro);
  return true;
}

namespace {

constexpr std::string_view kQuantityFormatError =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// resource.ParseQuantity's checks (parseQuantityString, then the suffixer): an empty string or a
// malformed exponent is ErrFormatWrong, a suffix it does not know ErrSuffix. "" when it parses.
std::string QuantityError(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t' || text.front() == '\n' ||
                           text.front() == '\r')) {
    text.remove_prefix(1);
  }
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\n' ||
                           text.back() == '\r')) {
    text.remove_suffix(1);
  }
  if (text.empty()) {
    return std::string(kQuantityFormatError);
  }
  std::size_t pos = 0;
  if (text[0] == '-' || text[0] == '+') {
    ++pos;
  }
  while (pos < text.size() && IsDigit(text[pos])) {
    ++pos;
  }
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    while (pos < text.size() && IsDigit(text[pos])) {
      ++pos;
    }
  }
  const std::size_t suffix_start = pos;
  while (pos < text.size() &&
         std::string_view("eEinumkKMGTP").find(text[pos]) != std::string_view::npos) {
    ++pos;
  }
  if (pos < text.size() && (text[pos] == '-' || text[pos] == '+')) {
    ++pos;
  }
  while (pos < text.size() && IsDigit(text[pos])) {
    ++pos;
  }
  if (pos < text.size()) {
    return std::string(kQuantityFormatError);
  }
  const std::string_view suffix = text.substr(suffix_start);
  static constexpr std::string_view kSuffixes[] = {"",  "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n",
                                                   "u", "m",  "k",  "M",  "G",  "T",  "P",  "E"};
  for (const std::string_view known : kSuffixes) {
    if (suffix == known) {
      return "";
    }
  }
  if (suffix.size() > 1 && (suffix[0] == 'e' || suffix[0] == 'E')) {
    std::int64_t exponent = 0;
    if (GoAtoi(suffix.substr(1), exponent)) {
      return "";  // a decimal exponent, "1e3"
    }
  }
  return "unable to parse quantity's suffix";
}

// One walk over a body, as encoding/json's decodeState does it: the first type error is kept
// and the walk goes on; an error from a type's own UnmarshalJSON (times, IntOrString) ends it.
class Walker final {
 public:
  // `unknown`, when set, collects the paths of fields the Go type does not have (which are
  // pruned), as the strict decoder names them ("spec.ports[0].bogus").
  explicit Walker(std::vector<std::string>* unknown) : unknown_(unknown) {}

  // Returns the error text, empty when the body decodes.
  std::string Run(const Message& type, json& object) {
    WalkObject(type, object, /*top=*/true);
    return !abort_.empty() ? abort_ : first_;
  }

 private:
  static std::string JsonKind(const json& value) {
    switch (value.type()) {
      case json::value_t::string:
        return "string";
      case json::value_t::boolean:
        return "bool";
      case json::value_t::array:
        return "array";
      case json::value_t::object:
        return "object";
      default:
        return "number";
    }
  }

  static std::string NumberLiteral(const json& value) { return value.dump(); }

  // UnmarshalTypeError.Error, with the decoder's context (the innermost struct and the JSON names
  // from the top), or without it for a value decoded by a nested json.Unmarshal.
  std::string TypeError(std::string_view what, std::string_view go_type, bool context) const {
    std::string out = "json: cannot unmarshal " + std::string(what) + " into Go ";
    if (context && !stack_.empty()) {
      out += "struct field " + std::string(struct_name_) + ".";
      for (std::size_t i = 0; i < stack_.size(); ++i) {
        out += (i == 0 ? "" : ".") + std::string(stack_[i]);
      }
    } else {
      out += "value";
    }
    return out + " of type " + std::string(go_type);
  }

  void Save(std::string error) {
    if (first_.empty()) {
      first_ = std::move(error);
    }
  }

  // Finds the field a JSON key names, looking into inline structs (their fields are promoted).
  static const Field* FindField(const Message& type, std::string_view name) {
    for (const Field& field : type.fields) {
      if (field.mode == Mode::kInline) {
        if (const Field* inner = FindField(*field.message, name)) {
          return inner;
        }
      } else if (field.json_name == name) {
        return &field;
      }
    }
    return nullptr;
  }

  std::string Path(std::string_view key) const {
    std::string out;
    for (const std::string& part : path_) {
      out += (out.empty() || part.front() == '[' ? "" : ".") + part;
    }
    return out + (out.empty() ? "" : ".") + std::string(key);
  }

  void WalkObject(const Message& type, json& object, bool top) {
    std::vector<std::string> pruned;
    for (auto it = object.begin(); it != object.end() && abort_.empty(); ++it) {
      if (top && (it.key() == "apiVersion" || it.key() == "kind")) {
        continue;  // type meta: read and checked before the object is decoded
      }
      const Field* field = FindField(type, it.key());
      if (field == nullptr) {
        // Unknown fields: Go drops them; fieldValidation decides what that costs.
        if (unknown_ != nullptr) {
          unknown_->push_back(Path(it.key()));
          pruned.push_back(it.key());
        }
        continue;
      }
      const std::string_view saved_struct = struct_name_;
      struct_name_ = type.name;
      stack_.push_back(field->json_name);
      path_.push_back(std::string(field->json_name));
      WalkField(*field, it.value());
      path_.pop_back();
      stack_.pop_back();
      struct_name_ = saved_struct;
    }
    for (const std::string& key : pruned) {
      object.erase(key);
    }
  }

  void WalkField(const Field& field, json& value) {
    if (value.is_null()) {
      return;
    }
    if (field.mode == Mode::kRepeated || field.mode == Mode::kRepeatedNull) {
      if (!value.is_array()) {
        Save(TypeError(JsonKind(value), field.go_type, true));
        return;
      }
      for (std::size_t i = 0; i < value.size(); ++i) {
        path_.push_back("[" + std::to_string(i) + "]");
        WalkValue(field.kind, field.message, field.elem_go_type, value[i]);
        path_.pop_back();
        if (!abort_.empty()) {
          return;
        }
      }
      return;
    }
    if (field.mode == Mode::kMap || field.mode == Mode::kMapNull) {
      if (!value.is_object()) {
        Save(TypeError(JsonKind(value), field.go_type, true));
        return;
      }
      const Field& entry = field.message->fields[1];
      for (auto it = value.begin(); it != value.end() && abort_.empty(); ++it) {
        WalkValue(entry.kind, entry.message, field.elem_go_type, it.value());
      }
      return;
    }
    WalkValue(field.kind, field.message, field.go_type, value);
  }

  void WalkValue(Kind kind, const Message* message, std::string_view go_type, json& value) {
    if (value.is_null()) {
      return;
    }
    switch (kind) {
      case Kind::kString:
        if (!value.is_string()) {
          Save(TypeError(JsonKind(value), go_type, true));
        }
        return;
      case Kind::kBytes:
        if (!value.is_string()) {
          Save(TypeError(JsonKind(value), go_type, true));
        } else {
          CheckBase64(value.get_ref<const std::string&>());
        }
        return;
      case Kind::kBool:
        if (!value.is_boolean()) {
          Save(TypeError(JsonKind(value), go_type, true));
        }
        return;
      case Kind::kInt32:
      case Kind::kInt64:
        if (!value.is_number()) {
          Save(TypeError(JsonKind(value), go_type, true));
        } else if (!FitsInt(value, kind)) {
          Save(TypeError("number " + NumberLiteral(value), go_type, true));
        }
        return;
      case Kind::kDouble:
        if (!value.is_number()) {
          Save(TypeError(JsonKind(value), go_type, true));
        }
        return;
      case Kind::kMessage:
        WalkMessage(*message, value);
        return;
    }
  }

  static bool FitsInt(const json& value, Kind kind) {
    if (value.is_number_float()) {
      return false;  // Go's strconv.ParseInt refuses "1.5", "1.0" and "1e3"
    }
    if (value.is_number_unsigned()) {
      const auto n = value.get<std::uint64_t>();
      return kind == Kind::kInt32
                 ? n <= static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max())
                 : n <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    }
    const auto n = value.get<std::int64_t>();
    return kind == Kind::kInt64 || (n >= std::numeric_limits<std::int32_t>::min() &&
                                    n <= std::numeric_limits<std::int32_t>::max());
  }

  // base64.StdEncoding: the alphabet, '=' padding only at the end, whole quanta; CR and LF are
  // skipped as Go skips them. Reports Go's CorruptInputError text at the offending byte.
  void CheckBase64(const std::string& text) {
    std::size_t count = 0;  // significant characters so far
    std::size_t padding_at = std::string::npos;
    for (std::size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      if (c == '\r' || c == '\n') {
        continue;
      }
      const bool alphabet = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                            (c >= '0' && c <= '9') || c == '+' || c == '/';
      if (c == '=' && count % 4 >= 2) {
        if (padding_at == std::string::npos) {
          padding_at = i;
        }
        ++count;
        continue;
      }
      if (!alphabet || padding_at != std::string::npos) {
        Save("illegal base64 data at input byte " + std::to_string(i));
        return;
      }
      ++count;
    }
    if (count % 4 != 0) {
      Save("illegal base64 data at input byte " +
           std::to_string(text.size() - count % 4 < text.size() ? text.size() - count % 4 : 0));
    }
  }

  void WalkMessage(const Message& message, json& value) {
    switch (message.shape) {
      case Shape::kObject:
        if (!value.is_object()) {
          Save(TypeError(JsonKind(value), message.go_name, true));
          return;
        }
        WalkObject(message, value, /*top=*/false);
        return;
      case Shape::kTime:
      case Shape::kMicroTime: {
        // metav1.(Micro)Time.UnmarshalJSON: json.Unmarshal into a string, then time.Parse.
        if (!value.is_string()) {
          abort_ = TypeError(JsonKind(value), "string", false);
          return;
        }
        std::string formatted;
        std::string error;
        const bool micro = message.shape == Shape::kMicroTime;
        if (!ParseGoTime(micro ? kRfc3339MicroLayout : kRfc3339Layout,
                         value.get_ref<const std::string&>(), formatted, error)) {
          abort_ = std::move(error);
          return;
        }
        value = formatted.empty() ? json(nullptr) : json(std::move(formatted));
        return;
      }
      case Shape::kIntOrString:
        // IntOrString.UnmarshalJSON: a string, else json.Unmarshal into an int32.
        if (value.is_string()) {
          return;
        }
        if (!value.is_number()) {
          abort_ = TypeError(JsonKind(value), "int32", false);
        } else if (!FitsInt(value, Kind::kInt32)) {
          abort_ = TypeError("number " + NumberLiteral(value), "int32", false);
        }
        return;
      case Shape::kQuantity:
        // Quantity.UnmarshalJSON: ParseQuantity of the string, or of any other value's text.
        if (std::string error = QuantityError(
                value.is_string() ? value.get_ref<const std::string&>() : value.dump());
            !error.empty()) {
          abort_ = std::move(error);
        }
        return;
      case Shape::kFieldsV1:
      case Shape::kRawJson:
      case Shape::kSchemaOrArray:
      case Shape::kSchemaOrBool:
      case Shape::kSchemaOrStringArray:
        return;  // any JSON value (their own UnmarshalJSON; CRD validation checks schemas)
    }
  }

  std::vector<std::string>* unknown_;    // where unknown fields' paths go (null: left alone)
  std::vector<std::string> path_;        // the JSON path from the top, list indices included
  std::vector<std::string_view> stack_;  // JSON names from the top (errorContext.FieldStack)
  std::string_view struct_name_;         // the innermost struct's name (errorContext.Struct)
  std::string first_;                    // the first type error (decodeState.savedError)
  std::string abort_;                    // an error that ended the walk
};

}  // namespace

Status DecodeStrictJson(std::string_view api_version, std::string_view kind, json& object,
                        std::vector<std::string>* unknown) {
  const Message* type = gotypes::FindKind(api_version, kind);
  if (type == nullptr || !object.is_object()) {
    return Status::Ok();
  }
  // A body naming another kind is refused by the type meta checks, with their message.
  const auto names_other = [&](const char* key, std::string_view want) {
    const auto it = object.find(key);
    return it != object.end() && it->is_string() && it->get_ref<const std::string&>() != want;
  };
  if (names_other("apiVersion", api_version) || names_other("kind", kind)) {
    return Status::Ok();
  }
  Walker walker(unknown);
  const std::string error = walker.Run(*type, object);
  if (error.empty()) {
    return Status::Ok();
  }
  const std::size_t slash = api_version.find('/');
  const std::string_view version =
      slash == std::string_view::npos ? api_version : api_version.substr(slash + 1);
  // k8s.io/apiserver/pkg/endpoints/handlers: transformDecodeError.
  return BadRequestError(std::string(kind) + " in version \"" + std::string(version) +
                         "\" cannot be handled as a " + std::string(kind) + ": " + error);
}

Status DecodeStrictDeleteOptions(json& object) {
  Walker walker(/*unknown=*/nullptr);  // unknown fields are left alone: none is read
  const std::string error = walker.Run(gotypes::MetaV1DeleteOptions(), object);
  if (error.empty()) {
    return Status::Ok();
  }
  return BadRequestError("DeleteOptions: " + error);
}

}  // namespace slicewright::apiserver
