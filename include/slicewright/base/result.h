// Result<T> holds either a value or a non-OK Status (StatusOr in Abseil, std::expected in C++23).
// Value type with the thread-safety of T.
#pragma once

#include <cstdlib>
#include <type_traits>
#include <utility>
#include <variant>

#include "slicewright/base/status.h"

namespace slicewright {

template <typename T>
class [[nodiscard]] Result final {
  static_assert(!std::is_same_v<T, Status>, "Result<Status> is meaningless");

 public:
  // Implicit on purpose, as with absl::StatusOr: `return value;` and `return status;` both work.
  Result(const T& value) : data_(value) {}                   // NOLINT(google-explicit-constructor)
  Result(T&& value) : data_(std::move(value)) {}             // NOLINT(google-explicit-constructor)
  Result(const Status& status) : data_(status) { Check(); }  // NOLINT(google-explicit-constructor)
  Result(Status&& status) : data_(std::move(status)) {       // NOLINT(google-explicit-constructor)
    Check();
  }
  // Converting construction from anything T can be made of. The constraint excludes T, Status
  // and Result<T>, so this never hides the copy and move constructors.
  // NOLINTBEGIN(bugprone-forwarding-reference-overload,google-explicit-constructor)
  template <typename U>
  requires(std::is_constructible_v<T, U&&> && !std::is_same_v<std::decay_t<U>, T> &&
           !std::is_same_v<std::decay_t<U>, Status> && !std::is_same_v<std::decay_t<U>, Result<T>>)
      Result(U&& value)
      : data_(T(std::forward<U>(value))) {}
  // NOLINTEND(bugprone-forwarding-reference-overload,google-explicit-constructor)

  bool ok() const { return data_.index() == 0; }

  // The error; an OK Status when a value is held.
  Status status() const { return ok() ? Status() : std::get<1>(data_); }

  // Accessors require ok(); calling them on an error aborts (a programming error, not bad input).
  const T& value() const& { return std::get<0>(CheckedData()); }
  T& value() & { return std::get<0>(CheckedData()); }
  T&& value() && { return std::get<0>(std::move(CheckedData())); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

  template <typename U>
  T value_or(U&& fallback) const& {
    return ok() ? std::get<0>(data_) : static_cast<T>(std::forward<U>(fallback));
  }

 private:
  void Check() const {
    if (std::get<1>(data_).ok()) std::abort();  // a Result must not hold an OK Status
  }
  const std::variant<T, Status>& CheckedData() const {
    if (!ok()) std::abort();
    return data_;
  }
  std::variant<T, Status>& CheckedData() {
    if (!ok()) std::abort();
    return data_;
  }

  std::variant<T, Status> data_;
};

}  // namespace slicewright

// SW_ASSIGN_OR_RETURN(auto x, Foo()); declares x from the value or returns the error.
#define SW_ASSIGN_OR_RETURN(lhs, expr) \
  SW_ASSIGN_OR_RETURN_IMPL(SW_STATUS_CONCAT(sw_result_, __LINE__), lhs, expr)
// `lhs` is a declaration ("auto x"), so it cannot be parenthesised.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define SW_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = std::move(tmp).value()
// NOLINTEND(bugprone-macro-parentheses)
