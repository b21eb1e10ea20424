// GPT-2 bytes_to_unicode, built once as two small lookup tables.
#include "recipe/tokenizer/byte_level.h"

#include <array>

#include "recipe/tokenizer/unicode_class.h"

namespace di::recipe {
namespace {

struct Alphabet {
  std::array<uint32_t, 256> to_char{};
  std::array<int16_t, 0x144> to_byte{};  // every alphabet code point is below U+0144
  Alphabet() {
    to_byte.fill(-1);
    uint32_t next = 0x100;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      to_char[b] = printable ? static_cast<uint32_t>(b) : next++;
      to_byte[to_char[b]] = static_cast<int16_t>(b);
    }
  }
};

const Alphabet& alphabet() {
  static const Alphabet a;
  return a;
}

}  // namespace

uint32_t byte_level_char(uint8_t b) { return alphabet().to_char[b]; }

std::string byte_level_encode(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char b : bytes) append_utf8(alphabet().to_char[b], out);
  return out;
}

std::optional<std::string> byte_level_decode(std::string_view text) {
  const Alphabet& a = alphabet();
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    uint32_t cp;
    size_t len;
    // Guard against ill-formed input: only well-formed 1-2 byte sequences can be in the alphabet.
    if (c < 0x80) {
      cp = c;
      len = 1;
    } else if (c >= 0xC2 && c < 0xE0 && i + 1 < text.size() &&
               (static_cast<unsigned char>(text[i + 1]) & 0xC0) == 0x80) {
      cp = decode_utf8(text, i, &len);
    } else {
      return std::nullopt;
    }
    if (cp >= a.to_byte.size() || a.to_byte[cp] < 0) return std::nullopt;
    out.push_back(static_cast<char>(a.to_byte[cp]));
    i += len;
  }
  return out;
}

}  // namespace di::recipe
