// Hex digits as the parsers of several formats read them (JSON \u escapes, HTTP chunk sizes,
// percent-encoding, grammar and regex escapes). Knows single characters only.
#pragma once

#include <cstdint>

namespace di {

// The value of an ASCII hex digit (either case), or -1 for anything else. Takes a code point so
// that readers of decoded text and of raw bytes share it; a signed char widens to a non-digit.
constexpr int hex_digit_value(uint32_t c) {
  if (c >= '0' && c <= '9') return static_cast<int>(c - '0');
  if (c >= 'a' && c <= 'f') return static_cast<int>(c - 'a' + 10);
  if (c >= 'A' && c <= 'F') return static_cast<int>(c - 'A' + 10);
  return -1;
}

}  // namespace di
