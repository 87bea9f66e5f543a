// InlineString: text kept inside the object up to 40 characters, enough for the 36-character UIDs
// API servers generate, so copying a UID allocates nothing (std::string keeps 15). Longer text goes
// to the heap. A 48-byte value type that reads as a std::string_view.
#pragma once

#include <array>
#include <compare>
#include <cstddef>
#include <cstring>
#include <ostream>
#include <string>
#include <string_view>

namespace slicewright::model {

class InlineString final {
 public:
  static constexpr std::size_t kInlineCapacity = 40;

  InlineString() = default;
  // Implicit, like std::string's: fields of this type are set from text of any kind.
  InlineString(std::string_view text) { Init(text); }  // NOLINT(google-explicit-constructor)
  InlineString(const std::string& text)                // NOLINT(google-explicit-constructor)
      : InlineString(std::string_view{text}) {}
  InlineString(const char* text)  // NOLINT(google-explicit-constructor)
      : InlineString(std::string_view{text}) {}
  InlineString(const InlineString& other) { Init(other.view()); }
  InlineString& operator=(const InlineString& other) {
    if (this != &other) Assign(other.view());
    return *this;
  }
  // Moves never allocate: heap text changes hands, inline text is copied.
  InlineString(InlineString&& other) noexcept { TakeFrom(other); }
  InlineString& operator=(InlineString&& other) noexcept {
    if (this != &other) {
      Release();
      TakeFrom(other);
    }
    return *this;
  }
  ~InlineString() { Release(); }

  InlineString& operator=(std::string_view text) {
    Assign(text);
    return *this;
  }
  InlineString& operator=(const std::string& text) { return *this = std::string_view{text}; }
  InlineString& operator=(const char* text) { return *this = std::string_view{text}; }

  std::string_view view() const { return {data(), size_}; }
  operator std::string_view() const { return view(); }  // NOLINT(google-explicit-constructor)
  std::string str() const { return std::string(view()); }
  const char* data() const { return OnHeap() ? heap_text : inline_text; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear() { Release(); }

  // One overload per kind of text, so that no comparison needs a conversion to choose.
  friend bool operator==(const InlineString& a, const InlineString& b) {
    return a.view() == b.view();
  }
  friend bool operator==(const InlineString& a, std::string_view b) { return a.view() == b; }
  friend bool operator==(const InlineString& a, const std::string& b) { return a.view() == b; }
  friend bool operator==(const InlineString& a, const char* b) {
    return a.view() == std::string_view{b};
  }
  friend std::strong_ordering operator<=>(const InlineString& a, const InlineString& b) {
    return a.view() <=> b.view();
  }
  friend std::strong_ordering operator<=>(const InlineString& a, std::string_view b) {
    return a.view() <=> b;
  }
  friend std::strong_ordering operator<=>(const InlineString& a, const std::string& b) {
    return a.view() <=> std::string_view{b};
  }
  friend std::ostream& operator<<(std::ostream& os, const InlineString& text) {
    return os << text.view();
  }

 private:
  bool OnHeap() const { return size_ > kInlineCapacity; }

  // Constructors: there is nothing to release yet.
  void Init(std::string_view text) {
    if (text.size() <= kInlineCapacity) {
      text.copy(inline_text, text.size());  // unlike memcpy, fine with a null empty view
    } else {
      heap_text = new char[text.size()];  // NOLINT(cppcoreguidelines-owning-memory)
      text.copy(heap_text, text.size());
    }
    size_ = text.size();
  }

  void Assign(std::string_view text) {
    // `text` may point into this object's own storage: copy it out before releasing that.
    if (text.size() <= kInlineCapacity) {
      std::array<char, kInlineCapacity> copy;  // NOLINT(cppcoreguidelines-pro-type-member-init)
      text.copy(copy.data(), text.size());
      Release();
      std::memcpy(inline_text, copy.data(), text.size());
      // The analyzer loses a RareString unique_ptr on the path of ObjectReference's copy
      // assignment through here; there is no raw allocation on this path.
      size_ = text.size();  // NOLINT(clang-analyzer-cplusplus.NewDeleteLeaks)
      return;
    }
    char* copy = new char[text.size()];  // NOLINT(cppcoreguidelines-owning-memory)
    text.copy(copy, text.size());
    Release();
    heap_text = copy;
    size_ = text.size();
  }

  void TakeFrom(InlineString& other) noexcept {
    size_ = other.size_;
    if (other.OnHeap()) {
      heap_text = other.heap_text;
      other.size_ = 0;
    } else {
      std::memcpy(inline_text, other.inline_text, size_);
    }
  }

  void Release() noexcept {
    if (OnHeap()) delete[] heap_text;  // NOLINT(cppcoreguidelines-owning-memory)
    size_ = 0;
  }

  std::size_t size_ = 0;
  union {
    char inline_text[kInlineCapacity];  // NOLINT(modernize-avoid-c-arrays): the union's inline half
    // owned when size_ > kInlineCapacity. Initialised so that no path, even one the compiler
    // cannot prove dead, reads indeterminate bytes (g++ -O1 warns otherwise).
    char* heap_text = nullptr;
  };
};

inline std::string operator+(const std::string& a, const InlineString& b) {
  std::string out = a;
  out += b.view();
  return out;
}
inline std::string operator+(const InlineString& a, const std::string& b) {
  std::string out = a.str();
  out += b;
  return out;
}

}  // namespace slicewright::model
