// libFuzzer target: forgiving base64 decoding and Messages-style base64 image blocks.
// Invariants: no crash or leak; the decoded size respects base64_decoded_size_bound; decoding
// the canonical re-encoding of a decoded value gives the same bytes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "recipe/image/base64.h"
#include "recipe/image/image_source.h"

using namespace di::recipe::image;

static std::string encode(const Bytes& b) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (uint8_t v : b) {
    acc = (acc << 8) | v;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += k[(acc >> bits) & 63];
    }
  }
  if (bits > 0) out += k[(acc << (6 - bits)) & 63];
  while (out.size() % 4) out += '=';
  return out;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto decoded = decode_base64(text, "f");
  if (decoded.is_ok()) {
    if (decoded->size() > base64_decoded_size_bound(text)) __builtin_trap();
    auto again = decode_base64(encode(*decoded), "f");
    if (!again.is_ok() || *again != *decoded) __builtin_trap();
  }
  if (size > 0) {
    static const char* kTypes[] = {"image/png", "image/jpeg", "image/gif", "image/webp", "text/x"};
    (void)image_source_from_base64(kTypes[data[0] % 5], text.substr(1), ImageDetail::kLow, "s");
  }
  return 0;
}
