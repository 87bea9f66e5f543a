// SameText: string equality inlined for the reconciler's hot comparisons of short fields (IPs,
// names, UIDs, zones), shared by the planner and the Service source. Internal to src/reconcile.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace slicewright::reconcile::internal {

inline std::uint64_t Load64(const char* p) {
  std::uint64_t word = 0;
  std::memcpy(&word, p, sizeof(word));
  return word;
}

inline std::uint32_t Load32(const char* p) {
  std::uint32_t word = 0;
  std::memcpy(&word, p, sizeof(word));
  return word;
}

// Equality inlined as overlapping word loads: the compared fields (IPs, names, UIDs, zones) are
// short, and a libc memcmp call per field cost more than the comparison itself (a UID, 36
// characters, was a call per kept endpoint).
[[gnu::always_inline]] inline bool SameText(std::string_view a, std::string_view b) {
  const std::size_t n = a.size();
  if (n != b.size()) {
    return false;
  }
  const char* p = a.data();
  const char* q = b.data();
  if (n > 64) {
    return std::memcmp(p, q, n) == 0;
  }
  if (n > 16) {
    // Whole words, then the last word, which overlaps the words before it.
    std::uint64_t difference = Load64(p + n - 8) ^ Load64(q + n - 8);
    for (std::size_t i = 0; i + 8 < n; i += 8) {
      difference |= Load64(p + i) ^ Load64(q + i);
    }
    return difference == 0;
  }
  if (n >= 8) {
    return ((Load64(p) ^ Load64(q)) | (Load64(p + n - 8) ^ Load64(q + n - 8))) == 0;
  }
  if (n >= 4) {
    return ((Load32(p) ^ Load32(q)) | (Load32(p + n - 4) ^ Load32(q + n - 4))) == 0;
  }
  if (n == 0) {
    return true;
  }
  return p[0] == q[0] && p[n / 2] == q[n / 2] && p[n - 1] == q[n - 1];
}

}  // namespace slicewright::reconcile::internal
