// Forgiving base64 decoding (WHATWG Infra §4.7).
#include "recipe/image/base64.h"

#include <array>
#include <string>

namespace di::recipe::image {
namespace {

constexpr std::array<int8_t, 256> make_table() {
  std::array<int8_t, 256> t{};
  for (auto& v : t) v = -1;
  const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (int i = 0; i < 64; ++i) t[static_cast<uint8_t>(alphabet[i])] = static_cast<int8_t>(i);
  return t;
}
constexpr std::array<int8_t, 256> kTable = make_table();

bool is_ascii_whitespace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}

}  // namespace

size_t base64_decoded_size_bound(std::string_view text) { return text.size() / 4 * 3 + 3; }

namespace {

// Pass 1 of decoding: validates and counts the significant characters.
std::string scan(std::string_view text, size_t* significant) {
  size_t chars = 0;
  size_t pad = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (is_ascii_whitespace(c)) continue;
    if (c == '=') {
      ++pad;
      continue;
    }
    if (pad > 0 || kTable[static_cast<uint8_t>(c)] < 0) {
      return "invalid base64 at offset " + std::to_string(i);
    }
    ++chars;
  }
  // Padding is only allowed to complete the last quantum to a multiple of 4 characters.
  if (pad > 2 || (pad > 0 && (chars + pad) % 4 != 0)) return "invalid base64 padding";
  if (chars % 4 == 1) {
    return "truncated base64 (" + std::to_string(chars) + " significant characters)";
  }
  *significant = chars;
  return "";
}

}  // namespace

std::string base64_problem(std::string_view text) {
  size_t chars = 0;
  return scan(text, &chars);
}

Result<Bytes> decode_base64(std::string_view text, std::string_view field) {
  size_t chars = 0;
  if (std::string problem = scan(text, &chars); !problem.empty()) {
    return Status::invalid_argument(std::string(field) + ": " + problem);
  }
  Bytes out;
  out.reserve(chars / 4 * 3 + 2);
  uint32_t acc = 0;
  int bits = 0;
  for (const char c : text) {
    const int8_t v = kTable[static_cast<uint8_t>(c)];
    if (v < 0) continue;  // whitespace and padding, validated above
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<uint8_t>(acc >> bits));
      acc &= (1u << bits) - 1;
    }
  }
  return out;
}

}  // namespace di::recipe::image
