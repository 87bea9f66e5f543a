// Label selectors as k8s.io/apimachinery/pkg/labels has them: parsing the string syntax
// ("a=b,c!=d,e in (x,y),!f"), converting metav1.LabelSelector and Service selectors, matching label
// sets, and upstream's canonical String(). Immutable values once built: thread-safe to share.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "slicewright/base/result.h"
#include "slicewright/model/meta.h"

namespace slicewright::labels {

// selection.Operator.
enum class Operator {
  kIn,            // "in"
  kNotIn,         // "notin"
  kEquals,        // "="
  kDoubleEquals,  // "=="
  kNotEquals,     // "!="
  kExists,        // "exists": the key alone
  kDoesNotExist,  // "!": "!key"
  kGreaterThan,   // "gt": "key>1", an integer comparison
  kLessThan,      // "lt": "key<1"
};

// The selection.Operator string ("in", "notin", "=", "==", "!=", "exists", "!", "gt", "lt").
std::string_view OperatorName(Operator op);

// One key-operator-values term of a selector. Built only by Create (or a Selector factory), so its
// invariants (valid key and values, value count right for the operator) always hold.
class Requirement final {
 public:
  // labels.NewRequirement. Fails with kInvalid and upstream's aggregated field errors when the key
  // is not a qualified name, a value is not a label value, In/NotIn have no values, =/==/!= have
  // other than one, Exists/DoesNotExist have any, or Gt/Lt lack exactly one integer value, e.g.
  // `values[0][tier]: Invalid value: "-x": a valid label must be ...`. The empty string is a valid
  // value. Values keep their order (String() sorts a copy).
  static Result<Requirement> Create(std::string key, Operator op, std::vector<std::string> values);

  const std::string& key() const { return key_; }
  Operator op() const { return op_; }
  const std::vector<std::string>& values() const { return values_; }

  // In/=/== need the key with one of the values; NotIn/!= match a missing key or another value;
  // Exists/DoesNotExist test presence; Gt/Lt need the key with a value that parses as an int64 and
  // compares strictly. Allocates nothing.
  bool Matches(const model::StringMap& labels) const;
  // The same test given the value of key() in the label set (nullopt: the key is absent).
  bool MatchesValue(std::optional<std::string_view> label) const;

  // "key in (a,b)", "key!=v", "!key", "key>3": values sorted, operators spelt as in the syntax.
  std::string String() const;

  friend bool operator==(const Requirement& a, const Requirement& b) {
    return a.key_ == b.key_ && a.op_ == b.op_ && a.values_ == b.values_;
  }

 private:
  friend class Selector;
  Requirement(std::string key, Operator op, std::vector<std::string> values)
      : key_(std::move(key)), op_(op), values_(std::move(values)) {}

  bool HasValue(std::string_view value) const;

  std::string key_;
  Operator op_ = Operator::kExists;
  std::vector<std::string> values_;
  std::int64_t bound_ = 0;  // the parsed value of a Gt/Lt requirement
};

// An AND of requirements, kept sorted by key (stable for equal keys), or the special Nothing().
class Selector final {
 public:
  // The selector that matches every label set (also what a default-constructed one is).
  Selector() = default;

  // labels.Parse. Whitespace (space, tab, CR, LF) separates tokens; an empty string selects
  // everything. Errors are kBadRequest with upstream's text, e.g. "unable to parse requirement:
  // found '(', expected: in, notin, =, ==, !=, gt, lt" or "found ',', expected: identifier after
  // ','". Keys and values are validated as upstream does; a NUL byte ends the input there, as in
  // upstream's lexer.
  static Result<Selector> Parse(std::string_view text);

  // labels.Everything(): matches all, Empty() is true, String() is "".
  static Selector Everything() { return {}; }
  // labels.Nothing(): matches none, Empty() is false, String() is "".
  static Selector Nothing();

  // labels.SelectorFromSet / SelectorFromValidatedSet: key=value for each entry, not validated
  // (the API server validated the object). An empty map selects everything; the EndpointSlice
  // controller skips Services without a selector before it gets here.
  static Selector FromMap(const model::StringMap& set);

  // metav1.LabelSelectorAsSelector: matchLabels as =, matchExpressions as In/NotIn/Exists/
  // DoesNotExist. An empty LabelSelector selects everything. Fails with kInvalid for an unknown
  // operator (`"Gt" is not a valid label selector operator`) or for Requirement::Create's errors.
  static Result<Selector> FromLabelSelector(const model::LabelSelector& selector);

  // NewSelector().Add(requirements...): sorted by key.
  static Selector FromRequirements(std::vector<Requirement> requirements);

  // Returns a copy with `requirement` added (Nothing stays Nothing).
  Selector Add(Requirement requirement) const;

  // True if every requirement matches. Allocates nothing; this runs per pod per Service.
  bool Matches(const model::StringMap& labels) const;
  // The same for a label set not held in a StringMap: `lookup(key)` gives the value of a label as
  // a std::optional<std::string_view>, nullopt when the set lacks it.
  template <typename Lookup>
  bool MatchesLookup(const Lookup& lookup) const {
    return !nothing_ && std::ranges::all_of(requirements_, [&lookup](const Requirement& r) {
      return r.MatchesValue(lookup(r.key()));
    });
  }

  // True if the selector does not restrict the selection (Everything); false for Nothing.
  bool Empty() const { return !nothing_ && requirements_.empty(); }
  // True only for Nothing() (upstream's labels.MatchesNothing).
  bool MatchesNothing() const { return nothing_; }

  // Upstream's canonical form: requirements in key order joined by ',', values sorted:
  // "a=b,c!=d,e in (x,y),!f". "" for Everything and Nothing.
  std::string String() const;

  std::span<const Requirement> requirements() const { return requirements_; }

  // If the selector requires `key` to equal one value (=, == or a single-valued in, judged by the
  // first requirement on that key), that value; else nullopt. The view lives as long as *this.
  std::optional<std::string_view> RequiresExactMatch(std::string_view key) const;

  friend bool operator==(const Selector&, const Selector&) = default;

 private:
  std::vector<Requirement> requirements_;
  bool nothing_ = false;
};

// The Service-selector fast path (labels.ValidatedSetSelector.Matches): true if `labels` has every
// key of `selector` with the same value. An empty selector matches everything.
bool SelectorMatchesMap(const model::StringMap& selector, const model::StringMap& labels);

}  // namespace slicewright::labels
