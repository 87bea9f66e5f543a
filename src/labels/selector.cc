#include "slicewright/labels/selector.h"

#include <algorithm>
#include <array>

#include "slicewright/labels/validation.h"

#include "labels/go_format.h"

namespace slicewright::labels {
namespace {

using internal::GoQuote;
using internal::GoStringSlice;

// ---------------------------------------------------------------------------------------------
// Upstream's error rendering: field.Error.Error() is "<path>: Invalid value: <value>: <detail>",
// and an ErrorList aggregates as the one message, or "[m1, m2]" with duplicates dropped.

std::string FieldInvalid(std::string_view path, std::string_view rendered_value,
                         std::string_view detail) {
  std::string out(path);
  out += ": Invalid value: ";
  out += rendered_value;
  if (!detail.empty()) {
    out += ": ";
    out += detail;
  }
  return out;
}

std::string Join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    if (k > 0) {
      out += separator;
    }
    out += parts[k];
  }
  return out;
}

std::string Aggregate(const std::vector<std::string>& errors) {
  std::vector<std::string> unique;
  for (const std::string& error : errors) {
    if (std::find(unique.begin(), unique.end(), error) == unique.end()) {
      unique.push_back(error);
    }
  }
  if (unique.size() == 1) {
    return unique.front();
  }
  return "[" + Join(unique, ", ") + "]";
}

// validateLabelKey: the qualified-name errors joined by "; " as one field error at `path`.
std::optional<std::string> LabelKeyError(std::string_view key, std::string_view path) {
  if (IsQualifiedNameValid(key)) {
    return std::nullopt;
  }
  return FieldInvalid(path, GoQuote(key), Join(IsQualifiedName(key), "; "));
}

// The value of `key` in `labels`, nullopt when absent.
std::optional<std::string_view> LabelValue(const model::StringMap& labels, std::string_view key) {
  const auto it = labels.find(key);
  return it == labels.end() ? std::nullopt : std::optional<std::string_view>(it->second);
}

// strconv.ParseInt(text, 10, 64): an optional sign, then decimal digits, within int64.
bool ParseInt64(std::string_view text, std::int64_t& out) {
  bool negative = false;
  if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  if (text.empty()) {
    return false;
  }
  // Accumulate as a negative number so INT64_MIN fits.
  constexpr std::int64_t kMin = INT64_MIN;
  std::int64_t value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') {
      return false;
    }
    const int digit = c - '0';
    if (value < (kMin + digit) / 10) {
      return false;
    }
    value = value * 10 - digit;
  }
  if (!negative) {
    if (value == kMin) {
      return false;
    }
    value = -value;
  }
  out = value;
  return true;
}

// ---------------------------------------------------------------------------------------------
// Lexer: upstream's token set and scanning rules.

enum class Token {
  kError,
  kEndOfString,
  kClosedPar,
  kComma,
  kDoesNotExist,
  kDoubleEquals,
  kEquals,
  kGreaterThan,
  kIdentifier,
  kIn,
  kLessThan,
  kNotEquals,
  kNotIn,
  kOpenPar,
};

struct Item {
  Token token = Token::kError;
  std::string_view literal;  // a view into the parsed text
};

bool IsWhitespace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

bool IsSpecialSymbol(char c) {
  switch (c) {
    case '=':
    case '!':
    case '(':
    case ')':
    case ',':
    case '>':
    case '<':
      return true;
    default:
      return false;
  }
}

// The tokens a run of special symbols can spell.
std::optional<Token> SymbolToken(std::string_view text) {
  struct Symbol {
    std::string_view text;
    Token token;
  };
  static constexpr std::array<Symbol, 9> kSymbols = {{
      {")", Token::kClosedPar},
      {",", Token::kComma},
      {"!", Token::kDoesNotExist},
      {"==", Token::kDoubleEquals},
      {"=", Token::kEquals},
      {">", Token::kGreaterThan},
      {"<", Token::kLessThan},
      {"!=", Token::kNotEquals},
      {"(", Token::kOpenPar},
  }};
  for (const Symbol& symbol : kSymbols) {
    if (symbol.text == text) {
      return symbol.token;
    }
  }
  return std::nullopt;
}

class Lexer final {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  Item Lex() {
    const char c = SkipWhitespace(Read());
    if (c == '\0') {
      return {Token::kEndOfString, {}};
    }
    Unread();
    return IsSpecialSymbol(c) ? ScanSpecialSymbol() : ScanIdOrKeyword();
  }

 private:
  // Upstream reads bytes and uses 0 for "end": an embedded NUL is consumed and reads as the end
  // too. Kept so that odd inputs split into the same tokens.
  char Read() { return pos_ < text_.size() ? text_[pos_++] : '\0'; }
  // Only ever called after a Read that returned a non-NUL byte.
  void Unread() { --pos_; }

  char SkipWhitespace(char c) {
    while (IsWhitespace(c)) {
      c = Read();
    }
    return c;
  }

  // Everything up to a special symbol, whitespace or the end is one identifier, unless it spells
  // "in" or "notin".
  Item ScanIdOrKeyword() {
    const std::size_t start = pos_;
    std::size_t length = 0;
    for (;;) {
      const char c = Read();
      if (c == '\0') {
        break;
      }
      if (IsSpecialSymbol(c) || IsWhitespace(c)) {
        Unread();
        break;
      }
      ++length;
    }
    const std::string_view literal = text_.substr(start, length);
    if (literal == "in") {
      return {Token::kIn, literal};
    }
    if (literal == "notin") {
      return {Token::kNotIn, literal};
    }
    return {Token::kIdentifier, literal};
  }

  // The longest run of special symbols that spells a token ("!=" rather than "!").
  Item ScanSpecialSymbol() {
    const std::size_t start = pos_;
    std::size_t length = 0;
    Item last;  // kError until a prefix spells a token
    for (;;) {
      const char c = Read();
      if (c == '\0') {
        break;
      }
      if (!IsSpecialSymbol(c)) {
        Unread();
        break;
      }
      ++length;
      const std::string_view buffer = text_.substr(start, length);
      if (std::optional<Token> token = SymbolToken(buffer)) {
        last = {*token, buffer};
      } else if (last.token != Token::kError) {
        Unread();
        break;
      }
    }
    if (last.token == Token::kError) {
      // Unreachable with today's symbol table (each special symbol alone is a token), but kept
      // like upstream: the literal is the run that failed to spell one.
      return {Token::kError, text_.substr(start, length)};
    }
    return last;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Parser: upstream's recursive descent over the scanned items, with its messages.

// "in" and "notin" are operators after a key but plain identifiers where values are expected
// ("a in (in)").
enum class Context { kKeyAndOperator, kValues };

std::string ItemText(const Item& item) {
  if (item.token == Token::kError) {
    return "error expected: keyword found '" + std::string(item.literal) + "'";
  }
  return std::string(item.literal);
}

std::string Found(const Item& item, std::string_view expected) {
  return "found '" + ItemText(item) + "', expected: " + std::string(expected);
}

// Parse errors are bare strings until Parse wraps them in a Status.
struct ParseError {
  std::string message;
};

class Parser final {
 public:
  explicit Parser(std::string_view text) {
    Lexer lexer(text);
    for (;;) {
      const Item item = lexer.Lex();
      items_.push_back(item);
      if (item.token == Token::kEndOfString) {
        break;
      }
    }
  }

  // Fills `out` with the requirements in input order, or returns the error.
  std::optional<ParseError> Parse(std::vector<Requirement>& out) {
    for (;;) {
      const Item item = Lookahead(Context::kValues);
      switch (item.token) {
        case Token::kIdentifier:
        case Token::kDoesNotExist: {
          Result<Requirement> requirement = ParseRequirement();
          if (!requirement.ok()) {
            return ParseError{"unable to parse requirement: " +
                              std::string(requirement.status().message())};
          }
          out.push_back(std::move(requirement).value());
          const Item next = Consume(Context::kValues);
          if (next.token == Token::kEndOfString) {
            return std::nullopt;
          }
          if (next.token != Token::kComma) {
            return ParseError{Found(next, "',' or 'end of string'")};
          }
          const Item after = Lookahead(Context::kValues);
          if (after.token != Token::kIdentifier && after.token != Token::kDoesNotExist) {
            return ParseError{Found(after, "identifier after ','")};
          }
          break;
        }
        case Token::kEndOfString:
          return std::nullopt;
        default:
          return ParseError{Found(item, "!, identifier, or 'end of string'")};
      }
    }
  }

 private:
  static Item InContext(Item item, Context context) {
    if (context == Context::kValues && (item.token == Token::kIn || item.token == Token::kNotIn)) {
      item.token = Token::kIdentifier;
    }
    return item;
  }

  // The item list always ends with kEndOfString and every path stops once it consumes that, so
  // position_ stays in range; the clamp only guards against a future grammar slip.
  Item Lookahead(Context context) const {
    return InContext(items_[std::min(position_, items_.size() - 1)], context);
  }
  Item Consume(Context context) {
    const Item item = Lookahead(context);
    ++position_;
    return item;
  }

  // Errors here carry the bare upstream message; Parse prefixes "unable to parse requirement: ".
  Result<Requirement> ParseRequirement() {
    std::string_view key;
    std::optional<Operator> op;
    if (std::optional<ParseError> error = ParseKeyAndInferOperator(key, op)) {
      return BadRequestError(std::move(error->message));
    }
    if (op == Operator::kExists || op == Operator::kDoesNotExist) {
      return Requirement::Create(std::string(key), *op, {});
    }
    const Item item = Consume(Context::kKeyAndOperator);
    switch (item.token) {
      case Token::kIn:
        op = Operator::kIn;
        break;
      case Token::kNotIn:
        op = Operator::kNotIn;
        break;
      case Token::kEquals:
        op = Operator::kEquals;
        break;
      case Token::kDoubleEquals:
        op = Operator::kDoubleEquals;
        break;
      case Token::kNotEquals:
        op = Operator::kNotEquals;
        break;
      case Token::kGreaterThan:
        op = Operator::kGreaterThan;
        break;
      case Token::kLessThan:
        op = Operator::kLessThan;
        break;
      default:
        return BadRequestError(Found(item, "in, notin, =, ==, !=, gt, lt"));
    }
    std::vector<std::string> values;
    std::optional<ParseError> error = (op == Operator::kIn || op == Operator::kNotIn)
                                          ? ParseValues(values)
                                          : ParseExactValue(values);
    if (error) {
      return BadRequestError(std::move(error->message));
    }
    // sets.String.List(): sorted, duplicates dropped.
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    return Requirement::Create(std::string(key), *op, std::move(values));
  }

  // "[!] KEY", inferring Exists when a ',' or the end follows the key.
  std::optional<ParseError> ParseKeyAndInferOperator(std::string_view& key,
                                                     std::optional<Operator>& op) {
    Item item = Consume(Context::kValues);
    if (item.token == Token::kDoesNotExist) {
      op = Operator::kDoesNotExist;
      item = Consume(Context::kValues);
    }
    if (item.token != Token::kIdentifier) {
      return ParseError{Found(item, "identifier")};
    }
    // The parser's own key check runs with a nil field path, which Go prints as "<nil>".
    if (std::optional<std::string> error = LabelKeyError(item.literal, "<nil>")) {
      return ParseError{std::move(*error)};
    }
    key = item.literal;
    const Token next = Lookahead(Context::kValues).token;
    if ((next == Token::kEndOfString || next == Token::kComma) && op != Operator::kDoesNotExist) {
      op = Operator::kExists;
    }
    return std::nullopt;
  }

  // "(" VALUES ")". "()" is the one empty value.
  std::optional<ParseError> ParseValues(std::vector<std::string>& values) {
    const Item open = Consume(Context::kValues);
    if (open.token != Token::kOpenPar) {
      // Upstream's message has no colon after "found '...'" here.
      return ParseError{"found '" + ItemText(open) + "' expected: '('"};
    }
    const Item item = Lookahead(Context::kValues);
    switch (item.token) {
      case Token::kIdentifier:
      case Token::kComma: {
        if (std::optional<ParseError> error = ParseIdentifiersList(values)) {
          return error;
        }
        // ParseIdentifiersList returns only with ')' next, so this always holds; upstream's
        // message would name the item seen before the list.
        if (Consume(Context::kValues).token != Token::kClosedPar) {
          return ParseError{Found(item, "')'")};
        }
        return std::nullopt;
      }
      case Token::kClosedPar:
        Consume(Context::kValues);
        values.emplace_back();
        return std::nullopt;
      default:
        return ParseError{Found(item, "',', ')' or identifier")};
    }
  }

  // Comma-separated, possibly empty identifiers: "(a,,b)", "(,a)" and "(a,)" all hold "".
  std::optional<ParseError> ParseIdentifiersList(std::vector<std::string>& values) {
    for (;;) {
      const Item item = Consume(Context::kValues);
      switch (item.token) {
        case Token::kIdentifier: {
          values.emplace_back(item.literal);
          const Item next = Lookahead(Context::kValues);
          if (next.token == Token::kComma) {
            continue;
          }
          if (next.token == Token::kClosedPar) {
            return std::nullopt;
          }
          return ParseError{Found(next, "',' or ')'")};
        }
        case Token::kComma: {
          if (values.empty()) {
            values.emplace_back();  // "(,"
          }
          const Token next = Lookahead(Context::kValues).token;
          if (next == Token::kClosedPar) {
            values.emplace_back();  // ",)"
            return std::nullopt;
          }
          if (next == Token::kComma) {
            values.emplace_back();  // ",,"
          }
          continue;
        }
        default:
          return ParseError{Found(item, "',', or identifier")};
      }
    }
  }

  // The one value after =, ==, !=, > or <; nothing before ',' or the end is "".
  std::optional<ParseError> ParseExactValue(std::vector<std::string>& values) {
    const Token next = Lookahead(Context::kValues).token;
    if (next == Token::kEndOfString || next == Token::kComma) {
      values.emplace_back();
      return std::nullopt;
    }
    const Item item = Consume(Context::kValues);
    if (item.token != Token::kIdentifier) {
      return ParseError{Found(item, "identifier")};
    }
    values.emplace_back(item.literal);
    return std::nullopt;
  }

  std::vector<Item> items_;
  std::size_t position_ = 0;
};

void SortByKey(std::vector<Requirement>& requirements) {
  std::stable_sort(requirements.begin(), requirements.end(),
                   [](const Requirement& a, const Requirement& b) { return a.key() < b.key(); });
}

}  // namespace

std::string_view OperatorName(Operator op) {
  switch (op) {
    case Operator::kIn:
      return "in";
    case Operator::kNotIn:
      return "notin";
    case Operator::kEquals:
      return "=";
    case Operator::kDoubleEquals:
      return "==";
    case Operator::kNotEquals:
      return "!=";
    case Operator::kExists:
      return "exists";
    case Operator::kDoesNotExist:
      return "!";
    case Operator::kGreaterThan:
      return "gt";
    case Operator::kLessThan:
      return "lt";
  }
  return "";
}

// ---------------------------------------------------------------------------------------------
// Requirement

Result<Requirement> Requirement::Create(std::string key, Operator op,
                                        std::vector<std::string> values) {
  // NewRequirement collects every problem, in this order, before failing.
  std::vector<std::string> errors;
  if (std::optional<std::string> error = LabelKeyError(key, "key")) {
    errors.push_back(std::move(*error));
  }
  std::int64_t bound = 0;
  switch (op) {
    case Operator::kIn:
    case Operator::kNotIn:
      if (values.empty()) {
        errors.push_back(FieldInvalid("values", GoStringSlice(values),
                                      "for 'in', 'notin' operators, values set can't be empty"));
      }
      break;
    case Operator::kEquals:
    case Operator::kDoubleEquals:
    case Operator::kNotEquals:
      if (values.size() != 1) {
        errors.push_back(FieldInvalid("values", GoStringSlice(values),
                                      "exact-match compatibility requires one single value"));
      }
      break;
    case Operator::kExists:
    case Operator::kDoesNotExist:
      if (!values.empty()) {
        errors.push_back(FieldInvalid("values", GoStringSlice(values),
                                      "values set must be empty for exists and does not exist"));
      }
      break;
    case Operator::kGreaterThan:
    case Operator::kLessThan:
      if (values.size() != 1) {
        errors.push_back(FieldInvalid("values", GoStringSlice(values),
                                      "for 'Gt', 'Lt' operators, exactly one value is required"));
      }
      for (std::size_t k = 0; k < values.size(); ++k) {
        if (!ParseInt64(values[k], bound)) {
          errors.push_back(FieldInvalid("values[" + std::to_string(k) + "]", GoQuote(values[k]),
                                        "for 'Gt', 'Lt' operators, the value must be an integer"));
        }
      }
      break;
  }
  for (std::size_t k = 0; k < values.size(); ++k) {
    if (!IsLabelValueValid(values[k])) {
      errors.push_back(FieldInvalid("values[" + std::to_string(k) + "][" + key + "]",
                                    GoQuote(values[k]), Join(IsValidLabelValue(values[k]), "; ")));
    }
  }
  if (!errors.empty()) {
    return InvalidError(Aggregate(errors));
  }
  Requirement requirement(std::move(key), op, std::move(values));
  requirement.bound_ = bound;
  return requirement;
}

bool Requirement::HasValue(std::string_view value) const {
  return std::find(values_.begin(), values_.end(), value) != values_.end();
}

bool Requirement::Matches(const model::StringMap& labels) const {
  return MatchesValue(LabelValue(labels, key_));
}

bool Requirement::MatchesValue(std::optional<std::string_view> label) const {
  const bool present = label.has_value();
  switch (op_) {
    case Operator::kIn:
    case Operator::kEquals:
    case Operator::kDoubleEquals:
      return present && HasValue(*label);
    case Operator::kNotIn:
    case Operator::kNotEquals:
      return !present || !HasValue(*label);
    case Operator::kExists:
      return present;
    case Operator::kDoesNotExist:
      return !present;
    case Operator::kGreaterThan:
    case Operator::kLessThan: {
      std::int64_t value = 0;
      if (!present || !ParseInt64(*label, value)) {
        return false;  // upstream logs at V(10) and does not match
      }
      return op_ == Operator::kGreaterThan ? value > bound_ : value < bound_;
    }
  }
  return false;
}

std::string Requirement::String() const {
  std::string out;
  if (op_ == Operator::kDoesNotExist) {
    out += '!';
  }
  out += key_;
  switch (op_) {
    case Operator::kExists:
    case Operator::kDoesNotExist:
      return out;
    case Operator::kIn:
      out += " in (";
      break;
    case Operator::kNotIn:
      out += " notin (";
      break;
    case Operator::kEquals:
      out += '=';
      break;
    case Operator::kDoubleEquals:
      out += "==";
      break;
    case Operator::kNotEquals:
      out += "!=";
      break;
    case Operator::kGreaterThan:
      out += '>';
      break;
    case Operator::kLessThan:
      out += '<';
      break;
  }
  if (values_.size() == 1) {
    out += values_.front();
  } else {
    // Sort a copy: the selector itself stays as built.
    std::vector<std::string> sorted = values_;
    std::sort(sorted.begin(), sorted.end());
    out += Join(sorted, ",");
  }
  if (op_ == Operator::kIn || op_ == Operator::kNotIn) {
    out += ')';
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Selector

Result<Selector> Selector::Parse(std::string_view text) {
  std::vector<Requirement> requirements;
  if (std::optional<ParseError> error = Parser(text).Parse(requirements)) {
    return BadRequestError(std::move(error->message));
  }
  return FromRequirements(std::move(requirements));
}

Selector Selector::Nothing() {
  Selector selector;
  selector.nothing_ = true;
  return selector;
}

Selector Selector::FromMap(const model::StringMap& set) {
  Selector selector;
  selector.requirements_.reserve(set.size());
  for (const auto& [key, value] : set) {
    // Already in key order: the map is sorted.
    selector.requirements_.push_back(Requirement(key, Operator::kEquals, {value}));
  }
  return selector;
}

Result<Selector> Selector::FromLabelSelector(const model::LabelSelector& selector) {
  if (selector.match_labels.empty() && selector.match_expressions.empty()) {
    return Everything();
  }
  std::vector<Requirement> requirements;
  requirements.reserve(selector.match_labels.size() + selector.match_expressions.size());
  // Go walks matchLabels in random map order; ours is key order, so the first error reported for
  // several bad labels is deterministic.
  for (const auto& [key, value] : selector.match_labels) {
    SW_ASSIGN_OR_RETURN(Requirement requirement,
                        Requirement::Create(key, Operator::kEquals, {value}));
    requirements.push_back(std::move(requirement));
  }
  for (const model::LabelSelectorRequirement& expression : selector.match_expressions) {
    Operator op = Operator::kIn;
    if (expression.operator_ == "In") {
      op = Operator::kIn;
    } else if (expression.operator_ == "NotIn") {
      op = Operator::kNotIn;
    } else if (expression.operator_ == "Exists") {
      op = Operator::kExists;
    } else if (expression.operator_ == "DoesNotExist") {
      op = Operator::kDoesNotExist;
    } else {
      return InvalidError(GoQuote(expression.operator_) +
                          " is not a valid label selector operator");
    }
    SW_ASSIGN_OR_RETURN(Requirement requirement,
                        Requirement::Create(expression.key, op, expression.values));
    requirements.push_back(std::move(requirement));
  }
  return FromRequirements(std::move(requirements));
}

Selector Selector::FromRequirements(std::vector<Requirement> requirements) {
  Selector selector;
  selector.requirements_ = std::move(requirements);
  SortByKey(selector.requirements_);
  return selector;
}

Selector Selector::Add(Requirement requirement) const {
  if (nothing_) {
    return *this;
  }
  Selector selector = *this;
  selector.requirements_.push_back(std::move(requirement));
  SortByKey(selector.requirements_);
  return selector;
}

bool Selector::Matches(const model::StringMap& labels) const {
  return MatchesLookup([&labels](std::string_view key) { return LabelValue(labels, key); });
}

std::string Selector::String() const {
  std::string out;
  for (std::size_t k = 0; k < requirements_.size(); ++k) {
    if (k > 0) {
      out += ',';
    }
    out += requirements_[k].String();
  }
  return out;
}

std::optional<std::string_view> Selector::RequiresExactMatch(std::string_view key) const {
  for (const Requirement& requirement : requirements_) {
    if (requirement.key() != key) {
      continue;
    }
    const Operator op = requirement.op();
    if ((op == Operator::kEquals || op == Operator::kDoubleEquals || op == Operator::kIn) &&
        requirement.values().size() == 1) {
      return requirement.values().front();
    }
    return std::nullopt;
  }
  return std::nullopt;
}

bool SelectorMatchesMap(const model::StringMap& selector, const model::StringMap& labels) {
  return std::ranges::all_of(selector, [&labels](const auto& entry) {
    const auto it = labels.find(entry.first);
    return it != labels.end() && it->second == entry.second;
  });
}

}  // namespace slicewright::labels
