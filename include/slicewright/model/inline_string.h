// BasicInlineString<N>: text kept inside the object up to N characters, longer text on the heap;
// a value type that reads as a std::string_view. InlineString (40 characters in 48 bytes) holds
// the 36-character UIDs API servers generate, so copying a UID allocates nothing (std::string
// keeps 15).
#pragma once

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <string>
#include <string_view>

namespace slicewright::model {

// The size is 32 bits and the heap pointer shares the inline bytes, so N + 4 bytes are the object
// (rounded up to 8): BasicInlineString<36> is 40 bytes, std::string's 32 plus 8 for 21 more.
template <std::size_t N>
class alignas(8) BasicInlineString final {
 public:
  static constexpr std::size_t kInlineCapacity = N;
  static_assert(N >= sizeof(char*) && N % 4 == 0, "the inline bytes hold the heap pointer");

  // The pointer half is cleared so that no path, even one the compiler cannot prove dead, reads
  // indeterminate bytes (g++ -O1 warns otherwise).
  BasicInlineString() { set_heap_text(nullptr); }  // NOLINT(cppcoreguidelines-pro-type-member-init)
  // Implicit, like std::string's: fields of this type are set from text of any kind.
  BasicInlineString(std::string_view text) { Init(text); }  // NOLINT(google-explicit-constructor)
  BasicInlineString(const std::string& text)                // NOLINT(google-explicit-constructor)
      : BasicInlineString(std::string_view{text}) {}
  BasicInlineString(const char* text)  // NOLINT(google-explicit-constructor)
      : BasicInlineString(std::string_view{text}) {}
  BasicInlineString(const BasicInlineString& other) { Init(other.view()); }
  BasicInlineString& operator=(const BasicInlineString& other) {
    if (this != &other) Assign(other.view());
    return *this;
  }
  // Moves never allocate: heap text changes hands, inline text is copied.
  BasicInlineString(BasicInlineString&& other) noexcept { TakeFrom(other); }
  BasicInlineString& operator=(BasicInlineString&& other) noexcept {
    if (this != &other) {
      Release();
      TakeFrom(other);
    }
    return *this;
  }
  ~BasicInlineString() { Release(); }

  BasicInlineString& operator=(std::string_view text) {
    Assign(text);
    return *this;
  }
  BasicInlineString& operator=(const std::string& text) { return *this = std::string_view{text}; }
  BasicInlineString& operator=(const char* text) { return *this = std::string_view{text}; }

  std::string_view view() const { return {data(), size_}; }
  operator std::string_view() const { return view(); }  // NOLINT(google-explicit-constructor)
  std::string str() const { return std::string(view()); }
  const char* data() const { return OnHeap() ? heap_text() : text_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear() { Release(); }

  // One overload per kind of text, so that no comparison needs a conversion to choose.
  friend bool operator==(const BasicInlineString& a, const BasicInlineString& b) {
    return a.view() == b.view();
  }
  friend bool operator==(const BasicInlineString& a, std::string_view b) { return a.view() == b; }
  friend bool operator==(const BasicInlineString& a, const std::string& b) { return a.view() == b; }
  friend bool operator==(const BasicInlineString& a, const char* b) {
    return a.view() == std::string_view{b};
  }
  friend std::strong_ordering operator<=>(const BasicInlineString& a, const BasicInlineString& b) {
    return a.view() <=> b.view();
  }
  friend std::strong_ordering operator<=>(const BasicInlineString& a, std::string_view b) {
    return a.view() <=> b;
  }
  friend std::strong_ordering operator<=>(const BasicInlineString& a, const std::string& b) {
    return a.view() <=> std::string_view{b};
  }
  friend std::ostream& operator<<(std::ostream& os, const BasicInlineString& text) {
    return os << text.view();
  }

 private:
  bool OnHeap() const { return size_ > kInlineCapacity; }
  // The heap pointer lives in the first inline bytes, which are 8-aligned.
  char* heap_text() const {
    char* text = nullptr;
    std::memcpy(&text, text_, sizeof text);
    return text;
  }
  // The analyzer loses a RareString unique_ptr of an enclosing ObjectReference when this memcpy
  // writes over bytes it cannot tell apart (the same false report as in Assign below).
  // NOLINTBEGIN(clang-analyzer-cplusplus.NewDeleteLeaks)
  void set_heap_text(char* text) { std::memcpy(text_, &text, sizeof text); }
  // NOLINTEND(clang-analyzer-cplusplus.NewDeleteLeaks)

  // Constructors: there is nothing to release yet.
  void Init(std::string_view text) {
    if (text.size() <= kInlineCapacity) {
      text.copy(text_, text.size());  // unlike memcpy, fine with a null empty view
    } else {
      char* heap = new char[text.size()];  // NOLINT(cppcoreguidelines-owning-memory)
      text.copy(heap, text.size());
      set_heap_text(heap);
    }
    size_ = static_cast<std::uint32_t>(text.size());
  }

  void Assign(std::string_view text) {
    // `text` may point into this object's own storage: copy it out before releasing that.
    if (text.size() <= kInlineCapacity) {
      std::array<char, kInlineCapacity> copy;  // NOLINT(cppcoreguidelines-pro-type-member-init)
      text.copy(copy.data(), text.size());
      Release();
      std::memcpy(text_, copy.data(), text.size());
      // The analyzer loses a RareString unique_ptr on the path of ObjectReference's copy
      // assignment through here; there is no raw allocation on this path.
      // NOLINTNEXTLINE(clang-analyzer-cplusplus.NewDeleteLeaks)
      size_ = static_cast<std::uint32_t>(text.size());
      return;
    }
    char* copy = new char[text.size()];  // NOLINT(cppcoreguidelines-owning-memory)
    text.copy(copy, text.size());
    Release();
    set_heap_text(copy);
    size_ = static_cast<std::uint32_t>(text.size());
  }

  void TakeFrom(BasicInlineString& other) noexcept {
    size_ = other.size_;
    if (other.OnHeap()) {
      set_heap_text(other.heap_text());
      other.size_ = 0;
    } else {
      std::memcpy(text_, other.text_, size_);
    }
  }

  void Release() noexcept {
    if (OnHeap()) delete[] heap_text();  // NOLINT(cppcoreguidelines-owning-memory)
    size_ = 0;
  }

  // Inline text, or the heap pointer when size_ > kInlineCapacity. Only the bytes below size_
  // (or the pointer) are ever read, so they are written, not cleared, on construction: a full
  // reconcile constructs these by the hundred thousand.
  // NOLINTNEXTLINE(modernize-avoid-c-arrays,cppcoreguidelines-pro-type-member-init)
  char text_[kInlineCapacity];
  std::uint32_t size_ = 0;
};

// Up to 40 characters inline in 48 bytes: UIDs, and most pod and Node names.
using InlineString = BasicInlineString<40>;

template <std::size_t N>
std::string operator+(const std::string& a, const BasicInlineString<N>& b) {
  std::string out = a;
  out += b.view();
  return out;
}
template <std::size_t N>
std::string operator+(const BasicInlineString<N>& a, const std::string& b) {
  std::string out = a.str();
  out += b;
  return out;
}

}  // namespace slicewright::model
