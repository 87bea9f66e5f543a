// Go fmt renderings that upstream error messages embed (%q of a string, %#v of a []string), so our
// messages match Kubernetes' byte for byte. Private to the labels library. Pure; thread-safe.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace slicewright::labels::internal {

// Go's strconv.Quote: double-quoted, with \a \b \f \n \r \t \v \\ \" escapes, \xNN for other ASCII
// controls and for bytes that are not valid UTF-8, \uNNNN / \UNNNNNNNN for non-printable runes.
// Printability of non-ASCII runes approximates unicode.IsPrint: C1 controls, non-ASCII spaces,
// format characters, private use, surrogates and noncharacters are escaped; unassigned code points
// print as themselves (Go would escape them).
std::string GoQuote(std::string_view text);

// Go's %#v of a []string: []string{"a", "b"}. An empty list prints as []string(nil), since every
// upstream path that can fail on an empty list (LabelSelectorAsSelector copying matchExpressions
// values with append([]string(nil), ...)) holds a nil slice there.
std::string GoStringSlice(std::span<const std::string> values);

}  // namespace slicewright::labels::internal
