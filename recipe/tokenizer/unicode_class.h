// Unicode character classes the pre-tokenizer patterns ask about (\p{L}, \p{M}, \p{N}, \p{P},
// \p{S}, \s) and a fast UTF-8 decoder for text already known to be valid. Knows nothing of
// patterns or tokens; the table is built once from libutf8proc's categories.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace di::recipe {

enum CharClass : uint8_t {
  kClassLetter = 1,       // \p{L}: Lu Ll Lt Lm Lo
  kClassMark = 2,         // \p{M}: Mn Mc Me
  kClassNumber = 4,       // \p{N}: Nd Nl No
  kClassPunct = 8,        // \p{P}: Pc Pd Ps Pe Pi Pf Po
  kClassSymbol = 16,      // \p{S}: Sm Sc Sk So
  kClassWhitespace = 32,  // \s as Oniguruma reads it: the White_Space property
};

// Flags of every code point 0..0x10FFFF, one byte each; built on first use (thread-safe).
const uint8_t* char_class_table();

inline uint8_t char_class(const uint8_t* table, uint32_t cp) { return table[cp]; }

// Decodes the code point at s[i] of well-formed UTF-8; *len receives its byte length.
inline uint32_t decode_utf8(std::string_view s, size_t i, size_t* len) {
  const auto b = [&](size_t k) { return static_cast<uint32_t>(static_cast<uint8_t>(s[k])); };
  const uint32_t c = b(i);
  if (c < 0x80) {
    *len = 1;
    return c;
  }
  if (c < 0xE0) {
    *len = 2;
    return ((c & 0x1F) << 6) | (b(i + 1) & 0x3F);
  }
  if (c < 0xF0) {
    *len = 3;
    return ((c & 0x0F) << 12) | ((b(i + 1) & 0x3F) << 6) | (b(i + 2) & 0x3F);
  }
  *len = 4;
  return ((c & 0x07) << 18) | ((b(i + 1) & 0x3F) << 12) | ((b(i + 2) & 0x3F) << 6) |
         (b(i + 3) & 0x3F);
}

// Appends the UTF-8 encoding of `cp` (a valid scalar value) to `out`.
void append_utf8(uint32_t cp, std::string& out);

}  // namespace di::recipe
