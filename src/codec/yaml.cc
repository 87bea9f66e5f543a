// The yaml-cpp adapter: YAML documents become JSON text (through yaml-cpp's event API, so no node
// tree is built), which the JSON decoder then reads. Every yaml-cpp exception is caught here. Also
// the YAML scalar rules (how a plain scalar resolves, when a string needs quotes) shared with the
// YAML emitter in json_encode.cc.

#include "slicewright/codec/yaml.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include "slicewright/base/status.h"
#include "slicewright/codec/json.h"

#include "codec/internal.h"

namespace slicewright::codec {
namespace internal {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Go's strconv.ParseInt(text, 0, 64) / ParseUint: optional sign, then 0x / 0o / 0b / leading-0
// octal / decimal. Returns the value as decimal text, or nullopt if not an integer or out of
// uint64 range (a negative value must fit int64).
std::optional<std::string> ParseGoInt(std::string_view text) {
  bool negative = false;
  if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
  } else if (text.size() > 2 && text[0] == '0' && (text[1] == 'o' || text[1] == 'O')) {
    base = 8;
    text.remove_prefix(2);
  } else if (text.size() > 2 && text[0] == '0' && (text[1] == 'b' || text[1] == 'B')) {
    base = 2;
    text.remove_prefix(2);
  } else if (text.size() > 1 && text[0] == '0') {
    base = 8;
    text.remove_prefix(1);
  }
  if (text.empty()) return std::nullopt;
  std::uint64_t magnitude = 0;
  const auto [end, error] =
      std::from_chars(text.data(), text.data() + text.size(), magnitude, base);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  if (!negative) return std::to_string(magnitude);
  if (magnitude > std::uint64_t{1} << 63) return std::nullopt;  // below INT64_MIN
  if (magnitude == 0) return std::string("0");
  return "-" + std::to_string(magnitude);
}

// go-yaml's yamlStyleFloat: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool IsYamlStyleFloat(std::string_view text) {
  std::size_t i = 0;
  const auto digits = [&] {
    const std::size_t first = i;
    while (i < text.size() && IsDigit(text[i])) ++i;
    return i - first;
  };
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  if (i < text.size() && text[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  } else {
    if (digits() == 0) return false;
    if (i < text.size() && text[i] == '.') {
      ++i;
      digits();
    }
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == text.size();
}

// A float as Go's encoding/json writes a float64: whole numbers without a fraction ("80", so a
// YAML `port: 80.0` still decodes as an integer, as with kubectl), exponents only outside
// [1e-6, 1e18) (Go's bound is 1e21, but simdjson refuses integers beyond uint64; in exponent
// form a huge value reads as "integer out of range" instead). "" for values JSON cannot hold.
std::string FloatJsonText(double value) {
  if (!std::isfinite(value)) return std::string();
  char buffer[400];
  const double magnitude = std::fabs(value);
  const bool fixed = magnitude == 0 || (magnitude >= 1e-6 && magnitude < 1e18);
  const auto result =
      std::to_chars(buffer, buffer + sizeof buffer, value,
                    fixed ? std::chars_format::fixed : std::chars_format::scientific);
  return std::string(buffer, result.ptr);
}

std::optional<double> ParseFloat(std::string_view text) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);  // from_chars takes no '+'
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

PlainScalar Bool(bool value) { return {PlainScalarKind::kBool, value, {}}; }
PlainScalar Float(std::string text) { return {PlainScalarKind::kFloat, false, std::move(text)}; }

// go-yaml v2's resolve table: these exact spellings, tried before anything else.
std::optional<PlainScalar> LookUpWord(std::string_view text) {
  static const std::unordered_map<std::string_view, PlainScalar> kWords = [] {
    std::unordered_map<std::string_view, PlainScalar> words;
    for (std::string_view w :
         {"y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "true", "True", "TRUE"}) {
      words.emplace(w, Bool(true));
    }
    for (std::string_view w :
         {"n", "N", "no", "No", "NO", "off", "Off", "OFF", "false", "False", "FALSE"}) {
      words.emplace(w, Bool(false));
    }
    for (std::string_view w : {"~", "null", "Null", "NULL"}) {
      words.emplace(w, PlainScalar{PlainScalarKind::kNull, false, {}});
    }
    for (std::string_view w : {".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf",
                               "+.INF", "-.inf", "-.Inf", "-.INF"}) {
      words.emplace(w, Float(std::string()));
    }
    return words;
  }();
  const auto it = kWords.find(text);
  if (it == kWords.end()) return std::nullopt;
  return it->second;
}

// go-yaml's isBase60Float, which its emitter quotes for YAML 1.1 readers:
// [-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?
bool IsBase60(std::string_view text) {
  std::size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  if (i >= text.size() || !IsDigit(text[i])) return false;
  while (i < text.size() && (IsDigit(text[i]) || text[i] == '_')) ++i;
  int groups = 0;
  while (i < text.size() && text[i] == ':') {
    ++i;
    const std::size_t first = i;
    while (i < text.size() && IsDigit(text[i]) && i - first < 2) ++i;
    if (i == first) return false;
    if (i - first == 2 && text[first] > '5') return false;
    ++groups;
  }
  if (groups == 0) return false;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && (IsDigit(text[i]) || text[i] == '_')) ++i;
  }
  return i == text.size();
}

}  // namespace

PlainScalar ResolvePlainScalar(std::string_view text) {
  if (text.empty()) return {PlainScalarKind::kNull, false, {}};
  const char first = text.front();
  // go-yaml only looks further for texts starting with one of these; everything else is a string.
  static constexpr std::string_view kHinted = "yYnNtTfFoO~+-.0123456789";
  if (kHinted.find(first) == std::string_view::npos) return {};
  if (std::optional<PlainScalar> word = LookUpWord(text)) return *std::move(word);
  if (first == '.') {
    if (const std::optional<double> value = ParseFloat(text)) return Float(FloatJsonText(*value));
    return {};
  }
  if (!IsDigit(first) && first != '+' && first != '-') return {};
  std::string plain;
  plain.reserve(text.size());
  for (const char c : text) {
    if (c != '_') plain += c;
  }
  if (std::optional<std::string> integer = ParseGoInt(plain)) {
    return {PlainScalarKind::kInt, false, *std::move(integer)};
  }
  if (IsYamlStyleFloat(plain)) {
    if (const std::optional<double> value = ParseFloat(plain)) return Float(FloatJsonText(*value));
  }
  return {};
}

bool PlainScalarIsAmbiguous(std::string_view text) {
  if (ResolvePlainScalar(text).kind != PlainScalarKind::kString) return true;
  // go-yaml's emitter also quotes timestamps (YYYY-...) and base-60 numbers; "<<" is its merge
  // key and "=" YAML 1.1's value key.
  if (text.size() >= 5 && IsDigit(text[0]) && IsDigit(text[1]) && IsDigit(text[2]) &&
      IsDigit(text[3]) && text[4] == '-') {
    return true;
  }
  return IsBase60(text) || text == "<<" || text == "=";
}

bool PlainScalarSyntaxAllowed(std::string_view text) {
  if (text.empty()) return false;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7F) return false;  // tabs and breaks included
  }
  if (text.front() == ' ' || text.back() == ' ') return false;
  if (text.starts_with("---") || text.starts_with("...")) return false;
  static constexpr std::string_view kIndicators = ",[]{}#&*!|>'\"%@`";
  if (kIndicators.find(text.front()) != std::string_view::npos) return false;
  // "-", "?" and ":" start a plain scalar only when a non-space follows ("-c" is fine).
  if ((text.front() == '-' || text.front() == '?' || text.front() == ':') &&
      (text.size() == 1 || text[1] == ' ')) {
    return false;
  }
  if (text.back() == ':') return false;
  if (text.find(": ") != std::string_view::npos || text.find(" #") != std::string_view::npos) {
    return false;
  }
  // Non-ASCII line and page separators and the BOM are breaks or invisible to YAML readers.
  return text.find("\xC2\x85") == std::string_view::npos &&
         text.find("\xE2\x80\xA8") == std::string_view::npos &&
         text.find("\xE2\x80\xA9") == std::string_view::npos &&
         text.find("\xEF\xBB\xBF") == std::string_view::npos;
}

void AppendJsonString(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default: {
        const auto byte = static_cast<unsigned char>(c);
        if (byte < 0x20) {
          out += "\\u00";
          out += kHex[byte >> 4];
          out += kHex[byte & 0xF];
        } else {
          out += c;
        }
      }
    }
  }
  out += '"';
}

}  // namespace internal

namespace {

constexpr std::string_view kCoreTag = "tag:yaml.org,2002:";

// Anchors are replayed by copying the JSON text of the anchored node; this caps what aliases can
// expand to (a "billion laughs" document), relative to the input's size.
constexpr std::size_t kMinExpansionBudget = std::size_t{64} << 20;
constexpr std::size_t kExpansionFactor = 16;

// Splits a decoder field path (".items[3].metadata.labels[app]") into its segments.
std::vector<std::string> SplitPath(std::string_view path) {
  std::vector<std::string> segments;
  std::size_t i = 0;
  while (i < path.size()) {
    if (path[i] == '.') {
      const std::size_t end = path.find_first_of(".[", i + 1);
      segments.emplace_back(path.substr(i + 1, end == std::string_view::npos ? end : end - i - 1));
      i = end == std::string_view::npos ? path.size() : end;
    } else if (path[i] == '[') {
      // A map key may itself contain ']': the segment ends at a ']' followed by '.', '[' or end.
      std::size_t end = path.find(']', i + 1);
      while (end != std::string_view::npos && end + 1 < path.size() && path[end + 1] != '.' &&
             path[end + 1] != '[') {
        end = path.find(']', end + 1);
      }
      if (end == std::string_view::npos) break;
      segments.emplace_back(path.substr(i + 1, end - i - 1));
      i = end + 1;
    } else {
      break;
    }
  }
  return segments;
}

// Builds the JSON text of one YAML document from yaml-cpp's events. Handlers cannot fail, so the
// first error is recorded and every later event of the document is ignored. Optionally finds the
// line of the node at a given path (the error path of a failed decode).
class JsonBuilder final : public YAML::EventHandler {
 public:
  explicit JsonBuilder(std::size_t budget) : budget_(budget) {}

  // Locate mode: remember the line of the node at `target` (segments of SplitPath).
  void SetTarget(std::vector<std::string> target) { target_ = std::move(target); }
  std::optional<int> target_line() const { return target_line_; }

  const std::string& json() const { return out_; }
  bool root_is_null() const { return root_is_null_; }
  const Status& error() const { return error_; }
  std::optional<int> error_line() const { return error_line_; }
  const YAML::Mark& document_mark() const { return document_mark_; }

  void OnDocumentStart(const YAML::Mark& mark) override {
    document_mark_ = mark;
    out_.clear();
    stack_.clear();
    anchors_.clear();
    error_ = Status();
    error_line_.reset();
    root_is_null_ = false;
  }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (!error_.ok()) return;
    const Slot slot = Begin(mark, /*is_alias=*/false);
    if (slot == Slot::kKey) {
      WriteKey("null", anchor);
      return;
    }
    if (slot == Slot::kRoot) root_is_null_ = true;
    const std::size_t start = out_.size();
    out_ += "null";
    Anchor(anchor, start, "null");
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    if (!error_.ok()) return;
    const Slot slot = Begin(mark, /*is_alias=*/false);
    if (slot == Slot::kKey) {
      // go-yaml merges `<<: *base` into the mapping; failing beats silently dropping the fields.
      if (value == "<<" && tag == "?") {
        Fail(BadRequestError("YAML merge keys (<<) are not supported"), mark);
        return;
      }
      WriteKey(value, anchor);  // JSON keys are strings: `80:` and `true:` become "80", "true"
      return;
    }
    const std::size_t start = out_.size();
    Status status = WriteScalar(tag, value);
    if (!status.ok()) {
      Fail(std::move(status), mark);
      return;
    }
    Anchor(anchor, start, value);
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (!error_.ok()) return;
    const auto it = anchors_.find(anchor);
    if (it == anchors_.end() || !it->second.complete) {
      Fail(BadRequestError("alias refers to an unknown or enclosing anchor"), mark);
      return;
    }
    const AnchorText& text = it->second;
    if (Begin(mark, /*is_alias=*/true) == Slot::kKey) {
      if (!text.scalar.has_value()) {
        Fail(BadRequestError("mapping keys must be scalars"), mark);
        return;
      }
      WriteKey(*text.scalar, YAML::NullAnchor);
      return;
    }
    if (out_.size() + (text.end - text.begin) > budget_) {
      Fail(BadRequestError("aliases expand beyond " + std::to_string(budget_) + " bytes"), mark);
      return;
    }
    // Reserving first keeps the source range valid while it is copied onto the end.
    out_.reserve(out_.size() + (text.end - text.begin));
    out_.append(out_, text.begin, text.end - text.begin);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string& /*tag*/, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value /*style*/) override {
    Open(mark, anchor, /*is_map=*/false);
  }
  void OnSequenceEnd() override { Close(']'); }
  void OnMapStart(const YAML::Mark& mark, const std::string& /*tag*/, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value /*style*/) override {
    Open(mark, anchor, /*is_map=*/true);
  }
  void OnMapEnd() override { Close('}'); }

 private:
  enum class Slot { kRoot, kKey, kValue };

  struct Frame {
    bool is_map = false;
    bool expecting_key = true;  // maps: the next node is a key
    std::size_t count = 0;      // entries or items begun so far
    std::size_t start = 0;      // offset of '[' or '{' in out_
    YAML::anchor_t anchor = YAML::NullAnchor;
    std::string key;  // locate mode: the current entry's key
  };

  struct AnchorText {
    std::size_t begin = 0;
    std::size_t end = 0;
    bool complete = false;
    std::optional<std::string> scalar;  // the raw text of a scalar, for use as a key
  };

  void Fail(Status status, const YAML::Mark& mark) {
    error_ = std::move(status);
    if (!mark.is_null()) error_line_ = mark.line + 1;
  }

  // Places the next node: writes the separator and says whether it is a key.
  Slot Begin(const YAML::Mark& mark, bool is_alias) {
    Slot slot = Slot::kRoot;
    if (!stack_.empty()) {
      Frame& top = stack_.back();
      if (top.is_map && top.expecting_key) {
        if (top.count > 0) out_ += ',';
        ++top.count;
        top.expecting_key = false;
        return Slot::kKey;
      }
      if (top.is_map) {
        top.expecting_key = true;
      } else {
        if (top.count > 0) out_ += ',';
        ++top.count;
      }
      slot = Slot::kValue;
    }
    if (!target_.empty() && !target_line_.has_value()) Track(mark, is_alias);
    return slot;
  }

  // Locate mode: is the node being placed the target (or an alias the target lies inside)?
  void Track(const YAML::Mark& mark, bool is_alias) {
    if (stack_.size() > target_.size()) return;
    for (std::size_t i = 0; i < stack_.size(); ++i) {
      const Frame& frame = stack_[i];
      const std::string segment = frame.is_map ? frame.key : std::to_string(frame.count - 1);
      if (segment != target_[i]) return;
    }
    if (stack_.size() == target_.size() || is_alias) target_line_ = mark.line + 1;
  }

  void WriteKey(const std::string& key, YAML::anchor_t anchor) {
    const std::size_t start = out_.size();
    internal::AppendJsonString(out_, key);
    Anchor(anchor, start, key);
    out_ += ':';
    if (!target_.empty()) stack_.back().key = key;
  }

  Status WriteScalar(const std::string& tag, const std::string& value) {
    // "!" marks a quoted or block scalar, "?" a plain one; explicit core tags force a type, and
    // other tags (!!str, !!binary, custom ones) keep the text.
    const bool plain = tag == "?" || tag.empty();
    std::string_view core;
    if (!plain) {
      if (tag.starts_with(kCoreTag)) core = std::string_view(tag).substr(kCoreTag.size());
      if (core != "int" && core != "float" && core != "bool" && core != "null") {
        internal::AppendJsonString(out_, value);
        return Status();
      }
    }
    const internal::PlainScalar scalar = internal::ResolvePlainScalar(value);
    using Kind = internal::PlainScalarKind;
    const bool matches =
        plain || (core == "int" && scalar.kind == Kind::kInt) ||
        (core == "float" && (scalar.kind == Kind::kFloat || scalar.kind == Kind::kInt)) ||
        (core == "bool" && scalar.kind == Kind::kBool) ||
        (core == "null" && scalar.kind == Kind::kNull);
    if (!matches) return BadRequestError("invalid !!" + std::string(core) + " value");
    switch (scalar.kind) {
      case Kind::kNull:
        out_ += "null";
        break;
      case Kind::kBool:
        out_ += scalar.bool_value ? "true" : "false";
        break;
      case Kind::kInt:
        out_ += scalar.number;
        break;
      case Kind::kFloat:
        if (scalar.number.empty()) return BadRequestError(value + " cannot be represented in JSON");
        out_ += scalar.number;
        break;
      case Kind::kString:
        internal::AppendJsonString(out_, value);
        break;
    }
    return Status();
  }

  void Anchor(YAML::anchor_t anchor, std::size_t start, std::string_view scalar) {
    if (anchor == YAML::NullAnchor) return;
    anchors_[anchor] = AnchorText{start, out_.size(), true, std::string(scalar)};
  }

  void Open(const YAML::Mark& mark, YAML::anchor_t anchor, bool is_map) {
    if (!error_.ok()) return;
    if (Begin(mark, /*is_alias=*/false) == Slot::kKey) {
      Fail(BadRequestError("mapping keys must be scalars"), mark);
      return;
    }
    if (stack_.size() >= static_cast<std::size_t>(internal::kMaxNestingDepth)) {
      Fail(BadRequestError("YAML nests deeper than " + std::to_string(internal::kMaxNestingDepth) +
                           " levels"),
           mark);
      return;
    }
    if (anchor != YAML::NullAnchor) anchors_[anchor] = AnchorText{};  // open: aliases refused
    stack_.push_back(Frame{is_map, true, 0, out_.size(), anchor, {}});
    out_ += is_map ? '{' : '[';
  }

  void Close(char bracket) {
    if (!error_.ok() || stack_.empty()) return;
    out_ += bracket;
    const Frame& frame = stack_.back();
    if (frame.anchor != YAML::NullAnchor) {
      anchors_[frame.anchor] = AnchorText{frame.start, out_.size(), true, std::nullopt};
    }
    stack_.pop_back();
  }

  std::size_t budget_;
  YAML::Mark document_mark_;
  std::string out_;
  std::vector<Frame> stack_;
  std::unordered_map<YAML::anchor_t, AnchorText> anchors_;
  Status error_;
  std::optional<int> error_line_;
  bool root_is_null_ = false;
  std::vector<std::string> target_;
  std::optional<int> target_line_;
};

// "pods.yaml: document 2" or "pods.yaml: document 2, line 14" (1-based, as editors count).
std::string Location(std::string_view document_name, int index, std::optional<int> line,
                     std::optional<int> column = std::nullopt) {
  std::string out(document_name);
  if (!out.empty()) out += ": ";
  out += "document ";
  out += std::to_string(index);
  if (line.has_value()) {
    out += ", line ";
    out += std::to_string(*line);
    if (column.has_value()) {
      out += ", column ";
      out += std::to_string(*column);
    }
  }
  return out;
}

// Runs yaml-cpp over `text`, calling on_document(index, builder) after each document (1-based
// index); stops at the first error on_document returns. Every yaml-cpp exception ends here.
template <typename OnDocument>
Status ForEachDocument(std::string_view text, std::string_view document_name, JsonBuilder& builder,
                       OnDocument&& on_document) {
  int index = 0;
  try {
    std::istringstream input{std::string(text)};
    YAML::Parser parser(input);
    int previous_pos = -1;
    while (true) {
      ++index;
      if (!parser.HandleNextDocument(builder)) return Status();
      // yaml-cpp 0.7 reports an endless series of empty documents at the same place for a stray
      // ',' at block level: a document that starts where the last one did is no progress.
      const YAML::Mark& mark = builder.document_mark();
      if (mark.pos == previous_pos) {
        std::string message = "malformed YAML: unexpected ";
        const auto at = static_cast<std::size_t>(mark.pos);
        const auto byte = at < text.size() ? static_cast<unsigned char>(text[at]) : 0;
        if (byte > 0x20 && byte < 0x7F) {
          message += '\'';
          message += static_cast<char>(byte);
          message += '\'';
        } else {
          message += "character";
        }
        Status status = BadRequestError(std::move(message));
        // Named after the first of the repeated documents, the one the user sees.
        status.WithObject(Location(document_name, index - 1, mark.line + 1, mark.column + 1));
        return status;
      }
      previous_pos = mark.pos;
      SW_RETURN_IF_ERROR(on_document(index, builder));
    }
  } catch (const YAML::ParserException& e) {
    std::optional<int> line;
    std::optional<int> column;
    if (!e.mark.is_null()) {
      line = e.mark.line + 1;
      column = e.mark.column + 1;
    }
    // yaml-cpp guards its own recursion with DeepRecursion, a ParserException that says only
    // "bad file".
    const bool too_deep = dynamic_cast<const YAML::DeepRecursion*>(&e) != nullptr;
    Status status = BadRequestError("malformed YAML: " + (too_deep ? "nesting too deep" : e.msg));
    status.WithObject(Location(document_name, index, line, column));
    return status;
  } catch (const std::exception& e) {
    Status status = BadRequestError(std::string("malformed YAML: ") + e.what());
    status.WithObject(Location(document_name, index, std::nullopt));
    return status;
  }
}

// The line of the node at `path` in document `index`, for an error found after conversion.
std::optional<int> FindLine(std::string_view text, int index, std::string_view path,
                            std::size_t budget) {
  JsonBuilder builder(budget);
  if (index == 1) builder.SetTarget(SplitPath(path));
  std::optional<int> line;
  const Status status =
      ForEachDocument(text, {}, builder, [&](int current, JsonBuilder& done) -> Status {
        if (current == index) {
          line = done.target_line();
          return BadRequestError("done");  // stop: nothing after this document matters
        }
        if (current + 1 == index) done.SetTarget(SplitPath(path));
        return Status();
      });
  static_cast<void>(status);
  return line;
}

// Rebuilds a decode error with the YAML location in front of its object:
// "pods.yaml: document 2, line 14: pods/default/web-1".
Status Relocated(const Status& error, std::string_view old_prefix, std::string_view new_prefix) {
  std::string object(new_prefix);
  std::string_view rest = error.object();
  if (rest.starts_with(old_prefix)) rest.remove_prefix(old_prefix.size());
  object += rest;
  Status status(error.code(), std::string(error.message()));
  status.WithObject(object);
  status.WithFieldPrefix(error.field());
  return status;
}

}  // namespace

Result<ObjectSet> DecodeYamlDocuments(std::string_view text, std::string_view document_name) {
  if (!internal::IsValidUtf8(text)) {
    Status status = BadRequestError("malformed YAML: not valid UTF-8");
    if (!document_name.empty()) status.WithObject(document_name);
    return status;
  }
  const std::size_t budget = std::max(kMinExpansionBudget, kExpansionFactor * text.size());
  JsonBuilder builder(budget);
  ObjectSet objects;
  Status status =
      ForEachDocument(text, document_name, builder, [&](int index, JsonBuilder& done) -> Status {
        if (!done.error().ok()) {
          Status error = done.error();
          error.WithObject(Location(document_name, index, done.error_line()));
          return error;
        }
        if (done.json().empty() || done.root_is_null()) return Status();  // empty document
        const std::string name = Location(document_name, index, std::nullopt);
        internal::ErrorSite site;
        Result<ObjectSet> decoded = internal::DecodeJsonWithSite(done.json(), name, &site);
        if (!decoded.ok()) {
          if (site.path.empty()) return decoded.status();
          const std::optional<int> line = FindLine(text, index, site.path, budget);
          if (!line.has_value()) return decoded.status();
          return Relocated(decoded.status(), name, Location(document_name, index, line));
        }
        objects.Append(std::move(decoded).value());
        return Status();
      });
  if (!status.ok()) return status;
  return objects;
}

Result<std::vector<std::string>> YamlToJson(std::string_view text, std::string_view document_name) {
  if (!internal::IsValidUtf8(text)) {
    Status status = BadRequestError("malformed YAML: not valid UTF-8");
    if (!document_name.empty()) status.WithObject(document_name);
    return status;
  }
  JsonBuilder builder(std::max(kMinExpansionBudget, kExpansionFactor * text.size()));
  std::vector<std::string> documents;
  Status status =
      ForEachDocument(text, document_name, builder, [&](int index, JsonBuilder& done) -> Status {
        if (!done.error().ok()) {
          Status error = done.error();
          error.WithObject(Location(document_name, index, done.error_line()));
          return error;
        }
        if (done.json().empty() || done.root_is_null()) return Status();  // empty document
        documents.push_back(done.json());
        return Status();
      });
  if (!status.ok()) return status;
  return documents;
}

}  // namespace slicewright::codec
