// libFuzzer target: data: URL splitting and body decoding, and the conversion-time URL checks.
// Invariants: no crash or leak; a decoded body is never larger than the pre-decoding estimate
// allows (the resolver relies on that bound to refuse oversized bodies before decoding).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "recipe/image/data_url.h"
#include "recipe/image/image_source.h"

using namespace di::recipe::image;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = parse_data_url(text, "f");
  if (parsed.is_ok()) {
    const size_t estimate = estimated_decoded_size(*parsed);
    auto body = decode_data_url_body(*parsed, "f");
    if (body.is_ok() && body->size() > estimate + 2) __builtin_trap();
  }
  auto src = image_source_from_url(text, ImageDetail::kHigh, "f");
  if (src.is_ok() && src->kind == ImageSource::Kind::kUrl && !is_http_url(src->url)) __builtin_trap();
  (void)parse_media_type(text);
  return 0;
}
