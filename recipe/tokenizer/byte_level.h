// The GPT-2 byte-level alphabet: every byte is written as one printable code point so that
// vocab and merges are text. Converts both ways; knows nothing of vocabularies.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace di::recipe {

// The code point that stands for byte `b` (bytes '!'..'~', 0xA1..0xAC, 0xAE..0xFF stand for
// themselves; the other 68 map in order to U+0100, U+0101, ...).
uint32_t byte_level_char(uint8_t b);

// Maps raw bytes to their alphabet spelling (UTF-8).
std::string byte_level_encode(std::string_view bytes);

// Maps an alphabet spelling back to raw bytes; nullopt when a character is outside the
// alphabet (an added token such as "<｜User｜>" is then taken as its own UTF-8 bytes).
std::optional<std::string> byte_level_decode(std::string_view text);

}  // namespace di::recipe
