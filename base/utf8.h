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

// The one incremental decoder of bytes that arrive in pieces (a token's bytes at a time): each
// push returns the text the bytes so far complete, never a partial character, ill-formed bytes
// as U+FFFD. The cut is a boundary of the maximal-subpart substitution, so the pieces joined
// equal utf8_lossy of all the bytes. The engine's text stream and the recipe's decoder and
// parser all assemble their text with it.
class Utf8Stream {
 public:
  std::string push(std::string_view bytes);
  // The held-back bytes (a cut-off character becomes one U+FFFD, as utf8_lossy gives); empties
  // the stream.
  std::string finish();
  void clear() { pending_.clear(); }
  size_t pending() const { return pending_.size(); }

 private:
  std::string pending_;  // an incomplete (so far valid) character
};

}  // namespace di
