// UTF-8 validation and boundary helpers shared by the recipe, the engine's detokenizer and the
// C ABI. Knows bytes and code points only, nothing of tokens.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace di {

// True when `s` is well-formed UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF).
bool utf8_valid(std::string_view s);

// Length of the longest prefix of `s` that ends on a code-point boundary, treating a trailing
// incomplete (but so far valid) sequence as not yet complete. Invalid bytes count as complete
// single bytes so a stream never stalls on garbage.
size_t utf8_complete_prefix(std::string_view s);

}  // namespace di

namespace di {

// Converts bytes to well-formed UTF-8, replacing each maximal ill-formed subpart with U+FFFD
// (Unicode's "substitution of maximal subparts", as Rust's from_utf8_lossy and WHATWG decode).
std::string utf8_lossy(std::string_view s);

}  // namespace di
