// libFuzzer target: the image decoders (stb_image png/jpeg/gif, libwebp) behind decode_image,
// with a small dimension limit so one input cannot allocate more than a few MiB.
// Invariants: no crash, hang or leak; a decoded image respects the limit and its buffer size.
#include <cstddef>
#include <cstdint>
#include <span>

#include "recipe/image/image_decoder.h"

using namespace di::recipe::image;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  (void)read_image_header(bytes, "f");
  auto img = decode_image(bytes, 512, "f");
  if (!img.is_ok()) return 0;
  if (img->width == 0 || img->height == 0 || img->width > 512 || img->height > 512) __builtin_trap();
  if (img->pixels.size() != size_t(img->width) * img->height * 3) __builtin_trap();
  return 0;
}
