// Fields that are almost always unset, each held in one pointer: RareString for text (std::string
// takes 32 bytes even when empty) and OptionalBox<T> for an optional struct. A slice's endpoints
// carry such fields by the hundred thousand, and their size is memory traffic on every reconcile.
#pragma once

#include <compare>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

namespace slicewright::model {

// Text on the heap when set, a null pointer when empty; reads as a std::string_view. Empty text is
// never stored, so there is one representation of "".
class RareString final {
 public:
  RareString() = default;
  // Implicit, like std::string's: fields of this type are set from text of any kind.
  RareString(std::string_view text) { Assign(text); }  // NOLINT(google-explicit-constructor)
  RareString(const std::string& text)                  // NOLINT(google-explicit-constructor)
      : RareString(std::string_view{text}) {}
  RareString(const char* text)  // NOLINT(google-explicit-constructor)
      : RareString(std::string_view{text}) {}
  RareString(const RareString& other) { Assign(other.view()); }
  RareString& operator=(const RareString& other) {
    if (this != &other) Assign(other.view());
    return *this;
  }
  RareString(RareString&&) noexcept = default;
  RareString& operator=(RareString&&) noexcept = default;
  ~RareString() = default;

  RareString& operator=(std::string_view text) {
    Assign(text);
    return *this;
  }
  RareString& operator=(const std::string& text) { return *this = std::string_view{text}; }
  RareString& operator=(const char* text) { return *this = std::string_view{text}; }

  // Never a null data pointer, even when empty: callers may pass it to memcpy and memcmp.
  std::string_view view() const { return text_ ? std::string_view{*text_} : std::string_view{""}; }
  operator std::string_view() const { return view(); }  // NOLINT(google-explicit-constructor)
  std::string str() const { return text_ ? *text_ : std::string(); }
  std::size_t size() const { return text_ ? text_->size() : 0; }
  bool empty() const { return text_ == nullptr; }
  void clear() { text_.reset(); }

  friend bool operator==(const RareString& a, const RareString& b) { return a.view() == b.view(); }
  friend bool operator==(const RareString& a, std::string_view b) { return a.view() == b; }
  friend bool operator==(const RareString& a, const std::string& b) { return a.view() == b; }
  friend bool operator==(const RareString& a, const char* b) {
    return a.view() == std::string_view{b};
  }
  friend std::strong_ordering operator<=>(const RareString& a, const RareString& b) {
    return a.view() <=> b.view();
  }
  friend std::strong_ordering operator<=>(const RareString& a, std::string_view b) {
    return a.view() <=> b;
  }
  friend std::ostream& operator<<(std::ostream& os, const RareString& text) {
    return os << text.view();
  }

 private:
  void Assign(std::string_view text) {
    if (text.empty()) {
      text_.reset();
    } else if (text_) {
      text_->assign(text);  // `text` may be a view of *text_: assign handles the overlap
    } else {
      text_ = std::make_unique<std::string>(text);
    }
  }

  std::unique_ptr<std::string> text_;
};

inline std::string operator+(const std::string& a, const RareString& b) {
  std::string out = a;
  out += b.view();
  return out;
}

// An optional T on the heap: one pointer wide where std::optional<T> is sizeof(T) plus a flag.
// Has std::optional's interface as far as the model's users need it, and copies deeply; two boxes
// are equal when both are empty or both hold equal values.
template <typename T>
class OptionalBox final {
 public:
  OptionalBox() = default;
  OptionalBox(std::nullopt_t) {}  // NOLINT(google-explicit-constructor)
  OptionalBox(const T& value) : value_(std::make_unique<T>(value)) {}        // NOLINT
  OptionalBox(T&& value) : value_(std::make_unique<T>(std::move(value))) {}  // NOLINT
  OptionalBox(const OptionalBox& other)
      : value_(other.value_ ? std::make_unique<T>(*other.value_) : nullptr) {}
  OptionalBox& operator=(const OptionalBox& other) {
    if (this != &other) {
      if (!other.value_) {
        value_.reset();
      } else if (value_) {
        *value_ = *other.value_;
      } else {
        value_ = std::make_unique<T>(*other.value_);
      }
    }
    return *this;
  }
  OptionalBox(OptionalBox&&) noexcept = default;
  OptionalBox& operator=(OptionalBox&&) noexcept = default;
  ~OptionalBox() = default;

  OptionalBox& operator=(std::nullopt_t) {
    value_.reset();
    return *this;
  }
  OptionalBox& operator=(const T& value) {
    if (value_) {
      *value_ = value;
    } else {
      value_ = std::make_unique<T>(value);
    }
    return *this;
  }
  OptionalBox& operator=(T&& value) {
    if (value_) {
      *value_ = std::move(value);
    } else {
      value_ = std::make_unique<T>(std::move(value));
    }
    return *this;
  }

  bool has_value() const { return value_ != nullptr; }
  explicit operator bool() const { return has_value(); }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }
  T* operator->() { return value_.get(); }
  const T* operator->() const { return value_.get(); }
  template <typename... Args>
  T& emplace(Args&&... args) {
    value_ = std::make_unique<T>(std::forward<Args>(args)...);
    return *value_;
  }
  void reset() { value_.reset(); }

  friend bool operator==(const OptionalBox& a, const OptionalBox& b) {
    if (!a.value_ || !b.value_) return a.value_ == b.value_;
    return *a.value_ == *b.value_;
  }
  friend bool operator==(const OptionalBox& a, std::nullopt_t) { return !a.value_; }
  // As std::optional's: a value compares equal only to a box holding an equal value.
  friend bool operator==(const OptionalBox& a, const T& b) {
    return a.value_ != nullptr && *a.value_ == b;
  }

 private:
  std::unique_ptr<T> value_;
};

}  // namespace slicewright::model
